"""The whole run: build or reuse the world, measure the three figures, sum them up."""

import os

from django.db import connection

from bench.timelines.fanout import fan_out_figure
from bench.timelines.reads import home_figures
from bench.timelines.rebuild import rebuild_figure
from bench.timelines.report import Table
from bench.timelines.spec import AUTHOR, READER, Log, Options, WorldSpec
from bench.timelines.wide import wide_figure
from bench.timelines.world import count_rows, ensure_world


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# The server's settings that move the write figures most: a fan-out touches an index
# page of every follower's inbox (docs/BENCHMARKS.md, "PostgreSQL's settings").
_SERVER_SETTINGS = ["shared_buffers", "max_wal_size", "checkpoint_timeout", "wal_compression"]


def _server_settings() -> str:
    with connection.cursor() as db:
        db.execute(
            "SELECT name, current_setting(name) FROM pg_settings"
            " WHERE name = ANY(%s) ORDER BY name",
            [_SERVER_SETTINGS],
        )
        return ", ".join(f"{name} {value}" for name, value in db.fetchall())


def run(spec: WorldSpec, options: Options, *, rebuild_world: bool, log: Log) -> list[Table]:
    """Build or reuse the world, measure the three figures, and sum them up."""
    world = ensure_world(spec, rebuild=rebuild_world, log=log)
    how = "built" if world.built else "reused"
    log(f"world {how} in {world.seconds:.1f} s")
    # The followees as a list, not a join: on Citus their posts are on other shards.
    read = count_rows(
        "SELECT count(*) FROM posts_post WHERE author_id IN "
        "(SELECT followee_id FROM relations_followee WHERE user_id = %s)",
        [world.reader_id],
    )
    tables = [
        Table(
            title="World",
            header=("what", "count"),
            rows=[
                (f"followers of {AUTHOR} (active, inbox kept)", f"{world.followers:,}"),
                (f"accounts followed by {READER} and by each idle reader", f"{spec.following:,}"),
                ("accounts with posts", f"{spec.authors:,}"),
                ("posts", f"{world.posts:,}"),
                (
                    f"posts by {READER}'s followees (share of all posts)",
                    f"{read:,} ({read / max(world.posts, 1):.2%})",
                ),
                ("idle readers (inactive, no inbox)", f"{len(world.idle_ids):,}"),
            ],
            notes=[
                f"{how} in {world.seconds:.1f} s; {connection.settings_dict['NAME']} "
                f"on PostgreSQL {connection.pg_version // 10000}; "
                f"{os.cpu_count()} CPUs, load average {_load()} at the start",
                f"PostgreSQL: {_server_settings()}",
            ],
        )
    ]
    fan_out, fan_out_verdict = fan_out_figure(world, options, log)
    home, home_verdicts = home_figures(world, options, log)
    rebuild, rebuild_verdicts = rebuild_figure(world, options, log)
    wide, wide_verdicts = wide_figure(world, options, log)
    summary = Table(
        title="Summary",
        header=("figure", "measured", "baseline", "ratio", "target", "met"),
        rows=[
            (v.figure, v.measured, v.baseline, v.ratio, v.target, "yes" if v.met else "MISSED")
            for v in [fan_out_verdict, *home_verdicts, *rebuild_verdicts, *wide_verdicts]
        ],
        notes=[f"load average {_load()} at the end (other work on the machine skews figures)"],
    )
    return [*tables, fan_out, home, rebuild, wide, summary]
