"""Data exports: asked for on /settings/export/, prepared by a task with its progress on
the page, downloaded through a signed link, deleted when old.

- ``request_export`` (the page's POST) makes an ``Export`` row and queues
  ``accounts.build_export`` on commit; one export at a time per person, and a
  new one retires the previous archive.
- ``build`` (the task) writes the zip (accounts.archive: every app's sections,
  JSON and CSV, post images copied in) to a temporary file, counting
  ``done`` of ``total`` on the row as it goes, then saves it through
  ``STORAGES["default"]`` (as post images are: the file system, or object
  storage through django-storages) as ``exports/<user id>/<random>.zip``.
- The page's download link is signed (``django.core.signing``, salt below)
  and names the user and the export: it works for its owner only, for
  ``EXPORT_LINK_MAX_AGE_SECONDS``, and only while the archive is kept
  (``EXPORT_RETENTION_DAYS``). The page makes a fresh link at each visit.
- ``accounts.delete_expired_exports`` (Celery beat, hourly) deletes the file,
  then the row, of archives past their time, and fails exports whose task
  was lost; account erasure retires every export of the account at once.
"""

import contextlib
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.db import transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from accounts import archive, tasks
from accounts.models import Export, User
from feed_project.refusals import NotFound

SALT = "accounts.exports.download"
# An export not finished this long after it was asked for lost its task (a
# worker died, the broker lost the message): the sweep marks it failed, and
# the person may ask again.
STALE_AFTER = timedelta(hours=6)
# Progress is written at most this often (seconds), and at least every
# PROGRESS_EVERY items: a few writes a second at most, whatever the size.
PROGRESS_SECONDS = 1.0
PROGRESS_EVERY = 500
# A failed export stays on the page this long, saying so.
FAILED_SHOWN = timedelta(days=1)
UNFINISHED = (Export.Status.QUEUED, Export.Status.RUNNING)


class ExportUnderWay(Exception):
    """An export of this person is being prepared already."""


def storage() -> Storage:
    return storages["default"]


def latest(user: User) -> Export | None:
    """The person's newest export still kept, if any: the page shows it."""
    return (
        Export.objects.filter(user_id=user.pk)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .order_by("-created_at")
        .first()
    )


def request_export(*, user: User) -> Export:
    """Queue a new archive of ``user``'s data; ``ExportUnderWay`` if one is being made."""
    now = timezone.now()
    with transaction.atomic():
        # Two clicks at once: the second waits here, then sees the first's row.
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).values("pk").first()
        under_way = Export.objects.filter(
            user_id=user.pk, status__in=UNFINISHED, created_at__gt=now - STALE_AFTER
        )
        if under_way.exists():
            raise ExportUnderWay
        retire_all(user_id=user.pk, now=now)
        export = Export.objects.create(user_id=user.pk, created_at=now)
        tasks.enqueue_on_commit(tasks.build_export, user.pk, export.pk)
    return export


def retire_all(*, user_id: int, now: datetime | None = None) -> int:
    """Every export of the user expires now; the files go once the transaction commits."""
    now = now or timezone.now()
    retired = Export.objects.filter(user_id=user_id).update(
        expires_at=now, status=_finished_or_failed()
    )
    if retired:
        tasks.enqueue_on_commit(tasks.delete_exports_of, user_id)
    return retired


def _finished_or_failed() -> Case:
    """READY stays READY; an unfinished export is failed (its task then drops its file)."""
    return Case(
        When(status=Export.Status.READY, then=Value(Export.Status.READY)),
        default=Value(Export.Status.FAILED),
    )


@dataclass
class _Progress:
    user_id: int
    export_id: int
    done: int = 0
    written: int = 0
    at: float = 0.0

    def tick(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.done - self.written >= PROGRESS_EVERY or now - self.at >= PROGRESS_SECONDS:
            Export.objects.filter(user_id=self.user_id, pk=self.export_id).update(done=self.done)
            self.written, self.at = self.done, now


def _total(user_id: int) -> int:
    total = 0
    for section in archive.sections():
        total += section.count(user_id)
        if section.file_count is not None:
            total += section.file_count(user_id)
    return total


def build(*, user_id: int, export_id: int) -> bool:
    """Write the archive of an export; False when there is none to make (done, retired).

    Idempotent: a run after a crash starts again from the beginning.
    """
    started = Export.objects.filter(user_id=user_id, pk=export_id, status__in=UNFINISHED)
    if not started.update(status=Export.Status.RUNNING, done=0, total=_total(user_id)):
        return False
    progress = _Progress(user_id=user_id, export_id=export_id, at=time.monotonic())
    now = timezone.now()
    with tempfile.TemporaryFile() as target:
        writer = archive.ArchiveWriter(target, storage(), progress.tick)
        try:
            writer.readme(now, [section.name for section in archive.sections()])
            for section in archive.sections():
                writer.section(section, user_id)
        finally:
            writer.close()  # before the temporary file closes, whatever happened
        size = target.tell()
        target.seek(0)
        name = storage().save(
            f"exports/{user_id}/{secrets.token_urlsafe(16)}.zip", File(target, name="export.zip")
        )
    finished = timezone.now()
    ready = Export.objects.filter(user_id=user_id, pk=export_id, status=Export.Status.RUNNING)
    if not ready.update(
        status=Export.Status.READY,
        file=name,
        size=size,
        done=progress.done,
        total=max(progress.done, 1),
        finished_at=finished,
        expires_at=finished + timedelta(days=settings.EXPORT_RETENTION_DAYS),
    ):
        storage().delete(name)  # retired meanwhile (a new export, an erasure)
        return False
    return True


def fail(*, user_id: int, export_id: int) -> None:
    """The task failed: the page says so for a day (the person may ask again at once)."""
    now = timezone.now()
    Export.objects.filter(user_id=user_id, pk=export_id, status__in=UNFINISHED).update(
        status=Export.Status.FAILED, finished_at=now, expires_at=now + FAILED_SHOWN
    )


# --- the download link ----------------------------------------------------------------


def download_token(export: Export) -> str:
    return signing.dumps([export.user_id, export.pk], salt=SALT)


class LinkExpired(Exception):
    """The link's signature is good but older than EXPORT_LINK_MAX_AGE_SECONDS."""


NO_SUCH_ARCHIVE = "No such archive."


def export_for_download(*, token: str, user: User) -> Export:
    """The ready, kept export this link names, if ``user`` owns it.

    NotFound otherwise (a bad link, someone else's archive, one not ready or
    deleted): an archive is its owner's alone, and to anyone else it does not
    exist. Raises ``LinkExpired`` for a link that was good and is too old.
    """
    try:
        user_id, export_id = signing.loads(
            token, salt=SALT, max_age=settings.EXPORT_LINK_MAX_AGE_SECONDS
        )
    except signing.SignatureExpired as exc:
        raise LinkExpired from exc
    except (signing.BadSignature, TypeError, ValueError) as exc:
        raise NotFound(NO_SUCH_ARCHIVE) from exc
    if not isinstance(user_id, int) or not isinstance(export_id, int) or user_id != user.pk:
        raise NotFound(NO_SUCH_ARCHIVE)
    export = Export.objects.filter(
        user_id=user.pk,
        pk=export_id,
        status=Export.Status.READY,
        expires_at__gt=timezone.now(),
    ).first()
    if export is None:
        raise NotFound(NO_SUCH_ARCHIVE)
    return export


# --- deleting old archives ---------------------------------------------------------------


def delete_expired_of(*, user_id: int, now: datetime | None = None) -> int:
    """Delete the user's expired exports: each file, then its row. Idempotent."""
    now = now or timezone.now()
    gone = Export.objects.filter(user_id=user_id, expires_at__lte=now)
    found = list(gone.values_list("pk", "file"))
    for _, name in found:
        if name:
            storage().delete(name)
    Export.objects.filter(user_id=user_id, pk__in=[pk for pk, _ in found]).delete()
    _forget_folder_of_erased(user_id)
    return len(found)


def _forget_folder_of_erased(user_id: int) -> None:
    """An erased account's exports folder goes too (file system: object storage has none)."""
    files = storage()
    if not isinstance(files, FileSystemStorage) or Export.objects.filter(user_id=user_id).exists():
        return
    if User.objects.filter(pk=user_id, erased_at__isnull=False).exists():
        with contextlib.suppress(OSError):  # gone, or not empty
            os.rmdir(files.path(f"exports/{user_id}"))


def expired_owners(*, now: datetime | None = None) -> list[int]:
    """Users with an export to delete, after failing the stale ones.

    Queries across every shard: the hourly sweep's, like ``deletion.due_ids``.
    """
    now = now or timezone.now()
    Export.objects.filter(status__in=UNFINISHED, created_at__lte=now - STALE_AFTER).update(
        status=Export.Status.FAILED, finished_at=now, expires_at=now + FAILED_SHOWN
    )
    return list(
        Export.objects.filter(expires_at__lte=now).values_list("user_id", flat=True).distinct()
    )


# --- accounts' part of the archive --------------------------------------------------------

PROFILE_COLUMNS = (
    "username",
    "display_name",
    "bio",
    "email",
    "email_verified",
    "date_joined",
    "followers_count",
    "following_count",
    "posts_count",
)


def _profile_rows(user_id: int) -> list[archive.Row]:
    user = User.objects.get(pk=user_id)
    return [
        {
            "username": user.username,
            "display_name": user.display_name,
            "bio": user.bio,
            "email": user.email,
            "email_verified": user.email_verified,
            "date_joined": user.date_joined,
            "followers_count": user.followers_count,
            "following_count": user.following_count,
            "posts_count": user.posts_count,
        }
    ]


PROFILE = archive.Section(
    name="profile",
    columns=PROFILE_COLUMNS,
    rows=_profile_rows,
    count=lambda user_id: 1,
    single=True,
)
