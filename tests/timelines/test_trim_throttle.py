"""Fan-out trims table inboxes in a task of its own, at most once per interval per chunk."""

import pytest
from django.utils import timezone

from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines.inbox import Inbox
from timelines.models import InboxEntry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reader_of_author(settings):
    settings.FEED_INBOX_CAP = 2
    settings.FEED_TRIM_EVERY_SECONDS = 300
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    reader = UserFactory(last_active_at=now)
    follow(follower=reader, followee=author)
    Inbox(reader.pk).rebuild()
    return author, reader


def entries(reader) -> int:
    return InboxEntry.objects.filter(reader_id=reader.pk).count()


def test_the_first_chunk_push_in_an_interval_trims_and_the_next_ones_do_not(reader_of_author):
    author, reader = reader_of_author
    for n in range(3):
        create_post(author=author, text=f"post {n}")
    # The first post's chunk trimmed (nothing to cut yet); the next two did not.
    assert entries(reader) == 3


def test_a_chunk_trims_again_once_the_interval_has_passed(reader_of_author, settings):
    author, reader = reader_of_author
    for n in range(3):
        create_post(author=author, text=f"post {n}")
    settings.FEED_TRIM_EVERY_SECONDS = 0  # the interval is over: every chunk is due
    create_post(author=author, text="post 3")
    assert entries(reader) == 2
