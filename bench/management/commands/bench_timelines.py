"""``manage.py bench_timelines``: the timeline benchmark (the work is in bench.timelines)."""

import argparse
import os
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import timelines as bench


def split_database_url(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--database-url`` of a ``manage.py bench_timelines ...`` command line, and the
    command line without it."""
    option = argparse.ArgumentParser(add_help=False)
    option.add_argument("--database-url")
    found, rest = option.parse_known_args(argv[2:])
    return found.database_url, [*argv[:2], *rest]


class Command(BaseCommand):
    help = (
        "Benchmark the timeline engine on a large world in a dedicated PostgreSQL database: "
        "fan-out of one post to 100,000 followers through a real Celery worker, home feed "
        "pages cached and uncached beside the pull model, and rebuilds of inactive readers. "
        "Each figure is printed beside a baseline measured in the same run. The world is "
        "built once (bulk SQL) and reused; see docs/BENCHMARKS.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        full, quick = bench.FULL, bench.QUICK
        parser.add_argument(
            "--quick",
            action="store_true",
            help=f"a small world ({quick.users:,} users, following {quick.following}) and "
            "few samples: a smoke test of the command, not a benchmark",
        )
        parser.add_argument(
            "--users", type=int, help=f"followers of bench_author (default {full.users:,})"
        )
        parser.add_argument(
            "--following",
            type=int,
            help=f"accounts each reader follows (default {full.following:,})",
        )
        parser.add_argument(
            "--authors", type=int, help=f"accounts with posts (default {full.authors:,})"
        )
        parser.add_argument(
            "--idle-readers",
            type=int,
            help=f"inactive readers to rebuild (default {full.idle_readers})",
        )
        parser.add_argument("--samples", type=int, help="timed calls per home feed read (200)")
        parser.add_argument("--rebuild-runs", type=int, help="timed rebuilds (20)")
        parser.add_argument("--fanouts", type=int, help="timed fan-outs, after one warm-up (3)")
        parser.add_argument(
            "--live-caches",
            type=int,
            help="followers whose Redis cache is live before the fan-out (default: half)",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="fan out in process (eager tasks) instead of through a Celery worker",
        )
        parser.add_argument(
            "--rebuild-world",
            action="store_true",
            help="drop the bench world and build it again (the database must hold nothing else)",
        )
        parser.add_argument(
            "--inbox-entries",
            type=int,
            help="fill each follower's inbox to about this many entries first (default 100)",
        )
        parser.add_argument(
            "--wide-following",
            type=int,
            help="accounts the wide reader follows for the first-page figure (default 5,000)",
        )
        parser.add_argument(
            "--filler-posts",
            type=int,
            help="posts by accounts no measured reader follows, for a sparse world (default "
            f"{full.filler_posts:,}: the followees' posts are 0.05%% of all; 0 for a dense world)",
        )
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds per fan-out")
        parser.add_argument(
            "--database-url",
            help="the database to run on, such as a Citus coordinator "
            "(postgres://user@host:port/name): DATABASE_URL for this run and its worker",
        )

    def run_from_argv(self, argv: list[str]) -> None:
        # The settings read DATABASE_URL when the process starts, and the worker the
        # bench starts inherits its environment: run again with it set.
        url, rest = split_database_url(argv)
        if url is not None and os.environ.get("DATABASE_URL") != url:
            environment = {**os.environ, "DATABASE_URL": url}
            os.execve(sys.executable, [sys.executable, *rest], environment)
        super().run_from_argv(argv)

    def handle(self, *args: Any, **options: Any) -> None:
        url = options["database_url"]
        if url is not None and os.environ.get("DATABASE_URL") != url:
            raise CommandError(
                "--database-url is read when the process starts: give it on the command "
                "line (manage.py bench_timelines --database-url ...) or set DATABASE_URL"
            )
        base = bench.QUICK if options["quick"] else bench.FULL
        spec = bench.WorldSpec(
            users=options["users"] or base.users,
            following=options["following"] or base.following,
            authors=options["authors"] or base.authors,
            idle_readers=options["idle_readers"] or base.idle_readers,
            filler_posts=(
                base.filler_posts if options["filler_posts"] is None else options["filler_posts"]
            ),
        )
        try:
            spec.check()
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        quick = options["quick"]
        run = bench.Options(
            samples=options["samples"] or (10 if quick else 200),
            warmup=2 if quick else 20,
            rebuild_runs=options["rebuild_runs"] or (3 if quick else 20),
            rebuild_warmup=1 if quick else 3,
            fanouts=options["fanouts"] or (1 if quick else 3),
            fanout_warmup=0 if quick else 1,
            live_caches=options["live_caches"],
            worker=not options["no_worker"],
            timeout=options["timeout"],
            inbox_entries=options["inbox_entries"] or (20 if quick else 100),
            wide_following=options["wide_following"] or (300 if quick else 5000),
        )
        started = time.perf_counter()

        def progress(line: str) -> None:
            if options["verbosity"] >= 1:
                self.stdout.write(f"[{time.perf_counter() - started:6.1f} s] {line}")

        try:
            tables = bench.run(spec, run, rebuild_world=options["rebuild_world"], log=progress)
        except bench.WorldError as exc:
            raise CommandError(str(exc)) from exc
        for table in tables:
            self.stdout.write("")
            self._print(table)
        self.stdout.write("")
        self.stdout.write(f"Total {time.perf_counter() - started:.0f} s.")

    def _print(self, table: bench.Table) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(table.title))
        widths = [
            max(len(cells[i]) for cells in [table.header, *table.rows])
            for i in range(len(table.header))
        ]

        def line(cells: tuple[str, ...]) -> str:
            first = cells[0].ljust(widths[0])
            rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
            return "  ".join([first, *rest]).rstrip()

        self.stdout.write(line(table.header))
        self.stdout.write("  ".join("-" * width for width in widths))
        for row in table.rows:
            self.stdout.write(line(row))
        for note in table.notes:
            self.stdout.write(f"  * {note}")
