from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from feed_project.pagination import Cursor
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from timelines.home import _rebuild as rebuild
from timelines.home import home_feed
from timelines.home._models import InboxEntry, InboxState
from timelines.models import FanOut


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def readers(db, django_capture_on_commit_callbacks):
    author, built, unbuilt = (
        UserFactory(username=name, last_active_at=timezone.now())
        for name in ("author", "built", "unbuilt")
    )
    home_feed(reader=built, cursor=Cursor())
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=built, followee=author)
        follow(follower=unbuilt, followee=author)
        post = create_post(author=author, text="hello")
    return author, built, unbuilt, post


def test_rebuild_of_one_user_fills_their_inbox_and_marks_it_built(readers):
    _, _, unbuilt, post = readers

    output = run("rebuild_timelines", "--user", "UNBUILT")

    assert "Rebuilt" in output and "1 inboxes" in output
    assert list(
        InboxEntry.objects.filter(reader=unbuilt).values_list("timeline_key", flat=True)
    ) == [post.timeline_key]
    assert InboxState.objects.get(reader=unbuilt).built_at is not None


def test_rebuild_of_an_unknown_user_is_a_clear_error(readers):
    with pytest.raises(CommandError, match="No such user: nobody"):
        run("rebuild_timelines", "--user", "nobody")


def test_dry_run_says_who_and_changes_nothing(readers):
    _, _, unbuilt, _ = readers

    output = run("rebuild_timelines", "--missing", "--dry-run")

    assert "Would rebuild 2 inboxes" in output  # the author and "unbuilt"
    assert "unbuilt" in output and "built," not in output
    assert not InboxState.objects.filter(reader=unbuilt).exists()


def test_missing_rebuilds_only_inboxes_not_built(readers):
    author, built, unbuilt, _ = readers
    before = InboxState.objects.get(reader=built).built_at

    run("rebuild_timelines", "--missing")

    assert InboxState.objects.get(reader=built).built_at == before
    assert (
        InboxState.objects.filter(reader__in=[author, unbuilt], built_at__isnull=False).count() == 2
    )


def test_all_skips_readers_away_longer_than_the_inactive_window(readers):
    _, _, unbuilt, _ = readers
    unbuilt.last_active_at = timezone.now() - timezone.timedelta(days=30)
    unbuilt.save(update_fields=["last_active_at"])

    assert "Would rebuild 2 inboxes" in run("rebuild_timelines", "--all", "--dry-run")
    assert "Would rebuild 3 inboxes" in run(
        "rebuild_timelines", "--all", "--include-inactive", "--dry-run"
    )


def test_fanout_stats_reports_the_lag_of_finished_fan_outs(readers):
    _, _, _, post = readers
    assert FanOut.objects.get(post=post).finished_at is not None

    output = run("fanout_stats")

    assert "Last 1 fan-outs (1 pushed" in output
    assert "lag p50" in output and "Unfinished after 2 minutes: 0" in output


def test_the_admin_shows_fan_out_lag_to_staff(readers, admin_client):
    response = admin_client.get("/admin/timelines/fanout/")

    assert response.status_code == 200
    content = response.content.decode().lower()
    assert "lag (ms)" in content and "1/1" in content  # one chunk of one follower, done


@pytest.fixture
def states_seen_by_rebuilds(readers, monkeypatch):
    """``built``'s ``built_at`` as each rebuild found it just before it wrote."""
    _, built, _, _ = readers
    seen = []
    write = rebuild.write

    def write_and_look(*args, **kwargs):
        seen.append(InboxState.objects.get(reader=built).built_at)
        return write(*args, **kwargs)

    monkeypatch.setattr(rebuild, "write", write_and_look)
    return seen


def test_a_built_inbox_stays_built_while_it_is_rebuilt(readers, states_seen_by_rebuilds):
    # The command's promise: readers see the old inbox until the new one is
    # complete, instead of being sent to rebuild it themselves meanwhile.
    _, built, _, post = readers
    before = InboxState.objects.get(reader=built).built_at

    run("rebuild_timelines", "--user", "built")

    assert states_seen_by_rebuilds == [before] and before is not None
    assert InboxState.objects.get(reader=built).built_at > before
    assert post.timeline_key in InboxEntry.objects.filter(reader=built).values_list(
        "timeline_key", flat=True
    )


def test_a_rebuild_of_an_unbuilt_inbox_keeps_it_unbuilt_until_it_is_done(
    readers, states_seen_by_rebuilds
):
    _, built, _, _ = readers
    # Kept but not built: an earlier rebuild wrote its row, then failed.
    InboxState.objects.filter(reader=built).update(built_at=None)

    run("rebuild_timelines", "--user", "built")

    assert states_seen_by_rebuilds == [None]
    assert InboxState.objects.get(reader=built).built_at is not None
