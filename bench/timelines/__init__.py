"""The timeline benchmark: fan-out, home feed reads and rebuilds.

Each figure is printed beside a baseline measured in the same run, on the same
world and the same machine:

1. Fan-out of one post to every follower of ``bench_author``, through a real
   Celery worker (or in process with ``worker=False``), against the raw limit
   of the machine: one INSERT ... SELECT of the same rows and one Lua call a
   chunk pushing to the same Redis keys.
2. Home feed pages (``timelines.home.home_feed``), with the reader's
   Redis cache warm and dropped, against the engine's per-author pull
   (``pull_keys``) and the plain query a Django developer would write, each
   + ``hydrate``, for the same reader and cursor.
3. ``timelines.home.rebuild`` of an inactive reader, against one
   set-based INSERT ... SELECT that writes the same inbox.

The world lives in a dedicated PostgreSQL database and is reused between runs
(the marker is the user ``bench_author``, whose bio records the world's size).
It is written in bulk (COPY and INSERT ... SELECT), keeping the invariants the
services keep: Follower and Followee mirror each other, the counters on the
user rows equal the rows, post ids come from posts.ids.

Modules: ``spec`` (the world's size and names, the run's options), ``world``
(building or reusing the world), ``worker`` (the Celery worker subprocess),
``fanout``, ``reads`` and ``rebuild`` (figures 1 to 3), ``report`` (timings,
tables, verdicts) and ``runner`` (the whole run).
"""

from bench.timelines.report import Table
from bench.timelines.runner import run
from bench.timelines.spec import FULL, QUICK, Options, WorldError, WorldSpec

__all__ = ["FULL", "QUICK", "Options", "Table", "WorldError", "WorldSpec", "run"]
