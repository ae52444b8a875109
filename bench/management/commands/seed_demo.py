"""``manage.py seed_demo``: a demo world to click through or load-test."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from bench import demo
from bench.bulk import ProgressBar, no_progress


class _TqdmOutput:
    """Lets tqdm draw on ``self.stdout``, whose ``write`` would add a newline."""

    def __init__(self, stdout: Any) -> None:
        self._stdout = stdout

    def write(self, text: str) -> None:
        self._stdout.write(text, ending="")

    def flush(self) -> None:
        self._stdout.flush()

    def isatty(self) -> bool:
        return self._stdout.isatty()


class Command(BaseCommand):
    help = (
        "Create a demo world: users with a skewed (Zipf) follow graph and posts over the "
        "past three weeks, and the login demo / demo-password-123 (every generated "
        "account has that password: for development only). Idempotent: when the demo "
        "account exists the command reports so and exits 0 without writing anything; "
        "to build a different world, start from an empty database. Rows are written in "
        "bulk and no signals are sent: inboxes are built by pull on first read."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--users",
            type=int,
            default=demo.DEFAULT_USERS,
            help=f"accounts to create, the demo one included (default {demo.DEFAULT_USERS})",
        )
        parser.add_argument(
            "--posts-per-user",
            type=float,
            default=demo.DEFAULT_POSTS_PER_USER,
            help=f"average posts per account (default {demo.DEFAULT_POSTS_PER_USER})",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=demo.DEFAULT_SEED,
            help="random seed: the same seed and sizes give the same world",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        users, posts_per_user = options["users"], options["posts_per_user"]
        if users < 2:
            raise CommandError("--users must be at least 2")
        if posts_per_user < 0:
            raise CommandError("--posts-per-user cannot be negative")
        verbosity = options["verbosity"]
        output = _TqdmOutput(self.stdout)
        interactive = verbosity >= 1 and self.stdout.isatty()

        def progress(stage: str, total: int) -> ProgressBar:
            if interactive:
                return tqdm(total=total, desc=stage, unit=" rows", file=output, leave=False)
            if verbosity >= 2:
                self.stdout.write(f"Writing {total:,} {stage}")
            return no_progress(stage, total)

        report = demo.build_world(
            users=users, posts_per_user=posts_per_user, seed=options["seed"], progress=progress
        )
        if report.created:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo world: {report.users:,} users, {report.follows:,} follows, "
                    f"{report.posts:,} posts in {report.seconds:.1f} s ({report.writer}); "
                    f"{report.life.likes:,} likes, {report.life.replies} replies, "
                    f"{report.life.reposts} reposts, {report.life.reports} reports; "
                    f"{report.life.suggestions} people to follow suggested to demo."
                )
            )
        else:
            self.stdout.write(
                f"The demo world is already there (user {report.username!r} exists): "
                "nothing written."
            )
        self.stdout.write(f"Log in as: {report.username}")
        self.stdout.write(f"Password:  {report.password}")
        self.stdout.write(
            f"Moderator: {report.moderator} / {report.moderator_password} (at /admin/)"
        )
        if report.created:
            self.stdout.write(
                f"{report.username} follows {report.demo_following} accounts and has "
                f"{report.demo_followers} followers."
            )
