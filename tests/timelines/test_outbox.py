"""The outbox: every change to an inbox or to notifications is a row written with the
change, taken by its task when done, and swept when its message is lost.

A message is "lost" here by not running the on-commit callbacks of the change
(the test transaction never commits: exactly what a broker losing the message
leaves behind). The sweeper's callbacks are run, as a real commit would.
"""

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from accounts.models import User
from accounts.services import refresh_last_active
from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post, delete_post, like
from relations.services import block, follow, mute, unfollow, unmute
from tests.factories import UserFactory
from timelines import fanout, outbox, tasks
from timelines.home import home_feed
from timelines.home._models import InboxEntry
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut, PendingTask
from timelines.notifications.models import Notification


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a block's on-commit callbacks (its queued tasks, eagerly), as a commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def people(db, committed):
    """Four readers, here now, with built (empty) inboxes."""
    users = [UserFactory() for _ in range(4)]
    for user in users:
        with committed():
            refresh_last_active(user=user)
        assert feed_keys(user) == []
    return users


@pytest.fixture
def followed(people, committed):
    """The first of ``people`` and the three others, who follow them (backfills run)."""
    author, *followers = people
    for follower in followers:
        with committed():
            follow(follower=follower, followee=author)
    return author, followers


def feed_keys(reader: User) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor()).items]


def reference_keys(reader: User) -> list[str]:
    return pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=settings.FEED_PAGE_SIZE)


def pending() -> set[tuple[int, str, str]]:
    return set(PendingTask.objects.values_list("owner", "task", "args"))


def age_outbox(seconds: float = 3600) -> None:
    """Every pending row and unfinished fan-out last (re)sent ``seconds`` ago: by default,
    old enough to sweep."""
    past = timezone.now() - timedelta(seconds=seconds)
    PendingTask.objects.update(changed_at=past)
    FanOut.objects.filter(finished_at__isnull=True).update(created_at=past)
    FanOut.objects.filter(finished_at__isnull=True, swept_at__isnull=False).update(swept_at=past)


def sweep(committed) -> int:
    with committed():
        return tasks.sweep_undelivered()


def test_a_follow_records_its_tasks_in_its_transaction_and_they_take_them_when_done(
    people, committed
):
    reader, author = people[:2]
    with committed():
        post = create_post(author=author, text="before the follow")
    assert pending() == set()

    with committed():
        follow(follower=reader, followee=author)
        assert pending() == {
            (reader.pk, "timelines.sync_author", f"[{reader.pk},{author.pk}]"),
            (author.pk, "timelines.notify_followed", f"[{reader.pk},{author.pk}]"),
        }

    assert pending() == set()
    assert feed_keys(reader) == [post.timeline_key] == reference_keys(reader)
    assert Notification.objects.filter(recipient=author, actor=reader, kind="follow").exists()


@pytest.mark.django_db(transaction=True)
def test_a_change_rolled_back_records_nothing_and_queues_nothing():
    reader, author = UserFactory(), UserFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        follow(follower=reader, followee=author)
        create_post(author=author, text="never published")
        raise RuntimeError("the request failed after the follow")
    assert pending() == set()
    assert not FanOut.objects.exists()
    assert not Notification.objects.exists()


def test_work_whose_messages_were_lost_is_done_by_the_sweeper(people, committed, settings):
    """A follow, an unmute, a mute, a block, a reply, a like, a delete: no task ran."""
    reader, author, muted, other = people
    with committed():
        follow(follower=reader, followee=muted)
        follow(follower=reader, followee=other)
        follow(follower=other, followee=reader)
        hidden = create_post(author=muted, text="from the muted, soon unmuted")
        mute(user=reader, target=muted)
        kept = create_post(author=author, text="from the author about to be followed")
        gone = create_post(author=author, text="soon deleted")
        from_other = create_post(author=other, text="from someone about to be blocked")
        mine = create_post(author=reader, text="mine")
    assert pending() == set()
    assert feed_keys(reader) == [mine.timeline_key, from_other.timeline_key]

    # The changes commit; their messages are lost.
    follow(follower=reader, followee=author)
    unmute(user=reader, target=muted)
    block(user=reader, target=other)
    reply = create_post(author=author, text="a reply", in_reply_to=mine)
    like(user=author, post=mine)
    delete_post(post=gone)
    assert len(pending()) == 8  # 2 per follow, 1 unmute, 2 block, reply notify, like, delete
    assert feed_keys(reader) != reference_keys(reader)

    settings.FEED_SWEEP_AFTER_SECONDS = 60
    assert sweep(committed) == 0  # too recent: their messages may yet come
    age_outbox(61)
    assert sweep(committed) == 8 + 1  # the rows and the reply's fan-out

    assert pending() == set()
    expected = [reply.timeline_key, mine.timeline_key, kept.timeline_key, hidden.timeline_key]
    assert feed_keys(reader) == expected == reference_keys(reader)
    assert from_other.timeline_key not in set(
        InboxEntry.objects.filter(reader_id=reader.pk).values_list("timeline_key", flat=True)
    )
    assert {("reply", author.pk), ("like", author.pk)} <= set(
        Notification.objects.filter(recipient=reader).values_list("kind", "actor")
    )
    assert Notification.objects.filter(recipient=author, kind="follow", actor=reader).exists()
    assert not InboxEntry.objects.filter(timeline_key=gone.timeline_key).exists()
    assert FanOut.objects.get(pk=reply.pk).finished_at is not None
    assert sweep(committed) == 0


def test_a_mute_whose_message_was_lost_leaves_the_feed_right_and_the_sweep_tidies(
    people, committed
):
    reader, author = people[:2]
    with committed():
        follow(follower=reader, followee=author)
        post = create_post(author=author, text="soon muted")
    mute(user=reader, target=author)  # its message is lost

    assert feed_keys(reader) == [] == reference_keys(reader)  # the read already hides it
    assert InboxEntry.objects.filter(reader_id=reader.pk, timeline_key=post.timeline_key).exists()
    age_outbox()
    assert sweep(committed) == 1
    assert not InboxEntry.objects.filter(reader_id=reader.pk, author_id=author.pk).exists()


def test_an_older_call_run_after_a_newer_one_does_not_undo_it(people, committed):
    """Unfollow, follow again: the unfollow's task runs last (a sweep, a slow worker)."""
    reader, author = people[:2]
    with committed():
        post = create_post(author=author, text="hello")
        follow(follower=reader, followee=author)
    unfollow(follower=reader, followee=author)
    with committed():
        follow(follower=reader, followee=author)
    tasks.remove_author.apply(args=(reader.pk, author.pk))  # the old message, late
    tasks.sync_author.apply(args=(reader.pk, author.pk))

    assert feed_keys(reader) == [post.timeline_key] == reference_keys(reader)


def test_a_call_recorded_again_while_its_task_runs_stays_in_the_outbox(people):
    reader, author = people[:2]
    follow(follower=reader, followee=author)
    claim = outbox.Claim(tasks.sync_author, (reader.pk, author.pk))
    unfollow(follower=reader, followee=author)  # while the task "runs"

    assert not claim.finish()
    row = PendingTask.objects.get(owner=reader.pk, task="timelines.sync_author")
    assert row.version == 2
    assert outbox.Claim(tasks.sync_author, (reader.pk, author.pk)).finish()
    assert not PendingTask.objects.filter(owner=reader.pk, task="timelines.sync_author").exists()


@pytest.mark.embedded
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_the_plan_cuts_the_followers_into_chunks_of_the_chunk_size_by_id(db, settings, size):
    settings.FEED_FANOUT_CHUNK = size
    author, stranger = UserFactory(), UserFactory()
    followers = sorted(UserFactory().pk for _ in range(7))
    for follower in followers:
        follow(follower=User.objects.get(pk=follower), followee=author)
    follow(follower=author, followee=stranger)  # another author's Follower rows

    chunks = fanout.follower_chunks(author.pk)

    expected = [followers[at : at + size] for at in range(0, len(followers), size)]
    assert [c.upto for c in chunks] == [part[-1] for part in expected]
    assert [c.after for c in chunks] == [0, *(part[-1] for part in expected[:-1])]
    assert fanout.follower_chunks(stranger.pk) == [fanout.Chunk(after=0, upto=author.pk)]
    assert fanout.follower_chunks(followers[0]) == []


def test_a_fan_out_chunk_run_twice_counts_once_and_the_fan_out_waits_for_every_chunk(
    followed, committed, settings
):
    settings.FEED_FANOUT_CHUNK = 1
    author, followers = followed
    post = create_post(author=author, text="to three followers")
    chunks = fanout.plan_fan_out(post_id=post.pk)  # its chunks' messages are lost
    assert len(chunks) == 3
    first, *rest = chunks

    for _ in range(3):  # redelivered, twice
        tasks.fan_out_chunk.apply(args=(post.pk, first.after, first.upto))

    fan_out = FanOut.objects.get(pk=post.pk)
    assert fan_out.finished_at is None
    assert (fan_out.chunks_done, fan_out.chunks_total, fan_out.recipients) == (1, 3, 1)
    for chunk in rest:
        tasks.fan_out_chunk.apply(args=(post.pk, chunk.after, chunk.upto))
    fan_out = FanOut.objects.get(pk=post.pk)
    assert fan_out.finished_at is not None
    assert (fan_out.chunks_done, fan_out.chunks_total, fan_out.recipients) == (3, 3, 3)
    for follower in followers:
        assert feed_keys(follower) == [post.timeline_key] == reference_keys(follower)


@pytest.mark.embedded
def test_a_chunk_delivered_again_returns_every_recipient_and_fills_what_is_missing(
    followed, committed, settings
):
    """Run again after its commit (its worker died before it took its outbox row, or a
    rebuild got there first), a chunk finds its rows in: it still returns each
    recipient, for each cache to be pushed."""
    settings.FEED_FANOUT_CHUNK = 10
    author, followers = followed
    post = create_post(author=author, text="to three followers")
    (chunk,) = fanout.plan_fan_out(post_id=post.pk)  # its message is lost
    assert fanout.deliver_chunk(post_id=post.pk, chunk=chunk) == 3
    lost = InboxEntry.objects.filter(reader_id=followers[0].pk, timeline_key=post.timeline_key)
    lost.delete()
    call = outbox.Call.of(fanout.FAN_OUT_CHUNK, (post.pk, chunk.after, chunk.upto))
    PendingTask.objects.create(  # still to do: the row a dead worker leaves
        owner=call.owner, task=call.task, args=call.encoded_args, changed_at=timezone.now()
    )

    assert fanout.deliver_chunk(post_id=post.pk, chunk=chunk) == 3

    assert InboxEntry.objects.filter(timeline_key=post.timeline_key).count() == 3 + 1  # + own
    for follower in followers:
        assert feed_keys(follower) == [post.timeline_key] == reference_keys(follower)


@pytest.mark.embedded
def test_a_chunk_delivered_again_once_it_is_done_writes_nothing(followed, committed, settings):
    """A dead worker's message, handed out again after the broker's visibility timeout
    when the sweep has long delivered its chunk: its post may lie below the floors of
    inboxes trimmed since, so it must not be written again."""
    settings.FEED_FANOUT_CHUNK = 10
    author, followers = followed
    post = create_post(author=author, text="to three followers")
    (chunk,) = fanout.plan_fan_out(post_id=post.pk)
    assert fanout.deliver_chunk(post_id=post.pk, chunk=chunk) == 3
    InboxEntry.objects.filter(reader_id=followers[0].pk, timeline_key=post.timeline_key).delete()

    assert fanout.deliver_chunk(post_id=post.pk, chunk=chunk) == 0
    assert not InboxEntry.objects.filter(reader_id=followers[0].pk).exists()


def test_lost_chunks_are_swept_one_by_one_without_planning_the_fan_out_again(
    followed, committed, settings
):
    settings.FEED_FANOUT_CHUNK = 1
    author, _ = followed
    post = create_post(author=author, text="to three followers")
    first = fanout.plan_fan_out(post_id=post.pk)[0]
    tasks.fan_out_chunk.apply(args=(post.pk, first.after, first.upto))
    age_outbox()

    assert sweep(committed) == 3  # the two chunks left and the post's notifications, no plan
    fan_out = FanOut.objects.get(pk=post.pk)
    assert fan_out.finished_at is not None
    assert (fan_out.chunks_done, fan_out.recipients) == (3, 3)


def test_work_the_sweep_sent_again_waits_twice_as_long_each_time_before_the_next(people, settings):
    """A message that waits in a long queue is not lost: sending it again at every
    interval would grow the queue faster than the workers drain it."""
    settings.FEED_SWEEP_AFTER_SECONDS = delay = 60
    older_than = timedelta(seconds=delay)
    reader, author = people[:2]
    follow(follower=reader, followee=author)  # its messages lost (nothing commits)
    post = create_post(author=author, text="its plan's message lost")
    calls = {(task, tuple(json.loads(args))) for _, task, args in pending()}
    assert ("timelines.sync_author", (reader.pk, author.pk)) in calls

    def swept() -> tuple[set, list[str]]:
        sent = {(task, tuple(args)) for task, args in outbox.left_behind(older_than=older_than)}
        return sent, fanout.undelivered_posts(older_than=older_than)

    age_outbox(delay - 1)
    assert swept() == (set(), [])
    for waited in (1, 2, 4, 8, 16, 16):  # times the delay, then no longer
        age_outbox(waited * delay - 1)
        assert swept() == (set(), []), waited
        age_outbox(waited * delay + 1)
        assert swept() == (calls, [post.pk]), waited

    # Recorded again (a new change), the call is sent at once and its waits start over.
    outbox.record("timelines.sync_author", reader.pk, author.pk)
    age_outbox(delay + 1)
    assert swept()[0] == {("timelines.sync_author", (reader.pk, author.pk))}


def test_a_deleted_posts_cleanup_is_recorded_chunk_by_chunk(followed, committed, settings):
    settings.FEED_FANOUT_CHUNK = 1
    author, _ = followed
    with committed():
        post = create_post(author=author, text="soon deleted")
    assert InboxEntry.objects.filter(timeline_key=post.timeline_key).count() == 4

    delete_post(post=Post.objects.get(pk=post.pk))  # the message is lost
    tasks.remove_post.apply(args=(post.pk,))  # swept: plans, but its chunks are lost

    assert not InboxEntry.objects.filter(reader_id=author.pk).exists()
    assert {task for _, task, _ in pending()} == {"timelines.remove_post_chunk"}
    age_outbox()
    assert sweep(committed) == 3
    assert pending() == set()
    assert not InboxEntry.objects.filter(timeline_key=post.timeline_key).exists()


def test_rebuild_requests_queued_by_the_command_are_in_the_outbox(people):
    reader = people[0]
    call_command("rebuild_timelines", "--user", reader.username, "--queue", stdout=None)
    assert pending() == {(reader.pk, "timelines.rebuild", f"[{reader.pk}]")}


def test_the_sweeper_runs_as_often_as_the_settings_say():
    schedule = settings.CELERY_BEAT_SCHEDULE["sweep-undelivered-posts"]
    assert schedule["task"] == tasks.sweep_undelivered.name
    assert schedule["schedule"] <= 15
    assert settings.FEED_SWEEP_AFTER_SECONDS == 60


def test_an_outbox_task_whose_claim_keeps_failing_gives_up_with_the_database_error(db):
    """The claim's database errors are retried with the tasks' backoff; past the last
    retry the task fails with the error itself (the sweep runs it again later)."""
    task = tasks.sync_author

    def refuse(run, sql, params, many, context):
        raise OperationalError("the server closed the connection unexpectedly")

    task.push_request(retries=task.max_retries + 1, is_eager=False, called_directly=False)
    try:
        with connection.execute_wrapper(refuse), pytest.raises(OperationalError):
            task(1, 2)
    finally:
        task.pop_request()
