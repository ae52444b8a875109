"""What the benchmarks that start processes of their own share: a free port, this
process's database as a URL for the child's environment, and a Celery worker whose
broker hands a dead worker's tasks out again soon."""

import socket
from urllib.parse import quote

from django.conf import settings


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url() -> str:
    """The default database as DATABASE_URL gives it to a child process."""
    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{quote(db['NAME'], safe='')}"


# ``python -c WORKER_BOOTSTRAP <worker options>``: the plain ``celery worker`` with
# the broker's transport options of WORKER_TRANSPORT_OPTIONS (JSON) on top of the
# settings', which read only the visibility timeout.
WORKER_BOOTSTRAP = """
import json, os, sys
from feed_project.celery import app
app.conf.broker_transport_options = {
    **app.conf.broker_transport_options, **json.loads(os.environ["WORKER_TRANSPORT_OPTIONS"]),
}
sys.exit(app.worker_main(["worker", *sys.argv[1:]]))
"""
# A dead worker's unacknowledged tasks are looked for every second, and the restore
# lock a killed worker leaves expires in 5 s, not kombu's 5 minutes.
SOON_REDELIVERED = {
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 5,
}
