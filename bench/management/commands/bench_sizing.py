"""``manage.py bench_sizing``: bytes per row and per inbox (the work is in bench.sizing)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from bench import sizing


def _gb(value: float) -> str:
    return f"{value / 2**30:,.1f} GB"


class Command(BaseCommand):
    help = (
        "Bytes per row of the main tables (sample rows written, then rolled back or deleted) "
        "and Redis memory of one cached inbox at the cap, then the database, Redis, "
        "Citus workers and Redis masters for 1 million and 100 million users under a "
        "written-down per-user model (bench/sizing.py). See docs/SCALING.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sample", type=int, default=sizing.SAMPLE, help="rows per table, then removed"
        )
        parser.add_argument("--follows", type=int, default=sizing.PerUser.follows)
        parser.add_argument("--posts", type=int, default=sizing.PerUser.posts)
        parser.add_argument("--likes", type=int, default=sizing.PerUser.likes)
        parser.add_argument("--notifications", type=int, default=sizing.PerUser.notifications)
        parser.add_argument("--active-share", type=float, default=sizing.PerUser.active_share)

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("bench_sizing needs PostgreSQL (DATABASE_URL=postgres://...).")
        if not 0 < options["active_share"] <= 1:
            raise CommandError("--active-share is a fraction of the users, above 0, at most 1.")
        model = sizing.PerUser(
            follows=options["follows"],
            posts=options["posts"],
            likes=options["likes"],
            notifications=options["notifications"],
            active_share=options["active_share"],
        )
        if options["sample"] < 1:
            raise CommandError("--sample is a number of rows, at least 1.")
        per_row = sizing.bytes_per_row(self.stdout.write, options["sample"])
        try:
            inbox_bytes, encoding = sizing.cached_inbox_bytes()
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n| table | bytes per row (heap, indexes, TOAST) |\n|---|---|")
        for table, size in per_row.items():
            self.stdout.write(f"| `{table}` | {size:,.0f} |")
        self.stdout.write(
            f"\nA cached inbox of {settings.FEED_INBOX_CAP} keys: "
            f"{inbox_bytes:,} bytes of Redis ({encoding})."
        )
        self.stdout.write(f"\nModel per user: {model}")
        self.stdout.write(
            "\n| users | database | Redis | Citus workers | Redis masters |\n|---|---|---|---|---|"
        )
        for users in (1_000_000, 100_000_000):
            s = sizing.size_for(users, per_row, inbox_bytes, model)
            self.stdout.write(
                f"| {users:,} | {_gb(s.database_bytes)} | {_gb(s.redis_bytes)} "
                f"| {s.workers} | {s.redis_masters} |"
            )
