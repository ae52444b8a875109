"""Importing follows from a CSV: the export's following.csv, through the normal follow
service, every row accounted for, a bad file refused whole."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from accounts.models import User
from feed_project.pagination import Cursor
from posts.services import create_post
from relations import follow_import
from relations.models import Followee, Follower, FollowImport
from relations.services import block, follow
from tests.factories import UserFactory
from timelines.home import home_feed
from timelines.home.pull_model import pull_reference_keys

pytestmark = pytest.mark.django_db

IMPORT = "/settings/import/follows/"


def csv_file(text: str | bytes, name: str = "following.csv") -> SimpleUploadedFile:
    data = text.encode() if isinstance(text, str) else text
    return SimpleUploadedFile(name, data, "text/csv")


def following(user: User) -> set[str]:
    ids = Followee.objects.filter(user_id=user.pk).values("followee_id")
    return set(User.objects.filter(pk__in=ids).values_list("username", flat=True))


def test_every_row_is_followed_or_reported_with_its_line(
    alice, alice_client, carol, django_capture_on_commit_callbacks
):
    dave, eve, fred, gone = (UserFactory(username=n) for n in ("dave", "eve", "fred", "gone"))
    User.objects.filter(pk=gone.pk).update(is_active=False)  # suspended, or erased
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=alice, followee=dave)
        block(user=alice, target=eve)
        block(user=fred, target=carol)
        block(user=fred, target=alice)
        UserFactory(username="poster")
        post = create_post(author=carol, text="carol's post")
    text = (
        "username,followed_at\r\n"
        "carol,2026-01-01T00:00:00+00:00\r\n"  # line 2: followed
        "@Poster,\r\n"  # line 3: followed (an @ and any case)
        "nobody_here,\r\n"  # 4: no such account
        "alice,\r\n"  # 5: yourself
        "eve,\r\n"  # 6: alice blocks eve
        "fred,\r\n"  # 7: fred blocks alice
        "not a name!,\r\n"  # 8
        "CAROL,\r\n"  # 9: listed twice
        "dave,\r\n"  # 10: followed already
        "gone,\r\n"  # 11: not an account one may follow
        "\r\n"  # blank lines are skipped
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(IMPORT, {"file": csv_file(text)}).status_code == 302
    response = alice_client.get(IMPORT)  # the task ran on commit
    assert following(alice) == {"carol", "poster", "dave"}
    report = response.context["report"]
    assert report.followed == ["carol", "poster"] and report.already == ["dave"]
    assert [(p.line, p.reason) for p in report.problems] == [
        (4, "no such account"),
        (5, "that is you"),
        (6, "one of you blocks the other"),
        (7, "one of you blocks the other"),
        (8, "not a username"),
        (9, "listed already, on line 2"),
        (11, "no such account"),
    ]
    page = response.content.decode()
    assert 'data-followed="2"' in page and 'data-not-followed="7"' in page
    assert "Line 6: “eve”: one of you blocks the other" in page
    # The normal follow: both tables, the counters, the feed backfilled.
    alice.refresh_from_db()
    assert alice.following_count == 3
    assert Follower.objects.filter(user=carol, follower=alice).exists()
    assert User.objects.get(pk=carol.pk).followers_count == 1
    keys = [item.key for item in home_feed(reader=alice, cursor=Cursor()).items]
    assert keys == pull_reference_keys(reader_id=alice.pk, cursor=Cursor(), limit=20)
    assert post.pk and len(keys) == 1  # carol's post, backfilled by the follow


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not UTF-8 text"),
        ("username\ncarol\x00\n", "not a CSV file"),
        ("carol\nbob\n", "one of them username"),
        ("name,followed_at\ncarol,\n", "one of them username"),
        ("username\n\n\n", "lists nobody"),
        ("username\n" + "carol\n" * 1001, "more than 1,000 accounts"),
        ("username\n" + "x" * (300 * 1024), "at most 256 KB"),
        ('username\n"' + "a" * 200_000 + '"\n', "is not valid CSV"),
        (b"", "The submitted file is empty"),
    ],
    ids=["binary", "nul", "no-header", "no-username", "nobody", "rows", "bytes", "field", "empty"],
)
def test_a_malformed_file_is_refused_whole(alice, alice_client, carol, content, error):
    response = alice_client.post(IMPORT, {"file": csv_file(content)})
    assert response.status_code == 400
    assert error in response.content.decode()
    assert following(alice) == set()


def test_no_file_is_a_form_error(alice, alice_client):
    response = alice_client.post(IMPORT, {})
    assert response.status_code == 400 and "This field is required" in response.content.decode()


def test_a_database_failure_midway_says_what_was_applied(
    alice, alice_client, carol, django_capture_on_commit_callbacks
):
    dave = UserFactory(username="dave")
    UserFactory(username="eve")
    # A real failure of PostgreSQL on dave's row, the second of three: a CHECK
    # (Citus refuses a trigger on a distributed table; it takes a named CHECK).
    with connection.cursor() as db:
        db.execute(
            "ALTER TABLE relations_followee ADD CONSTRAINT refuse_dave "
            f"CHECK (followee_id <> {dave.pk})"
        )
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(IMPORT, {"file": csv_file("username\ncarol\ndave\neve\n")})
    response = alice_client.get(IMPORT)
    assert following(alice) == {"carol"}
    report = response.context["report"]
    assert report.followed == ["carol"]
    assert "stopped at line 3" in report.stopped
    page = response.content.decode()
    assert 'role="alert"' in page and "Import the same file again" in page
    alice.refresh_from_db()
    assert alice.following_count == 1  # dave's follow rolled back whole


def test_importing_follows_is_rate_limited(alice, alice_client, carol, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "import_follows": ("1/h", "")}
    assert alice_client.post(IMPORT, {"file": csv_file("username\nbob\n")}).status_code == 302
    refused = alice_client.post(IMPORT, {"file": csv_file("username\ncarol\n")})
    assert refused.status_code == 429
    assert following(alice) == set()  # bob does not exist here; carol was refused


def test_the_read_step_gives_line_numbers_of_a_quoted_multiline_file():
    text = 'username,note\n"carol","two\nlines"\ndave,\n'
    entries = follow_import.read(csv_file(text))
    assert [(e.line, e.username) for e in entries] == [(2, "carol"), (4, "dave")]


def test_the_page_shows_progress_then_the_report_until_the_next_import(
    alice, alice_client, carol, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert alice_client.post(IMPORT, {"file": csv_file("username\ncarol\n")}).status_code == 302
    page = alice_client.get(IMPORT).content.decode()
    assert 'data-import-status="queued"' in page and '<meta http-equiv="refresh"' in page
    assert 'type="file"' not in page  # no second import while one runs
    refused = alice_client.post(IMPORT, {"file": csv_file("username\ncarol\n")})
    assert refused.status_code == 400 and "under way already" in refused.content.decode()
    assert following(alice) == set()  # nothing yet: the task has not run
    for callback in queued:
        callback()
    for _ in range(2):  # the report stays
        page = alice_client.get(IMPORT)
        assert page.context["report"].followed == ["carol"]
        assert '<meta http-equiv="refresh"' not in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(IMPORT, {"file": csv_file("username\ncarol\n")})
    report = alice_client.get(IMPORT).context["report"]
    assert (report.followed, report.already) == ([], ["carol"])
    assert FollowImport.objects.filter(user=alice).count() == 1


def test_the_form_page_needs_a_login(db):
    response = Client().get(IMPORT)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
