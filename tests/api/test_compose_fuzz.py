"""Hostile input at the composing endpoints: media ids, edits and uploads of anything
answer JSON, never a 5xx."""

from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given
from hypothesis import strategies as st

from posts import ids
from posts.services import create_post
from tests.api.hostile import FUZZ, json_and_not_5xx, nasty
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NASTY = nasty("007") | st.integers(-(2**70), 2**90)  # ids sent as JSON numbers too


@pytest.fixture
def fuzzer(db):
    return UserFactory(username="fuzzer")


@pytest.fixture
def token(fuzzer, make_token):
    return make_token(fuzzer)


@FUZZ
@given(media_ids=st.lists(NASTY, max_size=6), quoted=NASTY, key=st.text(max_size=30))
def test_posting_media_ids_and_quotes_of_anything(api, client, token, media_ids, quoted, key):
    body = {"status": "hi", "media_ids": media_ids, "quoted_status_id": quoted}
    json_and_not_5xx(api.post("/api/v1/statuses", body, token=token))
    headers = {"Authorization": f"Bearer {token}"}
    if key.isprintable() and key.isascii():
        headers["Idempotency-Key"] = key
    form = {"status": "hi", "media_ids[]": [str(m) for m in media_ids]}
    json_and_not_5xx(client.post("/api/v1/statuses", form, headers=headers))


@FUZZ
@given(value=NASTY, description=NASTY, attributes=st.lists(st.dictionaries(st.text(), NASTY)))
def test_editing_and_describing_anything(
    api, client, fuzzer, token, value, description, attributes
):
    post = create_post(author=fuzzer, text="to edit")
    headers = {"Authorization": f"Bearer {token}"}
    path = f"/api/v1/statuses/{ids.decimal_of_key(post.timeline_key)}"
    for body in (
        {"status": value, "media_ids": [value], "spoiler_text": value},
        {"media_attributes": attributes},
        {"media_attributes": [{"id": value, "description": description}]},
    ):
        json_and_not_5xx(client.put(path, body, content_type="application/json", headers=headers))
    media_path = f"/api/v1/media/{quote(str(value), safe='')}"
    json_and_not_5xx(api.get(media_path, token=token))
    body = {"description": description}
    json_and_not_5xx(client.put(media_path, body, content_type="application/json", headers=headers))


@FUZZ
@given(data=st.binary(max_size=200), name=st.text(max_size=30), description=NASTY)
def test_uploading_anything(api, token, data, name, description):
    file = SimpleUploadedFile(name or "x", data, "image/png")
    body = {"file": file, "description": str(description)}
    json_and_not_5xx(api.post("/api/v2/media", body, token=token, json=False))


def test_a_put_with_a_broken_multipart_body_is_json(client, token):
    answer = client.put(
        "/api/v1/media/1",
        b"--nope\r\nthis is not multipart",
        content_type="multipart/form-data; boundary=other",
        headers={"Authorization": f"Bearer {token}"},
    )
    json_and_not_5xx(answer)
