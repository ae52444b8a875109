"""What the benchmarks that start processes of their own share: a free port, and this
process's database as a URL for the child's environment."""

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
