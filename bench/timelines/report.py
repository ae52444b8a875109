"""Measuring and reporting: timings, query counts, the tables and verdicts a run returns."""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext


@dataclass(frozen=True)
class Timing:
    """Milliseconds of each sample."""

    ms: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.ms)

    @property
    def p99(self) -> float:
        if len(self.ms) < 2:
            return self.ms[0]
        return statistics.quantiles(self.ms, n=100, method="inclusive")[98]


def measure(
    fn: Callable[[], Any], *, samples: int, warmup: int, setup: Callable[[], Any] | None = None
) -> Timing:
    """Time ``fn`` ``samples`` times after ``warmup`` untimed calls; ``setup`` is untimed."""
    ms = []
    for n in range(warmup + samples):
        if setup is not None:
            setup()
        started = time.perf_counter_ns()
        fn()
        elapsed = time.perf_counter_ns() - started
        if n >= warmup:
            ms.append(elapsed / 1e6)
    return Timing(ms)


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


def timing_row(label: str, timing: Timing, queries: int) -> tuple[str, str, str, str]:
    """A table row of a timed call: label, p50, p99, queries per call."""
    return (label, format_ms(timing.p50), format_ms(timing.p99), str(queries))
