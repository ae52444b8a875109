"""Count the instructions redis-server spends on the inbox caches' scripts (callgrind).

Wall time and CPU seconds on these shared machines swing 2x from one run to
the next; an instruction count does not (valgrind counts them the same with
the other core busy). Starts a private redis-server under callgrind, fills
caches, and prints the server's instructions per operation, called through
``timelines.home._cache`` as the tree it runs from calls it. Run it from two
checkouts in turn to compare them::

    DATABASE_URL=... SECRET_KEY=... python -m bench.redis_instructions [readers] [reads]

``readers`` (10,000) are pushed one key, half of them cached with 100 keys;
each read runs ``reads`` (200) times on a cached inbox of 400 keys. Needs valgrind and
redis-server; the database gives only the cache generation.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.processes import free_port

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")

ENTRIES = 100
READ_ENTRIES = 400


class CallgrindRedis:
    """A redis-server under valgrind --tool=callgrind, whose counters can be zeroed
    and read between operations."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.port = directory, free_port()
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/out.%p"]
        server = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*valgrind, *server, "--hz", "1", "--dir", str(directory)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def wait_ready(self, client) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                client.ping()
                return
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise SystemExit("redis-server under callgrind did not start") from None
                time.sleep(0.2)

    def count(self, operation: Callable[[], object]) -> int:
        """Instructions the server ran during ``operation``."""
        pid = str(self.process.pid)
        subprocess.run(["callgrind_control", "--zero", pid], check=True, capture_output=True)
        operation()
        before = set(self.directory.glob("out.*"))
        subprocess.run(["callgrind_control", "--dump", pid], check=True, capture_output=True)
        deadline = time.monotonic() + 30
        while True:  # the dump is written when the server next wakes
            for dump in set(self.directory.glob("out.*")) - before:
                found = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(), re.M)
                if found:
                    return int(found.group(1))
            if time.monotonic() > deadline:
                raise SystemExit("callgrind wrote no dump")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def main(readers: int, reads: int) -> list[str]:
    for tool in ("valgrind", "callgrind_control", "redis-server"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    with tempfile.TemporaryDirectory(prefix="redis-instructions-") as directory:
        server = CallgrindRedis(Path(directory))
        os.environ["REDIS_URL"] = server.url()
        os.environ["SERVICE_TIMEOUT_SECONDS"] = "60"  # a call runs ~50x slower under valgrind
        import django

        django.setup()
        from timelines.home import _cache as cache

        try:
            redis = cache.client()
            server.wait_ready(redis)
            return _measure(server, redis, cache, readers, reads)
        finally:
            server.stop()


def _measure(server: CallgrindRedis, redis, cache, readers: int, reads: int) -> list[str]:
    gen = cache.generation()
    now = cache.sentinel(redis)
    keys = [f"0RGN{n:04d}00000G00" for n in reversed(range(READ_ENTRIES))]  # newest first
    pipe = redis.pipeline(transaction=False)
    for reader in range(1, readers + 1, 2):
        pipe.rpush(cache.inbox_key(reader, gen), now, *keys[:ENTRIES])
    pipe.execute()
    reader_ids = range(1, readers + 1)
    # New keys a little newer than the cached ones: their first bytes are the same,
    # as a new post's time is close to the inbox's newest.
    warm, new = f"0RGN{READ_ENTRIES:04d}00000G00", f"0RGN{READ_ENTRIES + 1:04d}00000G00"
    cache.push(reader_ids, [warm], cap=800)  # loads the scripts
    push = server.count(lambda: cache.push(reader_ids, [new], cap=800))
    remove = server.count(lambda: cache.remove(reader_ids, [new]))
    if cache.generation() != gen:
        raise SystemExit("a push or removal failed (the caches were invalidated): see the log")

    reader = readers + 1
    redis.rpush(cache.inbox_key(reader, gen), now, *keys)
    inbox = cache.CachedInbox(reader, gen)
    page = 3 * 21  # a page's first window: feed.WINDOW_FACTOR pages of 21
    calls = {
        "page 1 (older, 63 keys)": lambda: inbox.older(None, page),
        "page 5 (older below the 84th key)": lambda: inbox.older(keys[83], page),
        "older below a key not cached": lambda: inbox.older(keys[83][:-1] + "1", page),
        "newer (21 above the 11th key)": lambda: inbox.newer(keys[10], 21),
        "count_newer (the new-posts poll)": lambda: inbox.count_newer(keys[10], 99),
    }
    lines = [
        f"push of one key to {readers:,} readers (half cached, {ENTRIES} keys): "
        f"{push / readers:,.0f} instructions a reader",
        f"removal of that key: {remove / readers:,.0f} instructions a reader",
    ]
    for name, read in calls.items():
        if read() is None:
            raise SystemExit(f"{name}: a cache miss")
        total = server.count(lambda read=read: [read() for _ in range(reads)])
        lines.append(f"{name}: {total / reads:,.0f} instructions a call")
    return lines


if __name__ == "__main__":
    args = [int(arg) for arg in sys.argv[1:3]]
    print("\n".join(main(*(args + [10_000, 200][len(args) :]))))
