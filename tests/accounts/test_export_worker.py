"""A data export end to end through a real Celery worker, read back, and imported again.

The site (this process) queues ``accounts.build_export`` on a real broker; a
``celery worker`` subprocess writes the zip into the same MEDIA_ROOT (the
storage both share, as web servers and workers share a volume or a bucket);
the test watches the page until the archive is ready, downloads it through
the signed link, reads every part back, imports its following.csv as
another person, and lets the worker's sweep delete the archive once it has
expired.
"""

import csv
import io
import json
import re
import zipfile

import pytest
from django.test import Client
from django.utils import timezone

from accounts import tasks
from accounts.models import Export, User
from posts.models import Post
from relations.models import Followee
from tests import images
from tests.factories import UserFactory
from tests.timelines.test_worker import DRAIN_SECONDS, real_queue, wait_until  # noqa: F401

pytestmark = pytest.mark.worker

LINK = re.compile(r'href="(/settings/export/download/[^"]+/)"')


@pytest.mark.django_db(transaction=True)
def test_an_export_made_by_a_real_worker_reads_back_and_imports_again(
    real_queue,  # noqa: F811
    media_root,
):
    worker = real_queue.start_worker(MEDIA_ROOT=str(media_root))
    now = timezone.now()
    alice, bob, carol, zed = (
        UserFactory(username=name, last_active_at=now) for name in ("alice", "bob", "carol", "zed")
    )
    client = Client()
    client.force_login(alice)
    for name in ("bob", "carol"):
        assert client.post(f"/@{name}/follow/").status_code == 302
    photo = images.upload("cat.jpg", images.jpeg_with_gps())
    response = client.post(
        "/posts/new/", {"text": "hello", "media": [photo], "media_alt": ["a cat"]}
    )
    assert response.status_code == 302
    assert client.post("/posts/new/", {"text": "second, 第二"}).status_code == 302
    real_queue.wait_for_drain()

    assert client.post("/settings/export/").status_code == 302
    statuses = []

    def ready() -> str | None:
        page = client.get("/settings/export/").content.decode()
        statuses.append(re.search(r'data-export-status="(\w+)"', page).group(1))
        found = LINK.search(page)
        return found.group(1) if found else None

    link = wait_until(ready, what="the worker to prepare the archive", timeout=DRAIN_SECONDS)
    assert statuses[-1] == "ready" and set(statuses) <= {"queued", "running", "ready"}
    assert "accounts.build_export[" in worker.log() and "succeeded" in worker.log()
    export = Export.objects.get(user_id=alice.pk)
    assert export.done == export.total == 6  # profile, 2 follows, 2 posts, 1 image

    response = client.get(link)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None
    posts = json.loads(archive.read("posts.json"))
    assert [p["text"] for p in posts] == ["hello", "second, 第二"]
    image = Post.objects.get(author=alice, text="hello").media.get()
    with open(media_root / image.file, "rb") as stored:
        assert archive.read(posts[0]["media"][0]) == stored.read()
    assert posts[0]["media_alt"] == ["a cat"]
    table = list(csv.DictReader(io.StringIO(archive.read("posts.csv").decode())))
    assert [row["id"] for row in table] == [p["id"] for p in posts]
    following_csv = archive.read("following.csv")
    assert sorted(r["username"] for r in csv.DictReader(io.StringIO(following_csv.decode()))) == [
        "bob",
        "carol",
    ]
    other = Client()
    other.force_login(zed)
    assert other.get(link).status_code == 404

    # zed imports alice's following.csv: the format the export writes is the one it reads.
    upload = io.BytesIO(following_csv)
    upload.name = "following.csv"
    assert other.post("/settings/import/follows/", {"file": upload}).status_code == 302

    def imported():
        page = other.get("/settings/import/follows/")
        return page if page.context["report"] is not None else None

    page = wait_until(imported, what="the worker to import the follows", timeout=DRAIN_SECONDS)
    assert page.context["report"].followed == ["bob", "carol"]
    assert "relations.apply_follow_import[" in worker.log()
    followed = Followee.objects.filter(user_id=zed.pk).values("followee_id")
    assert set(User.objects.filter(pk__in=followed).values_list("pk", flat=True)) == {
        bob.pk,
        carol.pk,
    }
    real_queue.wait_for_drain()

    # Expired: the sweep, run by the worker, deletes the file, then the row.
    Export.objects.filter(pk=export.pk).update(expires_at=timezone.now())
    tasks.delete_expired_exports.delay()
    wait_until(
        lambda: not Export.objects.filter(pk=export.pk).exists(),
        what="the worker to delete the expired archive",
        timeout=DRAIN_SECONDS,
    )
    assert not (media_root / export.file).exists()
    assert client.get(link).status_code == 404
    real_queue.wait_for_drain()
