"""A PostgreSQL cluster of the soak's own: initdb in a temporary directory, on a free port.

The soak restarts and crashes its database, so it cannot be a server anyone
else uses; and its checks must read the very database the site wrote. The
server refuses to run as root, so as root every tool runs as the ``postgres``
user (``runuser``) in a directory it owns.
"""

import os
import pwd
import shutil
import subprocess
import tempfile
from contextlib import suppress
from pathlib import Path

from bench.processes import free_port

DATABASE = "feed_soak"
# Where Debian puts the server's tools (they are not on the path there).
DEBIAN_BINARIES = Path("/usr/lib/postgresql")


def _binaries() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent  # initdb is beside the real pg_ctl, not its link
    versions = sorted(
        (p for p in DEBIAN_BINARIES.glob("*/bin") if (p / "pg_ctl").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not versions:
        raise RuntimeError("PostgreSQL's server tools (initdb, pg_ctl) are not installed")
    return versions[-1]


class Postgres:
    def __init__(self) -> None:
        self.bin = _binaries()
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="soak-pg-"))
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            owner = pwd.getpwnam("postgres")
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
        self.data = self.dir / "data"
        self.log_file = self.dir / "postgresql.log"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, tool: str, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{tool} failed ({result.returncode}): {result.stderr.decode(errors='replace')}"
            )

    def _server_options(self) -> str:
        # fsync off: the faults kill processes, never the machine, and the kernel
        # keeps whatever a killed server wrote; on a shared machine it spares
        # the other runs the flushes.
        return f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"

    def create(self) -> None:
        """initdb, start, and create the empty database (the caller migrates it)."""
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", DATABASE)

    def start(self) -> None:
        # -l: the server's output goes to its log, never to this process's pipes.
        self._run(
            "pg_ctl", "start", "-w", "-t", "120", "-D", str(self.data), "-l", str(self.log_file),
            "-o", self._server_options(),
        )  # fmt: skip

    # --- faults ----------------------------------------------------------------

    def restart_fast(self) -> None:
        """``pg_ctl restart -m fast``: open transactions rolled back, sessions cut, then back."""
        self._run(
            "pg_ctl", "restart", "-m", "fast", "-w", "-t", "120", "-D", str(self.data),
            "-l", str(self.log_file), "-o", self._server_options(),
        )  # fmt: skip

    def crash(self) -> None:
        """``pg_ctl stop -m immediate`` (no shutdown checkpoint: crash recovery), then start."""
        self._run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", str(self.data))
        self.start()

    def running(self) -> bool:
        try:
            self._run("pg_ctl", "status", "-D", str(self.data), timeout=10)
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        return True

    def destroy(self) -> None:
        with suppress(RuntimeError, subprocess.TimeoutExpired):  # not running
            self._run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", str(self.data))
        shutil.rmtree(self.dir, ignore_errors=True)
