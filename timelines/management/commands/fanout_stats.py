"""Fan-out lag (post commit to last inbox written) over recent posts, and what is stuck."""

import statistics
from datetime import timedelta
from typing import Any

from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from timelines.models import FanOut
from timelines.tasks import VERIFIED


class Command(BaseCommand):
    help = "Print fan-out lag percentiles over the last N posts, and unfinished fan-outs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--last", type=int, default=1000, help="how many posts (default 1000)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["last"] < 1:
            self.stderr.write("--last must be at least 1")
            return
        recent = list(
            FanOut.objects.filter(finished_at__isnull=False)
            .order_by("-created_at")
            .values_list("created_at", "finished_at", "mode", "recipients")[: options["last"]]
        )
        stuck = FanOut.objects.filter(
            finished_at__isnull=True, created_at__lt=timezone.now() - timedelta(minutes=2)
        ).count()
        if not recent:
            self.stdout.write(f"No finished fan-out yet. Unfinished after 2 minutes: {stuck}")
            self._verified()
            return
        lags = sorted((done - queued).total_seconds() * 1000 for queued, done, *_ in recent)
        cuts = statistics.quantiles(lags, n=100) if len(lags) > 1 else lags * 99
        pushed = [r for r in recent if r[2] == FanOut.Mode.PUSH]
        self.stdout.write(
            f"Last {len(recent)} fan-outs ({len(pushed)} pushed, "
            f"{len(recent) - len(pushed)} left to pull): lag p50 {cuts[49]:.0f} ms, "
            f"p99 {cuts[98]:.0f} ms, max {lags[-1]:.0f} ms; "
            f"{sum(r[3] for r in recent)} inboxes written."
        )
        self.stdout.write(f"Unfinished after 2 minutes: {stuck}")
        self._verified()

    def _verified(self) -> None:
        last = cache.get(VERIFIED)
        if last is None:
            self.stdout.write("Inbox self-check: not run yet.")
            return
        self.stdout.write(
            f"Inbox self-check at {last['at']}: {last['differed']} of {last['checked']} "
            f"inboxes differed from the pull model and were repaired ({last['missing']} "
            f"posts missing from the table, {last['cache_missing']} from caches)."
        )
