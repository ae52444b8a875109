"""Rebuild home-feed inboxes by pull: one reader, every active reader, or those not built;
or (``--verify``) hold them to the pull model and repair only what differs."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet
from tqdm import tqdm

from accounts import unique_names
from accounts.models import User
from timelines import home, outbox, tasks


class Command(BaseCommand):
    help = (
        "Rebuild inboxes from the people each reader follows. Safe while the site serves "
        "traffic: a rebuild marks the inbox as kept first, so fan-outs running meanwhile "
        "push to it, and readers see the old inbox until the new one is complete."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--user", action="append", metavar="USERNAME", help="repeatable")
        who.add_argument("--all", action="store_true", help="every reader active recently")
        who.add_argument(
            "--sample",
            type=int,
            metavar="N",
            help="about N kept inboxes, from a random reader on (with --verify, what the "
            "periodic self-check does)",
        )
        who.add_argument(
            "--missing",
            action="store_true",
            help="active readers whose inbox is not built (never built, or released "
            "after a long absence): what would otherwise be rebuilt on their next visit",
        )
        parser.add_argument(
            "--include-inactive",
            action="store_true",
            help=f"with --all/--missing, also readers not seen for "
            f"{settings.FEED_INACTIVE_DAYS} days (they are rebuilt on return anyway)",
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="queue Celery tasks instead (recorded in the outbox: none is lost)",
        )
        parser.add_argument(
            "--verify",
            action="store_true",
            help="rebuild nothing: hold each inbox (table and cache) to the pull model, "
            "write the posts it lacks, drop a cache that lacks some, and say how many",
        )
        parser.add_argument("--dry-run", action="store_true", help="say who, change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["sample"] is not None and options["sample"] < 1:
            raise CommandError("--sample must be at least 1")
        if options["verify"]:
            self._verify(options)
            return
        readers = self._readers(options)
        total = readers.count()
        if options["dry_run"]:
            names = list(readers.values_list("username", flat=True)[:20])
            more = f" and {total - len(names)} more" if total > len(names) else ""
            self.stdout.write(f"Would rebuild {total} inboxes: {', '.join(names)}{more}")
            return
        if not total:
            self.stdout.write("No inbox to rebuild.")
            return
        ids = readers.values_list("pk", flat=True).iterator(chunk_size=2000)
        pulled = 0
        for user_id in tqdm(ids, total=total, unit="inbox", file=self.stdout, disable=total < 2):
            if options["queue"]:
                outbox.record(tasks.rebuild, user_id)  # swept if its message is lost
            else:
                pulled += home.rebuild(user_id)
        verb = "Queued" if options["queue"] else f"Rebuilt ({pulled} entries pulled)"
        self.stdout.write(self.style.SUCCESS(f"{verb}: {total} inboxes."))

    def _verify(self, options: dict[str, Any]) -> None:
        ids = (
            home.sample_kept(options["sample"])
            if options["sample"] is not None
            else list(self._readers(options).values_list("pk", flat=True))
        )
        checked = differed = missing = cache_missing = 0
        for user_id in ids:
            result = home.verify(user_id)
            if result is None:
                continue
            checked += 1
            if result.differed:
                differed += 1
                missing += result.missing
                cache_missing += result.cache_missing
                self.stdout.write(
                    f"inbox of user {user_id}: {result.missing} posts missing from the "
                    f"table, {result.cache_missing} from the cache: repaired"
                )
        style = self.style.WARNING if differed else self.style.SUCCESS
        self.stdout.write(
            style(
                f"Verified {checked} inboxes ({len(ids) - checked} not kept or with a change "
                f"on its way): {differed} differed from the pull model ({missing} posts "
                f"missing from tables, {cache_missing} from caches), now repaired."
            )
        )

    def _readers(self, options: dict[str, Any]) -> QuerySet[User]:
        if options["sample"] is not None:
            return User.objects.filter(pk__in=home.sample_kept(options["sample"])).order_by("pk")
        if options["user"]:
            wanted = {name.lower() for name in options["user"]}
            found = unique_names.user_ids_named(wanted)
            missing = wanted - found.keys()
            if missing:
                raise CommandError(f"No such user: {', '.join(sorted(missing))}")
            return User.objects.filter(pk__in=found.values()).order_by("pk")
        users = User.objects.order_by("pk")
        if not options["include_inactive"]:
            users = users.filter(last_active_at__gte=home.active_since())
        if options["missing"]:
            users = users.exclude(pk__in=home.built_reader_ids())
        return users
