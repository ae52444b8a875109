"""``manage.py soak``: issue 10's soak benchmark (the work is in bench.soak)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from bench import soak


class Command(BaseCommand):
    help = (
        "Soak test: N HTTP clients of mixed traffic for M minutes against gunicorn and a "
        "Celery worker started here (cache and broker on private redis-servers), with a "
        "schedule of faults (worker SIGKILL, cache restart, gunicorn worker SIGKILL); then "
        "drains the queue, sweeps, and checks every accepted post exists and every feed "
        "equals the pull reference. Runs only on a database whose name contains 'soak' "
        "(it adds users and posts); see docs/BENCHMARKS.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--clients", type=int, default=6, help="client threads (6)")
        parser.add_argument("--minutes", type=float, default=2.0, help="length of the run (2)")
        parser.add_argument("--seconds", type=float, help="length in seconds (short runs)")
        parser.add_argument("--no-faults", action="store_true", help="traffic only")
        parser.add_argument("--seed", type=int, default=10)

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("soak needs PostgreSQL (DATABASE_URL=postgres://...).")
        name = connection.settings_dict["NAME"]
        if not soak.database_is_for_soak(name):
            raise CommandError(
                f"Database {name!r}: soak adds users and posts, so it only runs on a "
                "database whose name contains 'soak' (e.g. feed_soak)."
            )
        seconds = options["seconds"] or options["minutes"] * 60
        if options["clients"] < 1 or seconds <= 0:
            raise CommandError("--clients must be at least 1 and the run longer than 0 s")
        spec = soak.SoakSpec(
            clients=options["clients"],
            seconds=seconds,
            faults=not options["no_faults"],
            seed=options["seed"],
        )
        report = soak.run(spec, log=self.stdout.write)
        self.stdout.write("Soak report")
        for line in report.lines():
            self.stdout.write("  " + line)
        if report.lost or report.differing:
            raise CommandError(
                f"{len(report.lost)} lost posts, {len(report.differing)} feeds differing"
            )
