import threading
from collections.abc import Callable

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import User
from relations.models import Followee, Follower
from relations.services import SelfFollowError, follow, unfollow
from relations.signals import followed, unfollowed
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def four(db):
    return [UserFactory() for _ in range(4)]


@pytest.fixture
def signals_sent():
    """Every followed/unfollowed signal, as ("followed" or "unfollowed", follower, followee)."""
    sent: list[tuple[str, int, int]] = []

    def receiver(name: str) -> Callable[..., None]:
        def record(sender, follower_id, followee_id, **kwargs):
            sent.append((name, follower_id, followee_id))

        return record

    on_follow, on_unfollow = receiver("followed"), receiver("unfollowed")
    followed.connect(on_follow, dispatch_uid="test-record-followed")
    unfollowed.connect(on_unfollow, dispatch_uid="test-record-unfollowed")
    yield sent
    followed.disconnect(dispatch_uid="test-record-followed")
    unfollowed.disconnect(dispatch_uid="test-record-unfollowed")


def assert_graph_is_consistent(expected: set[tuple[int, int]] | None = None) -> None:
    """Follower mirrors Followee row for row, and every counter equals its rows."""
    following = set(Followee.objects.values_list("user_id", "followee_id", "created_at"))
    mirrored = {
        (follower, user, since)
        for user, follower, since in Follower.objects.values_list(
            "user_id", "follower_id", "created_at"
        )
    }
    assert following == mirrored
    pairs = {(a, b) for a, b, _ in following}
    if expected is not None:
        assert pairs == expected
    for user in User.objects.all():
        assert user.following_count == sum(1 for a, _ in pairs if a == user.pk), user
        assert user.followers_count == sum(1 for _, b in pairs if b == user.pk), user


steps = st.lists(
    st.tuples(st.sampled_from(["follow", "unfollow"]), st.integers(0, 3), st.integers(0, 3)),
    max_size=30,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=steps)
def test_any_sequence_of_follows_and_unfollows_keeps_the_tables_mirrored_and_counted(four, steps):
    # One database transaction for the whole test: each example starts from no follows.
    Followee.objects.all().delete()
    Follower.objects.all().delete()
    User.objects.update(followers_count=0, following_count=0)
    model: set[tuple[int, int]] = set()
    for action, a, b in steps:
        follower, followee = four[a], four[b]
        pair = (follower.pk, followee.pk)
        if action == "follow" and a == b:
            with pytest.raises(SelfFollowError):
                follow(follower=follower, followee=followee)
        elif action == "follow":
            assert follow(follower=follower, followee=followee) == (pair not in model)
            model.add(pair)
        else:
            assert unfollow(follower=follower, followee=followee) == (pair in model)
            model.discard(pair)
        assert_graph_is_consistent(model)


def test_following_twice_is_a_no_op_that_returns_false(alice, carol):
    assert follow(follower=carol, followee=alice)
    assert not follow(follower=carol, followee=alice)
    assert_graph_is_consistent({(carol.pk, alice.pk)})


def test_unfollowing_someone_not_followed_is_a_no_op_that_returns_false(alice, carol):
    assert not unfollow(follower=carol, followee=alice)
    assert_graph_is_consistent(set())


def test_following_yourself_raises_and_writes_nothing(alice):
    with pytest.raises(SelfFollowError):
        follow(follower=alice, followee=alice)
    assert_graph_is_consistent(set())


@pytest.mark.parametrize(("table", "other"), [(Follower, "follower"), (Followee, "followee")])
def test_the_database_refuses_a_self_follow_row(alice, table, other):
    with pytest.raises(IntegrityError), transaction.atomic():
        table.objects.create(user=alice, created_at=timezone.now(), **{other: alice})


# --- Signals -----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_followed_and_unfollowed_are_sent_inside_the_transaction_that_makes_them():
    """Inside, so that what listeners write (timelines' outbox) commits or rolls back
    with the change; the graph is already changed when they hear of it."""
    alice, carol = UserFactory(), UserFactory()
    heard: list[tuple[str, bool, bool]] = []

    def listener(name: str) -> Callable[..., None]:
        def hear(sender, follower_id, followee_id, **kwargs):
            follows = Followee.objects.filter(user_id=follower_id, followee_id=followee_id)
            heard.append((name, connection.in_atomic_block, follows.exists()))

        return hear

    on_follow, on_unfollow = listener("followed"), listener("unfollowed")
    followed.connect(on_follow, dispatch_uid="test-inside-followed")
    unfollowed.connect(on_unfollow, dispatch_uid="test-inside-unfollowed")
    try:
        follow(follower=carol, followee=alice)
        unfollow(follower=carol, followee=alice)
    finally:
        followed.disconnect(dispatch_uid="test-inside-followed")
        unfollowed.disconnect(dispatch_uid="test-inside-unfollowed")
    assert heard == [("followed", True, True), ("unfollowed", True, False)]


@pytest.mark.django_db(transaction=True)
def test_a_follow_rolled_back_leaves_the_graph_as_it_was(signals_sent):
    alice, carol = UserFactory(), UserFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        follow(follower=carol, followee=alice)
        raise RuntimeError("the request failed after the follow")
    assert signals_sent == [("followed", carol.pk, alice.pk)]  # heard inside, rolled back
    assert_graph_is_consistent(set())


def test_no_signal_when_nothing_changed(
    alice, carol, signals_sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=carol, followee=alice)
        follow(follower=carol, followee=alice)
        unfollow(follower=carol, followee=alice)
        unfollow(follower=carol, followee=alice)
    assert signals_sent == [
        ("followed", carol.pk, alice.pk),
        ("unfollowed", carol.pk, alice.pk),
    ]


# --- Concurrency (PostgreSQL: real transactions in two threads) ------------------------------


def run_at_once(*calls: Callable[[], object]) -> list[object]:
    """Run each call in its own thread and connection, released together by a barrier."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = call()
        except Exception as exc:  # surfaced by the assertions of the test
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_follows_of_the_same_pair_make_one_follow():
    alice, carol = UserFactory(), UserFactory()
    for _ in range(5):  # several rounds, to give the race a chance
        results = run_at_once(
            lambda: follow(follower=carol, followee=alice),
            lambda: follow(follower=carol, followee=alice),
        )
        assert sorted(results, key=str) == [False, True]
        assert Followee.objects.count() == Follower.objects.count() == 1
        carol.refresh_from_db()
        alice.refresh_from_db()
        assert (carol.following_count, alice.followers_count) == (1, 1)
        assert_graph_is_consistent({(carol.pk, alice.pk)})
        unfollow(follower=carol, followee=alice)


@pytest.mark.django_db(transaction=True)
def test_a_follow_racing_an_unfollow_leaves_the_graph_consistent():
    alice, carol = UserFactory(), UserFactory()
    for start_following in (False, True, False, True):
        if start_following:
            follow(follower=carol, followee=alice)
        results = run_at_once(
            lambda: follow(follower=carol, followee=alice),
            lambda: unfollow(follower=carol, followee=alice),
        )
        assert not any(isinstance(result, Exception) for result in results), results
        assert_graph_is_consistent()
        unfollow(follower=carol, followee=alice)
