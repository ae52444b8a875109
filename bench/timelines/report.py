"""Measuring and reporting: timings, query counts, the tables and verdicts a run returns."""

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench.timelines import cpu


@dataclass(frozen=True)
class CallCpu:
    """CPU milliseconds a call: this process's (the calls alone), and PostgreSQL's and
    Redis's over the timed calls (server-wide, the untimed ``setup`` included)."""

    app: float
    postgres: float
    redis: float

    def __str__(self) -> str:
        return f"{self.app:.2f} + {self.postgres:.2f} + {self.redis:.2f} ms"


@dataclass(frozen=True)
class Timing:
    """Milliseconds of each sample, and CPU milliseconds a call."""

    ms: list[float]
    cpu: CallCpu | None = None

    @property
    def p50(self) -> float:
        return statistics.median(self.ms)

    @property
    def p99(self) -> float:
        if len(self.ms) < 2:
            return self.ms[0]
        return statistics.quantiles(self.ms, n=100, method="inclusive")[98]


Call = tuple[Callable[[], Any], Callable[[], Any] | None]  # a call and its untimed setup


def measure(
    fn: Callable[[], Any], *, samples: int, warmup: int, setup: Callable[[], Any] | None = None
) -> Timing:
    """Time ``fn`` ``samples`` times after ``warmup`` untimed calls; ``setup`` is untimed."""
    return measure_together([(fn, setup)], samples=samples, warmup=warmup, rounds=1)[0]


def measure_together(calls: list[Call], *, samples: int, warmup: int, rounds: int) -> list[Timing]:
    """``measure`` of each call, taken in turn over ``rounds`` rounds, each round a
    share of every call's samples: a slow spell of the machine (they last seconds
    here) falls on a figure and its baseline alike, not on one of them."""
    rounds = max(1, min(rounds, samples))
    for fn, setup in calls:
        for _ in range(warmup):
            if setup is not None:
                setup()
            fn()
    ms: list[list[float]] = [[] for _ in calls]
    app_ns = [0] * len(calls)
    servers = [cpu.Cpu(0.0, 0.0, 0.0)] * len(calls)
    for round_ in range(rounds):
        share = samples // rounds + (round_ < samples % rounds)
        for i, (fn, setup) in enumerate(calls):
            before = cpu.sample(os.getpid())
            for _ in range(share):
                if setup is not None:
                    setup()
                started, started_cpu = time.perf_counter_ns(), time.process_time_ns()
                fn()
                ms[i].append((time.perf_counter_ns() - started) / 1e6)
                app_ns[i] += time.process_time_ns() - started_cpu
            servers[i] += cpu.sample(os.getpid()) - before
    if not samples:
        return [Timing(times) for times in ms]
    return [
        Timing(
            times,
            CallCpu(
                ns / 1e6 / samples, spent.postgres * 1e3 / samples, spent.redis * 1e3 / samples
            ),
        )
        for times, ns, spent in zip(ms, app_ns, servers, strict=True)
    ]


def count_queries(fn: Callable[[], Any], setup: Callable[[], Any] | None = None) -> int:
    if setup is not None:
        setup()
    with CaptureQueriesContext(connection) as queries:
        fn()
    return len(queries)


def measure_and_count(
    fn: Callable[[], Any], *, samples: int, warmup: int, setup: Callable[[], Any] | None = None
) -> tuple[Timing, int]:
    """``measure``, then ``count_queries`` of one more call with the same ``setup``."""
    timing = measure(fn, samples=samples, warmup=warmup, setup=setup)
    return timing, count_queries(fn, setup)


@dataclass
class Table:
    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    figure: str
    measured: str
    baseline: str
    ratio: str
    target: str
    met: bool


def format_ms(value: float) -> str:
    return f"{value:,.2f} ms" if value < 100 else f"{value:,.0f} ms"


# The header of a table of timing_row rows, after its first column's name.
TIMING_HEADER = ("p50", "p99", "queries/call", "CPU/call: app + PostgreSQL + Redis")


def timing_row(label: str, timing: Timing, queries: int) -> tuple[str, ...]:
    """A table row of a timed call: label, p50, p99, queries and CPU per call."""
    return (label, format_ms(timing.p50), format_ms(timing.p99), str(queries), str(timing.cpu))
