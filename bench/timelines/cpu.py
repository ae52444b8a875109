"""CPU seconds spent by the worker, PostgreSQL and Redis over a stretch of a run.

Read from /proc (Linux): utime + stime of each process. PostgreSQL's figure is
every ``postgres`` process plus what the postmaster has reaped (cutime + cstime:
backends that exited, such as those of connections closed after each task), so
it includes other databases' work on a shared server; Redis's is INFO cpu,
server-wide too. Both are noted as such beside the figures.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from timelines.home import _cache as cache

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cpu:
    worker: float
    postgres: float
    redis: float

    def __sub__(self, other: "Cpu") -> "Cpu":
        return Cpu(
            self.worker - other.worker, self.postgres - other.postgres, self.redis - other.redis
        )

    def __add__(self, other: "Cpu") -> "Cpu":
        return Cpu(
            self.worker + other.worker, self.postgres + other.postgres, self.redis + other.redis
        )

    @property
    def total(self) -> float:
        return self.worker + self.postgres + self.redis


def _stat(pid: str) -> tuple[str, int, float, float] | None:
    """(command, parent pid, own CPU s, reaped children's CPU s) of one process."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    command = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): ppid is field 4, utime..cstime fields 14-17.
    ppid = int(fields[1])
    own = (int(fields[11]) + int(fields[12])) / _TICK
    reaped = (int(fields[13]) + int(fields[14])) / _TICK
    return command, ppid, own, reaped


def own_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process so far; None when it is gone."""
    stat = _stat(str(pid))
    return None if stat is None else stat[2]


def _processes() -> dict[int, tuple[str, int, float, float]]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            found[int(entry)] = stat
    return found


def sample(worker_pid: int) -> Cpu:
    """CPU seconds so far of the worker (its process and its children), PostgreSQL, Redis."""
    procs = _processes()
    worker = {worker_pid}
    for pid, (_, ppid, _, _) in procs.items():
        if ppid in worker:
            worker.add(pid)
    worker_s = sum(procs[pid][2] for pid in worker if pid in procs)
    postgres = {pid for pid, stat in procs.items() if stat[0] == "postgres"}
    postgres_s = sum(procs[pid][2] for pid in postgres)
    postgres_s += sum(procs[pid][3] for pid in postgres if procs[pid][1] not in postgres)
    redis_s = 0.0
    redis = cache.client()
    if redis is not None:
        info = redis.info("cpu")
        redis_s = float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    return Cpu(worker_s, postgres_s, redis_s)
