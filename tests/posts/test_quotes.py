"""Quote posts: a repost with text of its own, the quoted post embedded or "post unavailable"."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from posts.models import Post
from posts.moderation.services import hide_post
from posts.services import create_post, delete_post, repost
from relations.services import block, follow
from tests.factories import UserFactory
from timelines.notifications.models import Notification


def post_ids(response) -> list[str]:
    return re.findall(
        r'<article class="post" data-post-id="([0-9A-Z]+)"', response.content.decode()
    )


def quoted_block(response, quote: Post) -> str:
    html = response.content.decode()
    found = re.search(
        rf'<article class="post" data-post-id="{quote.pk}"[^>]*>.*?'
        rf'<div class="post-quote" data-quoted-post-id="([0-9A-Z]+)">(.*?)</div>',
        html,
        re.S,
    )
    assert found, html
    return found.group(1) + " " + found.group(2)


@pytest.fixture
def original(carol):
    return create_post(author=carol, text="the original words")


@pytest.mark.embedded
def test_repost_with_text_makes_a_quote_post_of_its_own_delivered_to_followers(
    client, alice, bob, original, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/posts/{original.pk}/repost/", {"text": "so true #quote"})
    assert response.status_code == 302

    quote = Post.objects.get(author=alice)
    assert quote.quote_of_id == original.pk and quote.repost_of_id is None
    assert quote.text == "so true #quote"
    client.force_login(bob)
    home = client.get("/")
    assert post_ids(home) == [quote.pk]
    embedded = quoted_block(home, quote)
    assert embedded.startswith(original.pk) and "the original words" in embedded


@pytest.mark.embedded
def test_a_post_with_quote_of_is_a_quote_and_a_repost_is_quoted_as_its_original(
    client, alice, carol, original
):
    shared = repost(user=carol, post=original)
    client.force_login(alice)

    response = client.post("/posts/new/", {"text": "look", "quote_of": shared.pk})

    assert response.status_code == 302
    assert Post.objects.get(author=alice).quote_of_id == original.pk


@pytest.mark.embedded
@pytest.mark.parametrize("how", ["deleted", "hidden", "blocked", "no such post"])
def test_quoting_a_post_you_cannot_see_is_a_form_error(client, alice, original, how):
    target = original.pk
    if how == "deleted":
        delete_post(post=original)
    elif how == "hidden":
        hide_post(moderator=None, post=original)
    elif how == "blocked":
        block(user=original.author, target=alice)
    else:
        target = "nonsense<>"
    client.force_login(alice)

    response = client.post("/posts/new/", {"text": "look", "quote_of": target})

    assert response.status_code == 400
    assert "cannot be quoted" in response.content.decode()
    assert not Post.objects.filter(author=alice).exists()


@pytest.mark.embedded
@pytest.mark.parametrize("how", ["deleted", "hidden", "blocked"])
def test_a_quote_shows_post_unavailable_when_the_reader_may_not_see_the_quoted_post(
    client, alice, bob, original, how
):
    quote = create_post(author=alice, text="my take", quote_of=original)
    if how == "deleted":
        delete_post(post=original)
    elif how == "hidden":
        hide_post(moderator=None, post=original)
    else:
        block(user=bob, target=original.author)
    client.force_login(bob)

    for page in (f"/posts/{quote.pk}/", "/@alice/", "/"):
        embedded = quoted_block(client.get(page), quote)
        assert embedded.startswith(original.pk)
        assert "post unavailable" in embedded and "the original words" not in embedded


@pytest.mark.embedded
def test_quotes_never_collapse_while_plain_reposts_still_do(
    client, alice, bob, carol, original, django_capture_on_commit_callbacks
):
    dora = UserFactory(username="dora")
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=bob, followee=carol)
        follow(follower=bob, followee=dora)
        first = create_post(author=alice, text="one", quote_of=original)
        second = create_post(author=dora, text="two", quote_of=original)
        repost(user=alice, post=original)
        repost(user=dora, post=original)

    client.force_login(bob)
    ids_shown = post_ids(client.get("/"))

    assert ids_shown == [original.pk, second.pk, first.pk]


@pytest.mark.embedded
def test_the_quoted_author_is_notified(alice, original, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        quote = create_post(author=alice, text="hm", quote_of=original)

    note = Notification.objects.get(recipient=original.author)
    assert (note.kind, note.actor_id, note.post_id) == ("quote", alice.pk, quote.pk)


@pytest.mark.embedded
def test_a_repost_with_too_long_a_text_is_a_form_error(client, alice, original):
    client.force_login(alice)

    response = client.post(f"/posts/{original.pk}/repost/", {"text": "x" * 501})

    assert response.status_code == 400
    assert not Post.objects.filter(author=alice).exists()


def _count(client, url: str) -> int:
    client.get(url)  # warm: last-active, inbox build
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_pages_cost_the_same_queries_with_one_quote_or_a_page_of_quotes_and_tags(
    client, alice, bob, carol, django_capture_on_commit_callbacks
):
    """Home, profile, detail, tag and search pages: fixed counts whatever the posts hold."""
    client.force_login(bob)
    quoted = [create_post(author=carol, text=f"quoted {n} #tag") for n in range(20)]
    pages = ["/", "/@alice/", "/tags/word/", "/search/?q=word"]

    def publish(n: int) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            for i in range(n):
                create_post(author=alice, text=f"word #word #t{i} @bob", quote_of=quoted[i])

    publish(1)
    # A reply whose parent is on no page: its author's name costs its query from the
    # start (posts.selectors.reply_names), as the replies below do.
    elsewhere = create_post(author=UserFactory(), text="elsewhere")
    create_post(author=carol, text="re #word", in_reply_to=elsewhere)
    detail = f"/posts/{Post.objects.filter(author=alice).first().pk}/"
    one = [_count(client, page) for page in (*pages, detail)]
    publish(19)
    for n in range(5):  # replies on the detail page, each quoting too
        create_post(
            author=carol,
            text="re #word",
            in_reply_to=Post.objects.get(pk=detail.split("/")[2]),
            quote_of=quoted[n],
        )
    many = [_count(client, page) for page in (*pages, detail)]
    assert len(post_ids(client.get("/"))) == 20
    assert one == many
