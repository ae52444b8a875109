import random
import re
from collections import Counter
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import User, username_validator
from bench import demo, demo_life
from posts import ids
from posts.models import Post
from relations.models import Followee, Follower


def seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def printed(output: str, label: str) -> str:
    match = re.search(rf"^{label}:\s+(\S+)$", output, re.MULTILINE)
    assert match, output
    return match.group(1)


def assert_world_is_consistent() -> None:
    following = set(Followee.objects.values_list("user_id", "followee_id", "created_at"))
    followers = {
        (follower, user, since)
        for user, follower, since in Follower.objects.values_list(
            "user_id", "follower_id", "created_at"
        )
    }
    assert following == followers
    assert all(a != b for a, b, _ in following)
    following_count = Counter(a for a, _, _ in following)
    followers_count = Counter(b for _, b, _ in following)
    posts_count = Counter(Post.objects.values_list("author_id", flat=True))
    for user in User.objects.all():
        assert user.following_count == following_count[user.pk], user
        assert user.followers_count == followers_count[user.pk], user
        assert user.posts_count == posts_count[user.pk], user
    for post_id, key, author_id in Post.objects.values_list("id", "timeline_key", "author_id"):
        assert ids.parse_post_id(post_id).author == author_id
        assert key == ids.post_id_to_timeline_key(post_id)


@pytest.mark.embedded
def test_seed_demo_builds_a_consistent_world_with_a_working_demo_login(
    db, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        output = seed("--users", "60", "--posts-per-user", "5")
    # The bulk world fans nothing out (inboxes are rebuilt by pull); only the fixed
    # amount of activity of bench.demo_life goes through the services.
    assert 0 < len(callbacks) < 1000
    assert User.objects.exclude(username=demo_life.MOD_USERNAME).count() == 60
    assert_world_is_consistent()

    username, password = printed(output, "Log in as"), printed(output, "Password")
    assert client.login(username=username, password=password)
    demo = User.objects.get(username=username)
    assert demo.following_count >= 20
    assert demo.posts_count > 0


def test_seed_demo_makes_a_skewed_graph_of_valid_users_active_at_different_times(db):
    seed("--users", "60")
    for user in User.objects.all():
        username_validator(user.username)
    # The moderator, made by a command, has never been active. Rows come back in no
    # set order (on Citus, shard by shard), so it is left out rather than met last.
    users = list(User.objects.exclude(username=demo_life.MOD_USERNAME))
    assert all(user.last_active_at is not None for user in users)
    now = timezone.now()
    week_ago = now - timedelta(days=7)
    assert any(user.last_active_at < week_ago for user in users)
    assert any(user.last_active_at >= week_ago for user in users)
    most_followed = max(user.followers_count for user in users)
    assert most_followed > len(users) / 2  # a few accounts followed by most people
    assert sorted(user.followers_count for user in users)[len(users) // 2] < most_followed / 2
    moments = [post.created_at for post in Post.objects.all()]
    assert moments
    assert all(now - timedelta(days=21) <= moment <= now for moment in moments)


def test_running_seed_demo_twice_does_not_duplicate_anything(db):
    seed("--users", "60")
    before = (
        User.objects.count(),
        Follower.objects.count(),
        Followee.objects.count(),
        Post.objects.count(),
    )
    output = seed("--users", "60")
    assert "already there" in output
    assert printed(output, "Password") == "demo-password-123"
    after = (
        User.objects.count(),
        Follower.objects.count(),
        Followee.objects.count(),
        Post.objects.count(),
    )
    assert after == before
    assert_world_is_consistent()


def test_generated_names_step_around_existing_accounts_whatever_their_case(db):
    planned = demo.usernames(random.Random(7), 5)
    User.objects.create_user(username=planned[2].upper(), password="x")
    names = demo.usernames(random.Random(7), 5)
    assert names[2] == planned[2] + "_"
    for name in names:
        username_validator(name)
    assert not User.objects.filter(username__iexact=names[2]).exists()
