"""``manage.py createmoderator NAME``: a moderator account, with no e-mail asked for."""

import getpass
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.moderators import make_moderator


class Command(BaseCommand):
    help = (
        "Make NAME a moderator (staff with the moderation permissions), creating the "
        "account when missing. The password comes from MODERATOR_PASSWORD, else a prompt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--noinput", action="store_true", help="Never prompt (MODERATOR_PASSWORD or none)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = os.environ.get("MODERATOR_PASSWORD") or None
        if password is None and not options["noinput"]:
            password = getpass.getpass("Password (empty: keep it, or no login by password): ")
            password = password or None
        username = options["username"]
        try:
            user, created = make_moderator(username=username, password=password)
        except ValueError as exc:  # a username the model refuses
            raise CommandError(str(exc)) from exc
        verb = "Created" if created else "Made"
        self.stdout.write(f"{verb} moderator @{user.username}: log in at /admin/.")
