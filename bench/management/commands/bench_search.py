"""``manage.py bench_search``: the search benchmark (the work is in bench.search)."""

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from tqdm import tqdm

from bench import search as bench
from bench import tags as bench_tags


class Command(BaseCommand):
    help = (
        "Benchmark search over 1,000,000 posts (English and Chinese) in a dedicated "
        "PostgreSQL database (its name must contain 'searchbench', e.g. feed_searchbench): "
        "p50/p99 of posts.search beside a plain icontains scan, and optionally a pg_trgm "
        "index. The world is built once (COPY) and reused; see docs/BENCHMARKS.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--quick", action="store_true", help="a tiny world and few samples (smoke test)"
        )
        parser.add_argument("--samples", type=int, default=50, help="timed calls per figure")
        parser.add_argument(
            "--trigram",
            action="store_true",
            help="also time icontains with a pg_trgm GIN index (built, then rolled back)",
        )
        parser.add_argument(
            "--tags",
            action="store_true",
            help="time the tag page instead (/tags/<tag>/): tag rows are added "
            "to the world once (bench.tags)",
        )
        parser.add_argument(
            "--rebuild-world",
            action="store_true",
            help="empty the posts and users of the bench database and build the world again",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("bench_search needs PostgreSQL (DATABASE_URL=postgres://...).")
        name = connection.settings_dict["NAME"]
        if "searchbench" not in name:
            raise CommandError(
                f"Database {name!r}: bench_search empties the users and posts tables, so it "
                "only runs on a database whose name contains 'searchbench'."
            )
        spec = bench.QUICK if options["quick"] else bench.FULL
        samples = 5 if options["quick"] else options["samples"]
        call_command("migrate", verbosity=0)
        if options["rebuild_world"] or not bench.world_exists(spec):
            bench.build_world(
                spec,
                log=self.stdout.write,
                progress=lambda stage, total: tqdm(
                    total=total, desc=stage, unit="row", file=self.stderr._out
                ),
            )
        else:
            self.stdout.write(f"Reusing the world: {spec.marker}")
        if options["tags"]:
            if options["rebuild_world"] or not bench_tags.tags_exist():
                bench_tags.build_tags(
                    log=self.stdout.write,
                    progress=lambda stage, total: tqdm(
                        total=total, desc=stage, unit="row", file=self.stderr._out
                    ),
                )
            bench_tags.run(samples=samples, log=self.stdout.write)
            return
        bench.run(samples=samples, trigram=options["trigram"], log=self.stdout.write)
