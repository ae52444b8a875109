"""``manage.py soak``: the site in its production shape under traffic and faults, then checked
(the work is in bench.soak)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import soak


class Command(BaseCommand):
    help = (
        "Soak test: starts its own PostgreSQL cluster, cache and broker redis-servers, a "
        "Celery worker, beat and gunicorn on free ports; N HTTP clients post, read, follow "
        "and unfollow, like, repost and delete for --seconds while eight faults come in "
        "turn (PostgreSQL restart and crash, cache and broker paused, broker killed with "
        "and without its file, worker killed, cache killed); then waits for the outbox to "
        "drain and checks every accepted post, every home feed over HTTP against the pull "
        "reference, 5xx, latency and delivery lag. Exits 1 when a target is missed. It never "
        "touches the configured database; see docs/BENCHMARKS.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = soak.SoakSpec()
        parser.add_argument(
            "--clients", type=int, default=defaults.clients, help=f"clients ({defaults.clients})"
        )
        parser.add_argument(
            "--seconds", type=float, default=defaults.seconds,
            help=f"length of the traffic ({defaults.seconds:g})",
        )  # fmt: skip
        parser.add_argument("--no-faults", action="store_true", help="traffic only")
        parser.add_argument(
            "--inbox-cap", type=int, default=defaults.inbox_cap,
            help=f"FEED_INBOX_CAP of the site ({defaults.inbox_cap})",
        )  # fmt: skip
        parser.add_argument(
            "--pause-seconds", type=float, default=defaults.pause_seconds,
            help=f"how long each SIGSTOP lasts ({defaults.pause_seconds:g})",
        )  # fmt: skip
        parser.add_argument("--seed", type=int, default=defaults.seed)

    def handle(self, *args: Any, **options: Any) -> None:
        spec = soak.SoakSpec(
            clients=options["clients"],
            seconds=options["seconds"],
            faults=not options["no_faults"],
            seed=options["seed"],
            inbox_cap=options["inbox_cap"],
            pause_seconds=options["pause_seconds"],
        )
        try:
            spec.check()
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        report = soak.run(spec, log=self.stdout.write)
        self.stdout.write("Soak report")
        for line in report.lines():
            self.stdout.write("  " + line)
        if missed := report.missed():
            raise CommandError("targets missed: " + "; ".join(missed))
