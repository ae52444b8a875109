"""Say clearly which service the test suite needs is not reachable."""

import os
import sys
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis

MISSING = []
database_url = os.environ["DATABASE_URL"]
redis_url = os.environ["REDIS_URL"]
# pytest-django creates the test database itself: only the server must answer,
# so connect to the maintenance database whatever name the URL gives.
server_url = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))
try:
    psycopg.connect(server_url, connect_timeout=3).close()
except psycopg.Error as exc:
    where = urlsplit(database_url)
    MISSING.append(
        f"PostgreSQL at {where.hostname}:{where.port or 5432} ({exc.__class__.__name__}: {exc}).\n"
        "    Start it with:"
        " pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
    )
try:
    redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
except redis.RedisError as exc:
    MISSING.append(
        f"Redis at {redis_url} ({exc}).\n"
        "    Start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ''"
    )
if MISSING:
    print("make test needs these services, which cannot be reached:", file=sys.stderr)
    for line in MISSING:
        print(f"  - {line}", file=sys.stderr)
    sys.exit(1)
print("PostgreSQL and Redis are reachable.")
