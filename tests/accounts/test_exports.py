"""Data exports: progress on the page, the zip's contents, the link's owner and expiry,
one export at a time, old archives deleted.

Tasks run eagerly here; tests/accounts/test_export_worker.py runs the same
through a real Celery worker.
"""

import csv
import io
import json
import re
import time
import zipfile
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts import archive, exports, tasks
from accounts.models import Export, User
from feed_project.refusals import NotFound
from posts import media
from posts.services import create_post, like
from relations.services import block, follow, mute
from tests import images
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

EXPORT = "/settings/export/"
LINK = re.compile(r'href="(/settings/export/download/[^"]+/)"')


def stored_files(root) -> set[str]:
    return (
        {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
        if root.exists()
        else set()
    )


def download_link(client: Client) -> str:
    page = client.get(EXPORT).content.decode()
    found = LINK.search(page)
    assert found, page
    return found.group(1)


def read_zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith('attachment; filename="feed-')
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def csv_rows(archive_zip: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(archive_zip.read(name).decode())))


@pytest.fixture
def world(alice, bob, carol, django_capture_on_commit_callbacks):
    """alice posts (one with two images), follows carol, likes carol's post, blocks and mutes."""
    dave, eve = UserFactory(username="dave"), UserFactory(username="eve")
    photo = media.prepare_all(
        [
            images.upload("a.jpg", images.image_bytes()),
            images.upload("b.png", images.image_bytes("PNG")),
        ],
        ["a red square", ""],
    )
    with django_capture_on_commit_callbacks(execute=True):
        posts = [create_post(author=alice, text=f"post {n}, naïve 微博") for n in range(3)]
        pictured = create_post(author=alice, text="with pictures", media=photo)
        follow(follower=alice, followee=carol)
        liked = create_post(author=carol, text="carol's")
        like(user=alice, post=liked)
        block(user=alice, target=dave)
        mute(user=alice, target=eve)
    return {"posts": [*posts, pictured], "pictured": pictured, "liked": liked}


def test_the_archive_holds_every_part_as_json_and_csv(
    alice, alice_client, world, media_root, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(EXPORT).status_code == 302
    export = Export.objects.get(user_id=alice.pk)
    assert export.status == Export.Status.READY
    # profile 1, following 1, followers 1 (bob), blocks 1, mutes 1, posts 4 + 2 images, likes 1
    assert export.done == export.total == 12
    assert export.expires_at > timezone.now() + timedelta(days=6)
    assert export.file.startswith(f"exports/{alice.pk}/") and export.file.endswith(".zip")

    found = read_zip(alice_client.get(download_link(alice_client)))
    names = set(found.namelist())
    for part in ("profile", "posts", "following", "followers", "likes", "blocks", "mutes"):
        assert {f"{part}.json", f"{part}.csv"} <= names, part
    assert "README.txt" in names
    profile = json.loads(found.read("profile.json"))
    assert profile["username"] == "alice" and profile["display_name"] == "Alice"
    posts = json.loads(found.read("posts.json"))
    assert [p["id"] for p in posts] == sorted(p.pk for p in world["posts"])
    assert posts[0]["text"] == "post 0, naïve 微博"
    pictured = next(p for p in posts if p["id"] == world["pictured"].pk)
    assert pictured["media_alt"] == ["a red square", ""]
    stored = list(world["pictured"].media.order_by("position"))
    for path, item in zip(pictured["media"], stored, strict=True):
        with media.storage().open(item.file) as original:
            assert found.read(path) == original.read()
    assert [r["text"] for r in csv_rows(found, "posts.csv")] == [p["text"] for p in posts]
    assert csv_rows(found, "posts.csv")[3]["media"] == " ".join(pictured["media"])
    assert [r["username"] for r in csv_rows(found, "following.csv")] == ["carol"]
    assert [r["username"] for r in json.loads(found.read("followers.json"))] == ["bob"]
    assert json.loads(found.read("likes.json"))[0]["post_id"] == world["liked"].pk
    assert csv_rows(found, "likes.csv")[0]["author"] == "carol"
    assert [r["username"] for r in csv_rows(found, "blocks.csv")] == ["dave"]
    assert [r["username"] for r in csv_rows(found, "mutes.csv")] == ["eve"]
    assert found.testzip() is None


def test_the_page_shows_progress_while_the_task_runs(
    alice, alice_client, world, monkeypatch, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert alice_client.post(EXPORT).status_code == 302
    queued = [c for c in queued if "build_export" in repr(c)]
    assert len(queued) == 1  # the task waits for the commit
    page = alice_client.get(EXPORT).content.decode()
    assert 'data-export-status="queued"' in page
    assert '<meta http-equiv="refresh"' in page and "<progress" in page
    assert "Prepare" not in page.split("<h2")[1]  # no second export while one is made

    # A part that looks at the page at each of its rows: progress rises as the task goes.
    seen: list[tuple[int, int]] = []

    def rows(user_id: int):
        for n in range(5):
            export = Export.objects.get(user_id=user_id)
            seen.append((export.done, export.total))
            assert 'data-export-status="running"' in alice_client.get(EXPORT).content.decode()
            yield {"n": n}

    monkeypatch.setattr(exports, "PROGRESS_EVERY", 1)
    archive.register(archive.Section("probe", ("n",), rows, count=lambda user_id: 5))
    try:
        for callback in queued:
            callback()
    finally:
        del archive._SECTIONS["probe"]
    dones = [done for done, _ in seen]
    assert dones == sorted(dones) and dones[-1] > dones[0] > 0
    assert {total for _, total in seen} == {17}  # 12 items as above, and 5 of the probe
    page = alice_client.get(EXPORT).content.decode()
    assert 'data-export-status="ready"' in page and '<meta http-equiv="refresh"' not in page


def test_one_export_at_a_time_and_a_new_one_retires_the_old(
    alice, alice_client, world, media_root, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        alice_client.post(EXPORT)
        response = alice_client.post(EXPORT, follow=True)
    assert "being prepared already" in response.content.decode()
    assert Export.objects.filter(user_id=alice.pk).count() == 1
    tasks.build_export(alice.pk, Export.objects.get().pk)
    first = Export.objects.get()
    assert (media_root / first.file).exists()

    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(EXPORT)
    second = Export.objects.get(user_id=alice.pk)
    assert second.pk != first.pk and second.status == Export.Status.READY
    assert not (media_root / first.file).exists()
    assert {name for name in stored_files(media_root) if name.startswith("exports/")} == {
        second.file
    }


def test_the_link_works_for_its_owner_only_and_for_a_while(
    alice, alice_client, bob, world, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(EXPORT)
    link = download_link(alice_client)
    assert read_zip(alice_client.get(link)).read("profile.json")

    other = Client()
    other.force_login(bob)
    assert other.get(link).status_code == 404
    anonymous = Client().get(link)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    token = link.split("/")[-2]
    assert alice_client.get(link.replace(token, token[:-2] + "xx")).status_code == 404
    assert alice_client.post(link).status_code == 405

    settings.EXPORT_LINK_MAX_AGE_SECONDS = 1
    time.sleep(2.1)
    expired = alice_client.get(link)
    assert expired.status_code == 410 and "has expired" in expired.content.decode()
    settings.EXPORT_LINK_MAX_AGE_SECONDS = 3600
    fresh = download_link(alice_client)  # the page gives a new link
    assert alice_client.get(fresh).status_code == 200


def test_an_archive_is_not_found_but_by_its_owner_with_a_good_link(
    alice, bob, world, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        exports.request_export(user=alice)
    token = exports.download_token(exports.latest(alice))
    assert exports.export_for_download(token=token, user=alice).user_id == alice.pk
    for user, link in ((bob, token), (alice, token[:-2] + "xx"), (alice, "nonsense")):
        with pytest.raises(NotFound) as caught:
            exports.export_for_download(token=link, user=user)
        assert caught.value.message == "No such archive."


def test_old_archives_and_lost_tasks_are_swept(
    alice, alice_client, carol, world, media_root, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(EXPORT)
    old = Export.objects.get(user_id=alice.pk)
    link = download_link(alice_client)
    lost = Export.objects.create(
        user_id=carol.pk, created_at=timezone.now() - exports.STALE_AFTER - timedelta(minutes=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.delete_expired_exports() == 0  # nothing expired yet
    assert Export.objects.get(pk=lost.pk).status == Export.Status.FAILED  # its page says so

    Export.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert alice_client.get(link).status_code == 404  # expired: gone even before the sweep
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.delete_expired_exports() == 1
    assert list(Export.objects.values_list("pk", flat=True)) == [lost.pk]
    Export.objects.filter(pk=lost.pk).update(expires_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.delete_expired_exports() == 1
    assert not Export.objects.exists()
    assert not [name for name in stored_files(media_root) if name.startswith("exports/")]


def test_a_failed_export_says_so_and_may_be_asked_again(
    alice, alice_client, world, django_capture_on_commit_callbacks
):
    def broken(user_id: int):
        raise RuntimeError("the disk is full")
        yield {}

    archive.register(archive.Section("broken", ("n",), broken, count=lambda user_id: 1))
    try:
        with django_capture_on_commit_callbacks(execute=False):
            alice_client.post(EXPORT)
        with pytest.raises(RuntimeError, match="disk is full"):
            tasks.build_export(alice.pk, Export.objects.get(user_id=alice.pk).pk)
    finally:
        del archive._SECTIONS["broken"]
    assert Export.objects.get(user_id=alice.pk).status == Export.Status.FAILED
    page = alice_client.get(EXPORT).content.decode()
    assert "failed" in page and "Prepare a new archive" in page
    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(EXPORT)
    assert Export.objects.get(user_id=alice.pk).status == Export.Status.READY


def test_asking_for_exports_is_rate_limited(alice_client, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "export": ("2/h", "")}
    statuses = [alice_client.post(EXPORT).status_code for _ in range(3)]
    assert statuses == [302, 302, 429]
    assert alice_client.get(EXPORT).status_code == 200  # reading the page is not limited


def test_the_export_page_needs_a_login(db):
    response = Client().get(EXPORT)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Client().post(EXPORT).status_code == 302
    assert not Export.objects.exists()
    assert not User.objects.exists()
