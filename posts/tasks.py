"""posts' Celery tasks: deleting the files of deleted posts' images, and the
trending tags (Celery beat, feed_project/settings.py).

A deleted post's media rows are marked discarded in the delete's transaction
(``posts.media.discard``); on commit ``delete_discarded_media`` deletes the
files, then the rows. The rows are their own to-do list: if the broker is
down or the message is lost, ``sweep_discarded_media`` (Celery beat) finds
them and queues the task again. The same sweep discards the images uploaded
ahead of a post that no post named (``posts.uploads``) and queues the deletion of
their files. Arguments are ids (JSON).
"""

from celery import shared_task
from django.db import DatabaseError

from feed_project import queueing
from feed_project.celery import FailFastTask
from posts import media, tags, uploads

# Discarded media still there this long after are queued again by the sweep:
# long enough for a queued task to have run.
SWEEP_AFTER_SECONDS = 600


class MediaTask(FailFastTask):
    acks_late = True
    autoretry_for = (DatabaseError, OSError)
    retry_backoff = True
    max_retries = 8


@shared_task(name="posts.delete_discarded_media", base=MediaTask)
def delete_discarded_media(author_id: int) -> None:
    media.delete_discarded(author_id=author_id)


@shared_task(name="posts.sweep_discarded_media", base=MediaTask)
def sweep_discarded_media() -> None:
    abandoned = uploads.discard_unattached()
    lost = media.authors_with_discarded(older_than_seconds=SWEEP_AFTER_SECONDS)
    for author_id in sorted({*abandoned, *lost}):
        queueing.enqueue(delete_discarded_media, author_id, if_refused=queueing.LEAVE_TO_SWEEP)


def delete_files_on_commit(*, author_id: int) -> None:
    """Queue the deletion of an author's discarded media once the transaction commits;
    if the broker cannot take it, the rows stay discarded and the sweep queues it later."""
    queueing.enqueue_on_commit(
        delete_discarded_media, author_id, if_refused=queueing.LEAVE_TO_SWEEP
    )


@shared_task(name="posts.compute_trending", acks_late=True, ignore_result=True)
def compute_trending() -> int:
    """Rewrite the trending tags; idempotent (each run replaces the table). How many."""
    return len(tags.compute_trending())
