"""``manage.py bench_sizing``: issue 9's sizing (the work is in bench.sizing)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from bench import sizing


def _gb(value: float) -> str:
    return f"{value / 2**30:,.1f} GB"


class Command(BaseCommand):
    help = (
        "Bytes per row of every table in this database (a bench world: run bench_timelines "
        "first) and Redis memory of one cached inbox at the cap, then the database, Redis, "
        "Citus workers and Redis masters for 1 million and 100 million users under a "
        "written-down per-user model (bench/sizing.py). See docs/SCALING.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
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
        measured = sizing.measure_tables(self.stdout.write)
        try:
            inbox_bytes, encoding = sizing.cached_inbox_bytes()
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n| table | rows | bytes | bytes/row |\n|---|---|---|---|")
        for m in measured:
            per_row = f"{m.per_row:,.0f}" if m.per_row else f"(< {sizing.MIN_ROWS:,} rows)"
            self.stdout.write(f"| `{m.table}` | {m.rows:,} | {m.bytes:,} | {per_row} |")
        self.stdout.write(
            f"\nA cached inbox of {sizing.settings.FEED_INBOX_CAP} keys: "
            f"{inbox_bytes:,} bytes of Redis ({encoding})."
        )
        per_row = {m.table: m.per_row for m in measured if m.per_row}
        missing = sorted(set(sizing.ROWS_PER_USER) - set(per_row))
        if missing:
            self.stdout.write(f"Not sized (too few rows here to measure): {', '.join(missing)}")
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
