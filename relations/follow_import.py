"""Importing follows from a CSV: the ``following.csv`` of a data export.

Two steps, so that a file is either refused whole or applied row by row
with every row accounted for:

1. In the request, ``read`` checks the file as a whole: at most
   ``MAX_BYTES`` and ``MAX_ROWS`` accounts, UTF-8 text, CSV, a header line
   with a ``username`` column (other columns, such as ``followed_at``, are
   ignored). Anything else is ``Refused`` with a sentence for the form, and
   nothing is followed. ``start`` saves the listed accounts as a
   ``FollowImport`` row and queues the task on commit.
2. In a task (a follow costs a transaction and two queued tasks: a
   thousand are too many for one request), ``follow_all`` follows each
   listed account through ``services.follow`` (its own transaction,
   counters, signals, feed backfill: the normal follow), counting progress
   on the row, and reports every line: followed, followed already, or why
   not (not a username, listed twice, no such account, yourself, a block
   either way). A database failure midway stops the import and the report
   says which lines were applied; importing the file again finishes it, as
   accounts followed already are skipped (so does a task run again after a
   worker died).

The view is rate-limited (``RATELIMIT_IMPORT_FOLLOWS``), one import at a
time, so at most ``MAX_ROWS`` follows a file and a few files an hour.
"""

import csv
import io
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta

from django.core.files.uploadedfile import UploadedFile
from django.db import DatabaseError, transaction
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from accounts.tasks import enqueue_on_commit
from feed_project.refusals import Invalid
from relations import services, tasks
from relations.models import Followee, FollowImport

MAX_ROWS = 1000
MAX_BYTES = 256 * 1024  # 1,000 lines of a username and a time take about 50 KB
USERNAME = re.compile(r"[A-Za-z0-9_]{1,30}")
# An import not finished this long after it began lost its task: another may start.
STALE_AFTER = timedelta(hours=1)
# Progress is written at most about once a second.
PROGRESS_SECONDS = 1.0
UNFINISHED = (FollowImport.Status.QUEUED, FollowImport.Status.RUNNING)


class ImportUnderWay(Exception):
    """An import of this person's is being applied already."""


class Refused(Invalid, ValueError):
    """A file this import does not take; the message says why, for the form (or, as
    any ``refusals.Invalid``, for another front door's 400)."""


@dataclass(frozen=True)
class Entry:
    line: int
    username: str


@dataclass(frozen=True)
class Problem:
    line: int
    username: str
    reason: str


@dataclass
class Report:
    followed: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Set when the import stopped before the end (a database failure): what happened.
    stopped: str = ""


def _text(upload: UploadedFile) -> str:
    if upload.size is not None and upload.size > MAX_BYTES:
        raise Refused(
            f"The file is {upload.size / 1024:.0f} KB: at most {MAX_BYTES // 1024} KB "
            f"({MAX_ROWS:,} accounts). Split it into smaller files."
        )
    upload.seek(0)
    data = upload.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Refused(f"The file is over {MAX_BYTES // 1024} KB. Split it into smaller files.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Refused("The file is not UTF-8 text: choose the following.csv of an export.") from exc
    if "\x00" in text:
        raise Refused("The file is not a CSV file: choose the following.csv of an export.")
    return text


def read(upload: UploadedFile) -> list[Entry]:
    """The accounts a CSV of follows lists, with their line numbers; ``Refused`` if malformed."""
    reader = csv.reader(io.StringIO(_text(upload), newline=""))
    header: list[str] | None = None
    entries: list[Entry] = []
    line = 1  # where the next row starts (a quoted cell may span lines)
    try:
        for row in reader:
            start, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in row]
                if "username" not in header:
                    raise Refused(
                        "The first line must name the columns, one of them username "
                        "(as in the following.csv of an export)."
                    )
                column = header.index("username")
                continue
            name = row[column].strip() if column < len(row) else ""
            entries.append(Entry(line=start, username=name))
            if len(entries) > MAX_ROWS:
                raise Refused(f"The file lists more than {MAX_ROWS:,} accounts: split it.")
    except csv.Error as exc:
        raise Refused(f"Line {line} is not valid CSV ({exc}).") from exc
    if not entries:
        raise Refused("The file lists nobody to follow.")
    return entries


def _checked(entries: list[Entry], report: Report) -> list[Entry]:
    """Entries that are usernames, each once; the others go to the report."""
    seen: dict[str, int] = {}
    valid = []
    for entry in entries:
        name = entry.username.removeprefix("@")
        if not USERNAME.fullmatch(name):
            report.problems.append(Problem(entry.line, entry.username, "not a username"))
        elif name.lower() in seen:
            reason = f"listed already, on line {seen[name.lower()]}"
            report.problems.append(Problem(entry.line, entry.username, reason))
        else:
            seen[name.lower()] = entry.line
            valid.append(Entry(entry.line, name))
    return valid


def _people(names: list[str]) -> dict[str, User]:
    """Lower-cased name -> the account, for names of accounts one may follow now."""
    ids = unique_names.user_ids_named(names)
    found = User.objects.filter(
        pk__in=ids.values(), is_active=True, erased_at__isnull=True, deletion_due_at__isnull=True
    )
    by_id = {person.pk: person for person in found}
    return {name: by_id[pk] for name, pk in ids.items() if pk in by_id}


def follow_all(
    *, user: User, entries: list[Entry], tick: Callable[[int], None] = lambda done: None
) -> Report:
    """Follow every account ``entries`` list, one normal follow each; what happened to each.

    ``tick(n)`` is told how many lines are done, after each one.
    """
    report = Report()
    valid = _checked(entries, report)
    people = _people([entry.username for entry in valid])
    following = set(
        Followee.objects.filter(
            user_id=user.pk, followee_id__in=[p.pk for p in people.values()]
        ).values_list("followee_id", flat=True)
    )
    for n, entry in enumerate(valid, start=len(entries) - len(valid) + 1):
        tick(n)
        person = people.get(entry.username.lower())
        if person is None:
            report.problems.append(Problem(entry.line, entry.username, "no such account"))
        elif person.pk == user.pk:
            report.problems.append(Problem(entry.line, entry.username, "that is you"))
        elif person.pk in following:
            report.already.append(person.username)
        else:
            try:
                created = services.follow(follower=user, followee=person)
            except services.BlockedError:
                reason = "one of you blocks the other"
                report.problems.append(Problem(entry.line, entry.username, reason))
                continue
            except DatabaseError:
                report.stopped = (
                    f"The import stopped at line {entry.line} (a database error): the accounts "
                    "listed as followed below were followed, the lines after it were not. "
                    "Import the same file again to finish: accounts you follow are skipped."
                )
                break
            (report.followed if created else report.already).append(person.username)
    report.problems.sort(key=lambda problem: problem.line)
    return report


# --- the import as a row and a task ----------------------------------------------------


def latest(user: User) -> FollowImport | None:
    return FollowImport.objects.filter(user_id=user.pk).order_by("-created_at").first()


def report_of(follow_import: FollowImport) -> Report | None:
    saved = follow_import.report
    if not isinstance(saved, dict):
        return None
    problems = [Problem(**problem) for problem in saved.get("problems", [])]
    return Report(
        followed=saved.get("followed", []),
        already=saved.get("already", []),
        problems=problems,
        stopped=saved.get("stopped", ""),
    )


def start(*, user: User, entries: list[Entry]) -> FollowImport:
    """Save the accounts a file lists and queue their import; ``ImportUnderWay`` if one is."""
    now = timezone.now()
    with transaction.atomic():
        # Two uploads at once: the second waits here, then sees the first's row.
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).values("pk").first()
        mine = FollowImport.objects.filter(user_id=user.pk)
        if mine.filter(status__in=UNFINISHED, created_at__gt=now - STALE_AFTER).exists():
            raise ImportUnderWay
        mine.delete()  # the last report is replaced by this one's
        follow_import = FollowImport.objects.create(
            user_id=user.pk,
            created_at=now,
            entries=[[entry.line, entry.username] for entry in entries],
        )
        enqueue_on_commit(tasks.apply_follow_import, user.pk, follow_import.pk)
    return follow_import


def run(*, user_id: int, import_id: int) -> bool:
    """Apply a saved import (the task); False when there is none left to apply."""
    rows = FollowImport.objects.filter(user_id=user_id, pk=import_id, status__in=UNFINISHED)
    follow_import = rows.first()
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if follow_import is None or user is None:
        return False
    rows.update(status=FollowImport.Status.RUNNING)
    last = [0.0]

    def tick(done: int) -> None:
        if time.monotonic() - last[0] >= PROGRESS_SECONDS:
            FollowImport.objects.filter(user_id=user_id, pk=import_id).update(done=done)
            last[0] = time.monotonic()

    entries = [Entry(line=line, username=name) for line, name in follow_import.entries]
    report = follow_all(user=user, entries=entries, tick=tick)
    FollowImport.objects.filter(user_id=user_id, pk=import_id).update(
        status=FollowImport.Status.DONE,
        done=len(entries),
        report=asdict(report),
        finished_at=timezone.now(),
    )
    return True
