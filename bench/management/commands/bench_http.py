"""``manage.py bench_http``: the site's pages over HTTP (the work is in bench.http)."""

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import http as bench
from bench import http_api

# --api: five runs of each, as the API's target is judged at the median of five.
API_ROUNDS = 5


class Command(BaseCommand):
    help = (
        "Serve the site with gunicorn (DEBUG off, rate limits off) beside a bare Django page "
        "of 20 items, drive each page with wrk signed in as the demo reader, and print req/s, "
        "p50, p99 and CPU per request (gunicorn workers, PostgreSQL backends, Redis). Runs "
        "only on a dedicated database whose name contains 'bench'; see docs/BENCHMARKS.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = bench.RunOptions()
        parser.add_argument(
            "--quick",
            action="store_true",
            help="a tiny world, one round of 1 s a page (smoke test)",
        )
        parser.add_argument(
            "--seconds",
            type=float,
            default=defaults.seconds,
            help="seconds of load per page per round",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=None,
            help=f"rounds; each drives every page in turn ({defaults.rounds}; "
            f"{API_ROUNDS} with --api)",
        )
        parser.add_argument(
            "--api",
            action="store_true",
            help="the client API's home timeline (bearer token) against the HTML home page "
            "(session cookie), same reader, and a status's CPU in process",
        )
        parser.add_argument(
            "--connections", type=int, default=defaults.connections, help="wrk's open connections"
        )
        parser.add_argument(
            "--workers", type=int, default=defaults.workers, help="gunicorn workers"
        )
        parser.add_argument(
            "--worker-class",
            default=defaults.worker_class,
            choices=["sync", "gthread"],
            help="gunicorn worker class",
        )
        parser.add_argument(
            "--threads", type=int, default=defaults.threads, help="threads per worker (gthread)"
        )
        parser.add_argument(
            "--rebuild-world",
            action="store_true",
            help="empty the bench database's users and posts and build it again",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            defaults = bench.RunOptions()
            bench.check_database()
            spec = bench.QUICK if options["quick"] else bench.FULL
            run = bench.RunOptions(
                seconds=1 if options["quick"] else options["seconds"],
                rounds=1
                if options["quick"]
                else options["rounds"] or (API_ROUNDS if options["api"] else defaults.rounds),
                warmup=1 if options["quick"] else bench.RunOptions.warmup,
                connections=options["connections"],
                workers=options["workers"],
                worker_class=options["worker_class"],
                threads=options["threads"],
            )
            call_command("migrate", verbosity=0)
            self.stdout.write(f"bench_http: load average {bench.load()} at the start")
            world = bench.ensure_world(
                spec, rebuild=options["rebuild_world"], log=self.stdout.write
            )
            pages = http_api.targets(world) if options["api"] else None
            figures = bench.run(world, spec, run, log=self.stdout.write, pages=pages)
        except bench.HttpBenchError as exc:
            raise CommandError(str(exc)) from exc
        if options["api"]:
            cost = http_api.status_cost(world, iterations=20 if options["quick"] else None)
            lines = http_api.report(figures, run, cost)
        else:
            lines = bench.report(figures, run)
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(f"Load average {bench.load()} at the end.")
