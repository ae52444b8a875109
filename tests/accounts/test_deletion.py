"""Deleting an account: grace period, cancel by log-in, erasure.

The acceptance test builds a busy account (1,000 followers, 500 posts
with images, likes given and received, cached feeds, a data export) partly in
bulk, as the services would have left them, deletes the account through the
site with no grace, and checks that no row, file under MEDIA_ROOT or Redis
key names the user, every counter equals its rows, and every follower's feed
equals the pull-model reference.
"""

from collections import Counter
from datetime import timedelta

import pyotp
import pytest
from django.apps import apps
from django.contrib.sessions.models import Session
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import F, ForeignKey
from django.test import Client
from django.utils import timezone

from accounts import deletion, twofactor
from accounts.models import Export, User, UsernameClaim
from accounts.tasks import erase_due_accounts
from feed_project import sharding
from feed_project.pagination import Cursor
from posts import ids, media
from posts.edits import edit_post
from posts.models import Like, ModerationLog, Post, Report
from posts.moderation.services import hide_post
from posts.services import create_post, like, repost
from relations.models import Followee, Follower, FollowImport
from relations.services import block, follow, mute
from tests import images
from tests.conftest import PASSWORD
from tests.factories import UserFactory
from timelines.home import _cache as cache
from timelines.home import home_feed
from timelines.home._models import InboxEntry
from timelines.home.pull_model import pull_reference_keys
from timelines.models import PendingTask
from timelines.notifications.models import Notification

pytestmark = pytest.mark.django_db(transaction=False)

FOLLOWERS = 1000
POSTS = 500


def _feed(reader: User) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor(), limit=100).items]


def _reference(reader: User) -> list[str]:
    return pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=100)


def _delete(client: Client, data: dict | None = None):
    return client.post("/settings/delete/", data or {"password": PASSWORD})


# --- grace period, cancel, refusals ---------------------------------------------------


def test_deletion_hides_the_account_until_its_owner_logs_in_again(
    alice, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post = create_post(author=alice, text="still here?")
    assert [i.key for i in home_feed(reader=bob, cursor=Cursor()).items] == [post.timeline_key]
    client = Client()
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = _delete(client)
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session  # logged out, every session ended
    alice.refresh_from_db()
    assert alice.deletion_due_at > timezone.now() + timedelta(days=29)
    assert Client().get("/@alice/").status_code == 404
    assert _feed(bob) == [] == _reference(bob)
    # The grace runs: the sweep leaves it alone.
    with django_capture_on_commit_callbacks(execute=True):
        assert erase_due_accounts() == 0

    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    page = client.get("/")
    assert "deletion was cancelled" in page.content.decode()
    alice.refresh_from_db()
    assert alice.deletion_due_at is None
    assert Client().get("/@alice/").status_code == 200
    assert _feed(bob) == [post.timeline_key] == _reference(bob)


def test_the_sweep_erases_accounts_whose_grace_is_over(
    alice, bob, django_capture_on_commit_callbacks
):
    deletion.request_deletion(user=alice, now=timezone.now() - timedelta(days=31))
    with django_capture_on_commit_callbacks(execute=True):
        assert erase_due_accounts() == 1
    alice.refresh_from_db()
    assert alice.erased_at is not None and not alice.is_active
    assert not Follower.objects.exists() and not Followee.objects.exists()
    assert not deletion.erase(user_id=alice.pk)  # a second run does nothing


def test_a_wrong_password_deletes_nothing(alice, alice_client):
    response = _delete(alice_client, {"password": "not it"})
    assert response.status_code == 400
    alice.refresh_from_db()
    assert alice.deletion_due_at is None


def test_with_two_factor_the_code_is_asked_too(alice, alice_client):
    setup = twofactor.start_setup(user=alice)
    now = timezone.now()
    twofactor.confirm_setup(user=alice, code=pyotp.TOTP(setup.secret).at(now), now=now)
    assert _delete(alice_client).status_code == 400
    assert _delete(alice_client, {"password": PASSWORD, "code": "000000"}).status_code == 400
    alice.refresh_from_db()
    assert alice.deletion_due_at is None
    codes = twofactor.new_recovery_codes(user=alice)
    response = _delete(alice_client, {"password": PASSWORD, "code": codes[0]})
    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.deletion_due_at is not None


def test_the_username_of_an_erased_account_is_never_given_again(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.ACCOUNT_DELETION_GRACE_DAYS = 0
    client = Client()
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        assert _delete(client).status_code == 302
    alice.refresh_from_db()
    assert alice.erased_at is not None and not alice.has_usable_password()
    data = {
        "username": "Alice",
        "email": "new@example.com",
        "password1": "a-fine-long-passphrase",
        "password2": "a-fine-long-passphrase",
    }
    response = Client().post("/accounts/signup/", data)
    assert response.status_code == 400
    assert User.objects.filter(username__iexact="alice").count() == 1
    assert (
        Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD}).status_code
        == 200
    )


# --- the acceptance test: a busy account -------------------------------------------------


def _bulk_users(prefix: str, n: int) -> list[User]:
    now = timezone.now()
    User.objects.bulk_create(
        User(username=f"{prefix}{i}", password="!", last_active_at=now) for i in range(n)
    )
    return list(User.objects.filter(username__startswith=prefix).order_by("pk"))


def _bulk_follow(fans: list[User], *stars: User) -> None:
    now = timezone.now()
    for star in stars:
        Follower.objects.bulk_create(
            Follower(user_id=star.pk, follower_id=f.pk, created_at=now) for f in fans
        )
        Followee.objects.bulk_create(
            Followee(user_id=f.pk, followee_id=star.pk, created_at=now) for f in fans
        )
        User.objects.filter(pk=star.pk).update(followers_count=F("followers_count") + len(fans))
    User.objects.filter(pk__in=[f.pk for f in fans]).update(
        following_count=F("following_count") + len(stars)
    )


def _bulk_posts(author: User, n: int) -> list[str]:
    """n posts of ``author``, a second apart, ending a day ago (older than any real one)."""
    end = ids.time_of(timezone.now() - timedelta(days=1))
    parts = [ids.KeyParts(time=end - 1000 * (n - i), author=author.pk, seq=0) for i in range(n)]
    Post.objects.bulk_create(
        Post(
            id=ids.make_post_id(p), timeline_key=ids.make_timeline_key(p), author=author, text="old"
        )
        for p in parts
    )
    User.objects.filter(pk=author.pk).update(posts_count=F("posts_count") + n)
    return [ids.make_post_id(p) for p in parts]


def _bulk_images(author: User, post_ids: list[str]) -> None:
    """One real image (a file and its thumbnail in the storage, and its row) on each post."""
    picture = media.prepare(images.upload("p.jpg", images.image_bytes()))
    for post_id in post_ids:
        stored = media.store(author_id=author.pk, images=[picture])
        media.attach(post=Post.objects.with_id(post_id).get(), stored=stored)


def _files_of(root, user: User) -> list[str]:
    """Files and folders under MEDIA_ROOT that belong to the user: their images and exports."""
    names = media.PostMedia.objects.filter(author_id=user.pk).values_list("file", "thumbnail")
    theirs = {name for pair in names for name in pair}
    found = []
    for path in root.rglob("*"):
        name = str(path.relative_to(root))
        if name in theirs or str(user.pk) in path.relative_to(root).parts:
            found.append(name)
    return found


def _bulk_likes(pairs: list[tuple[User, str]]) -> None:
    now = timezone.now()
    # One INSERT from arrays, not bulk_create: Django's bulk INSERT of a key
    # through a foreign key to posts' KeyField keeps only its first character.
    with connection.cursor() as db:
        db.execute(
            f"INSERT INTO {Like._meta.db_table} (user_id, post_id, created_at) "
            "SELECT u, p, %s FROM unnest(%s::bigint[], %s::text[]) AS t(u, p)",
            [now, [u.pk for u, _ in pairs], [p for _, p in pairs]],
        )
    for post_id, n in Counter(p for _, p in pairs).items():
        Post.objects.with_id(post_id).update(like_count=F("like_count") + n)


def _rows_naming(user_id: int) -> list[str]:
    """Every row of every table that points at the user or one of their posts."""
    low, high = ids.post_id_range(user_id)
    found = []
    for model in apps.get_models():
        if model in (User, UsernameClaim):  # the tombstone keeps the name: never reused
            continue
        for field in model._meta.concrete_fields:
            if not isinstance(field, ForeignKey):
                continue
            target = field.related_model
            if target is User:
                query = {field.attname: user_id}
            elif target is Post:
                query = {f"{field.attname}__gte": low, f"{field.attname}__lt": high}
            else:
                continue
            if model._base_manager.filter(**query).exists():
                found.append(f"{model._meta.db_table}.{field.attname}")
    if Post.objects.by_author(user_id).exists():
        found.append("posts_post.id")
    if PendingTask.objects.filter(owner=user_id).exists():
        found.append("timelines_pendingtask.owner")
    for session in Session.objects.all():
        if session.get_decoded().get("_auth_user_id") == str(user_id):
            found.append("django_session")
    return found


def _counter_check(table: str, counter: str, rows: str, key: str, where: str = "TRUE") -> str:
    """Ids of ``table`` whose ``counter`` differs from the count of its ``rows``: the
    counts grouped first, then joined (a cluster plans that; a correlated count it
    cannot, across shards)."""
    return (
        f"SELECT t.id FROM {table} t LEFT JOIN (SELECT {key} AS id, count(*) AS n FROM {rows}"
        f" WHERE {where} GROUP BY {key}) c ON c.id = t.id WHERE t.{counter} <> COALESCE(c.n, 0)"
    )


COUNTER_CHECKS = {
    "followers_count": _counter_check(
        "accounts_user", "followers_count", "relations_follower", "user_id"
    ),
    "following_count": _counter_check(
        "accounts_user", "following_count", "relations_followee", "user_id"
    ),
    "posts_count": _counter_check(
        "accounts_user", "posts_count", "posts_post", "author_id", "deleted_at IS NULL"
    ),
    "unread_notifications": _counter_check(
        "accounts_user",
        "unread_notifications",
        "timelines_notification",
        "recipient_id",
        "read_at IS NULL",
    ),
    "like_count": _counter_check("posts_post", "like_count", "posts_like", "post_id"),
    "repost_count": _counter_check(
        "posts_post", "repost_count", "posts_post", "repost_of_id", "deleted_at IS NULL"
    ),
    "reply_count": _counter_check(
        "posts_post", "reply_count", "posts_post", "in_reply_to_id", "deleted_at IS NULL"
    ),
}


def _counters_off() -> dict[str, list]:
    off = {}
    with connection.cursor() as db:
        for name, sql in COUNTER_CHECKS.items():
            db.execute(sql)
            rows = db.fetchall()
            if rows:
                off[name] = rows[:5]
    return off


def test_erasing_an_account_with_a_thousand_followers(
    settings, media_root, django_capture_on_commit_callbacks
):
    settings.ACCOUNT_DELETION_GRACE_DAYS = 0
    if sharding.on_citus(connection):
        # The whole test is one transaction, as nothing in production is: Citus
        # refuses a read of shards that it modified over several connections
        # earlier in the same transaction, so here it modifies over one.
        with connection.cursor() as db:
            db.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    victim = UserFactory(username="victim")
    star = UserFactory(username="star")
    moderator = UserFactory(username="moderator")
    fans = _bulk_users("fan_", FOLLOWERS)
    _bulk_follow(fans, victim, star)
    old = _bulk_posts(victim, POSTS - 20)
    _bulk_images(victim, old)
    _bulk_likes([(fan, old[i % len(old)]) for i, fan in enumerate(fans[:600])])

    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=victim, followee=star)
        for fan in fans[:10]:
            follow(follower=victim, followee=fan)
        star_posts = [create_post(author=star, text=f"star {n}") for n in range(10)]
    # Feeds read (inboxes built, Redis caches filled) before the newest posts arrive.
    for reader in [victim, star, *fans[:100]]:
        _feed(reader)
    picture = media.prepare_all([images.upload("new.png", images.image_bytes("PNG"))], ["alt"])
    with django_capture_on_commit_callbacks(execute=True):
        newest = [create_post(author=victim, text=f"new {n}", media=picture) for n in range(20)]
        # Others' images stay: a fan's, and the star's.
        create_post(author=fans[3], text="my cat", media=picture)
        create_post(author=star, text="my dog", media=picture)
        star_posts += [create_post(author=star, text=f"star late {n}") for n in range(5)]
        for post in star_posts:
            like(user=victim, post=post)
        for fan in fans[100:105]:
            like(user=fan, post=newest[-1])
            repost(user=fan, post=newest[-1])
            create_post(author=fan, text="a reply", in_reply_to=newest[-2])
        create_post(author=victim, text="my reply", in_reply_to=star_posts[0])
        repost(user=victim, post=star_posts[1])
        # Tags, a quote each way, an edit (its history row and notifications).
        create_post(author=fans[104], text="quoting #victim", quote_of=newest[-3])
        create_post(author=victim, text="quoting #star", quote_of=star_posts[3])
        edit_post(post=newest[-1], changes={"text": "edited #tagged @star"})
        block(user=victim, target=fans[999])
        block(user=fans[998], target=victim)
        mute(user=victim, target=fans[997])
        mute(user=fans[996], target=victim)
    hide_post(moderator=moderator, post=newest[0], note="spam")
    Report.objects.create(reporter=fans[0], user=victim, post=newest[1], created_at=timezone.now())
    Report.objects.create(reporter=victim, user=star, post=star_posts[2], created_at=timezone.now())
    victim.refresh_from_db()
    assert victim.followers_count == FOLLOWERS - 2  # the blocks ended two follows
    assert victim.posts_count == POSTS + 3  # a reply, a repost and a quote
    assert (
        InboxEntry.objects.filter(author_id=victim.pk).exclude(reader_id=victim.pk).count() > 1000
    )
    assert Notification.objects.filter(recipient_id=victim.pk).exists()
    assert Notification.objects.filter(actor_id=victim.pk).exists()
    redis = cache.client()
    assert list(redis.scan_iter(match=f"*{{{victim.pk}}}*"))
    assert _counters_off() == {}
    client = Client()
    client.force_login(victim)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/settings/export/")  # an archive of it all, in the storage too
        following = SimpleUploadedFile("following.csv", b"username\nstar\n", "text/csv")
        client.post("/settings/import/follows/", {"file": following})  # a saved import
    assert FollowImport.objects.get(user_id=victim.pk).report["already"] == ["star"]
    assert Export.objects.get(user_id=victim.pk).status == Export.Status.READY
    assert media.PostMedia.objects.filter(author_id=victim.pk).count() == POSTS
    assert len(_files_of(media_root, victim)) > 2 * POSTS  # images, thumbnails, the archive
    others = {str(p) for p in media_root.rglob("*") if p.is_file()} - {
        str(media_root / name) for name in _files_of(media_root, victim)
    }
    assert len(others) == 4  # the fan's and the star's image and thumbnail

    with django_capture_on_commit_callbacks(execute=True):
        assert _delete(client).status_code == 302

    victim.refresh_from_db()
    assert victim.erased_at is not None and not victim.is_active
    assert victim.username == "victim" and victim.email == "" and victim.display_name == ""
    assert _rows_naming(victim.pk) == []
    assert _files_of(media_root, victim) == []
    assert not (media_root / "posts" / str(victim.pk)).exists()
    assert not (media_root / "exports" / str(victim.pk)).exists()
    assert {str(p) for p in media_root.rglob("*") if p.is_file()} == others
    assert UsernameClaim.objects.get(name="victim").user_id == victim.pk
    assert list(redis.scan_iter(match=f"*{{{victim.pk}}}*")) == []
    prefix = ids.author_prefix(victim.pk)
    for key in redis.scan_iter(match="inbox:*:list"):
        members = redis.lrange(key, 0, -1)
        assert not [m for m in members if m.decode()[ids.TIMELINE_KEY_AUTHOR] == prefix], key
    log = ModerationLog.objects.get(action="hide_post")
    assert (log.user_id, log.post_id, log.username) == (None, None, "victim")
    assert not Report.objects.exists()
    assert _counters_off() == {}
    # Every follower's feed is the reference. Those whose inbox was built (and
    # cached) are read through the feed; the others have no inbox yet (their
    # first read pulls), so a sample of them is read. The rest follow the
    # victim and the star and nothing else, and have posted nothing: for each of
    # a sample of them (the reference costs ~20 ms a reader) it holds only the
    # star's live posts, nothing of the victim.
    built = set(InboxEntry.objects.values_list("reader_id", flat=True).distinct())
    stars = {p.timeline_key for p in Post.objects.by_author(star.pk).visible()}
    assert len(built) > 100
    read = built | {u.pk for u in fans[::20]} | {u.pk for u in fans[100:105]}  # posters
    for reader in [star, *fans]:
        if reader.pk in read:
            assert _feed(reader) == _reference(reader), reader.username
    unread = [reader for reader in fans if reader.pk not in read]
    assert len(unread) > 500
    for reader in unread[::10]:
        assert set(_reference(reader)) <= stars, reader.username
    assert Client().get("/@victim/").status_code == 404
