"""A PostgreSQL server of a test's own, on a free port, that the test may stop and start.

The shared server on 5432 is never touched. Stopping is ``pg_ctl stop``: ``fast``
(connections are ended, a clean shutdown, as a restart does) or ``immediate``
(every process killed at once, as a crash: the next start recovers from the
WAL). The cluster runs without fsync: its data is thrown away afterwards, and
the machine does not crash with it.

PostgreSQL refuses to run as root: as root, its programs run as the ``postgres``
user (``runuser``), in a directory that user owns.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.processes import free_port

START_SECONDS = 30
# Trust on loopback, no fsync of the new files: a throwaway cluster.
INITDB_OPTIONS = ["-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale", "C.UTF-8"]


def _bin_dir() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent  # Debian links them from /usr/lib/postgresql
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not versions:
        pytest.fail("PostgreSQL's server programs are not installed (apt-get install postgresql)")
    return versions[-1].parent


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PrivatePostgres:
    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.data = directory / "data"
        self.port = port
        self.bin = _bin_dir()

    def url(self, name: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), *args]),
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=START_SECONDS,
        )

    def start(self) -> None:
        """Start and return once it accepts connections (after recovery, if any)."""
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
            # No fsync (the kernel still has every write when the server is killed);
            # commits still wait for their WAL write, so a crash loses none of them.
            " -c fsync=off -c full_page_writes=off"
        )
        self._pg_ctl("-w", "-t", str(START_SECONDS), "-o", options, "-l", str(self.log), "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown; ``immediate``: as a crash."""
        self._pg_ctl("-w", "-m", mode, "stop")

    @property
    def log(self) -> Path:
        return self.directory / "server.log"

    def create_database(self, name: str) -> None:
        where = ["-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        subprocess.run(
            [str(self.bin / "createdb"), *where, name],
            check=True,
            timeout=START_SECONDS,
        )


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """initdb a throwaway cluster in a directory of its own, start it on a free port,
    and remove it all afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="feed-postgres-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres")
        server = PrivatePostgres(directory, free_port())
        subprocess.run(
            _as_postgres([str(server.bin / "initdb"), "-D", str(server.data), *INITDB_OPTIONS]),
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=START_SECONDS * 2,
        )
        server.start()
        try:
            yield server
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):  # stopped already
                server.stop("immediate")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
