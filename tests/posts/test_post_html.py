"""A post in a list (posts.post_html, Jinja2) says what Django's template filters and tags said."""

from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from posts import post_html
from posts.models import Post
from posts.services import create_post, like, repost


@pytest.mark.parametrize("month", range(1, 13))
def test_display_time_is_the_date_filter(month):
    moment = datetime(2026, month, 3 + month, month, 7 * month % 60, 59, 123000, tzinfo=UTC)
    expected = Template('{{ moment|date:"j M Y, H:i" }}').render(Context({"moment": moment}))
    assert post_html.display_time(moment) == expected


def test_display_time_is_in_the_current_time_zone():
    moment = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)
    with timezone.override("Asia/Shanghai"):
        expected = Template('{{ moment|date:"j M Y, H:i" }}').render(Context({"moment": moment}))
        assert post_html.display_time(moment) == expected == "1 Jan 2027, 07:30"


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "<b>&'\"</b> @alice, @bob_2 and mail@example.com",
        "two\nlines\r\nand\rthree @carol\n",
        "",
    ],
)
def test_post_text_is_linkify_then_linebreaksbr(text):
    expected = Template("{% load post_text %}{{ text|linkify|linebreaksbr }}").render(
        Context({"text": text})
    )
    assert post_html.text_html(text, post_html.urls()) == expected


def test_urls_are_the_reversed_routes():
    urls = post_html.urls()
    post_id = "0000010000000000"
    assert urls.detail(post_id) == reverse("posts:detail", args=[post_id])
    assert urls.profile("bob_2") == reverse("posts:profile", args=["bob_2"])
    for action in ("like", "unlike", "repost", "unrepost", "delete", "report"):
        assert urls.action(post_id, action) == reverse(f"posts:{action}", args=[post_id])


def test_a_signed_in_reader_gets_forms_with_csrf_and_the_path_to_come_back_to(
    alice_client, alice, bob
):
    mine = create_post(author=bob, text="hello @alice")  # bob follows alice: alice sees hers
    own = create_post(author=alice, text="my own")
    like(user=bob, post=own)
    response = alice_client.get(f"/@alice/?before={'Z' * 16}")
    html = response.content.decode()
    article = html[html.index(f'data-post-id="{own.pk}"') :]
    article = article[: article.index("</article>")]
    token = response.context["csrf_token"]
    assert article.count(f'name="csrfmiddlewaretoken" value="{token}"') == 3
    assert f'value="/@alice/?before={"Z" * 16}"' in article
    assert f'action="/posts/{own.pk}/delete/"' in article
    assert f'action="/posts/{own.pk}/report/"' not in article
    assert 'Like</span> <span class="count">1</span>' in article
    assert mine.pk not in html  # bob's post is on bob's profile, not alice's


def test_marks_follow_what_the_reader_did(alice_client, alice, carol):
    liked = create_post(author=carol, text="liked")
    reposted = create_post(author=carol, text="reposted")
    like(user=alice, post=liked)
    repost(user=alice, post=reposted)
    html = alice_client.get("/@carol/").content.decode()
    assert f'action="/posts/{liked.pk}/unlike/"' in html
    assert f'action="/posts/{liked.pk}/repost/"' in html
    assert f'action="/posts/{reposted.pk}/unrepost/"' in html
    assert f'action="/posts/{reposted.pk}/like/"' in html
    assert f'action="/posts/{liked.pk}/report/"' in html
    assert "/delete/" not in html


def test_a_visitor_sees_counts_and_no_forms(client, carol):
    post = create_post(author=carol, text="<script>x</script>")
    html = client.get(f"/posts/{post.pk}/").content.decode()
    assert f'data-post-id="{post.pk}"' in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert 'Likes</span> <span class="count">0</span>' in html
    assert f"/posts/{post.pk}/like/" not in html


# --- the content every reader sees alike is rendered once (post_html.CONTENTS) ---------


def _render(post, viewer_id=None):
    return post_html.render_post(post, viewer=post_html.Viewer(user_id=viewer_id))


def _fresh(post):
    """The post rendered with nothing kept (DEBUG renders every time)."""
    with override_settings(DEBUG=True):
        return _render(post)


def _reloaded(post):
    return Post.objects.with_id(post.pk).select_related("author").get()


@pytest.fixture(autouse=True)
def nothing_kept():
    post_html.CONTENTS.clear()
    post_html.ARTICLES.clear()


def test_a_post_rendered_again_reuses_its_content_and_says_the_same(db, carol):
    post = _reloaded(create_post(author=carol, text="hello #tea https://example.com"))

    first = _render(post)
    kept = len(post_html.CONTENTS._kept)
    again = _render(_reloaded(post))

    assert kept == 1 and len(post_html.CONTENTS._kept) == 1  # no second rendering
    assert again == first == _fresh(post)
    assert 'href="/tags/tea/"' in again


def test_what_the_content_shows_changes_it_at_once(db, carol, alice):
    post = create_post(author=carol, text="before")
    _render(_reloaded(post))

    Post.objects.filter(pk=post.pk).update(text="after", edited_at=timezone.now())
    assert "after" in _render(_reloaded(post)) and "edited" in _render(_reloaded(post))

    User.objects.filter(pk=carol.pk).update(display_name="Carol Renamed")
    assert "<strong>Carol Renamed</strong>" in _render(_reloaded(post))

    at_home = _render(_reloaded(post))
    with timezone.override("Pacific/Kiritimati"):  # UTC+14: another day
        shown = _render(_reloaded(post))
        assert shown == _fresh(_reloaded(post))
    assert shown != at_home


def test_counts_and_the_readers_forms_are_rendered_every_time(db, carol, alice):
    post = create_post(author=carol, text="counted")
    before = _render(_reloaded(post), viewer_id=alice.pk)
    like(user=alice, post=post)

    after = post_html.render_post(
        _reloaded(post), viewer=post_html.Viewer(user_id=alice.pk, liked_ids={post.pk})
    )

    assert len(post_html.CONTENTS._kept) == 1  # a like does not render the content again
    assert 'Like</span> <span class="count">0</span>' in before
    assert 'Liked</span> <span class="count">1</span>' in after
    assert f'action="/posts/{post.pk}/unlike/"' in after
    assert f"/posts/{post.pk}/delete/" not in after
    assert f"/posts/{post.pk}/delete/" in _render(_reloaded(post), viewer_id=carol.pk)


def test_the_kept_contents_are_bounded():
    fragments = post_html.Fragments(size=2)
    for n in range(5):
        fragments.get((n,), lambda n=n: f"<p>{n}</p>")
    fragments.get((3,), lambda: "not rendered again")

    assert list(fragments._kept) == [(4,), (3,)]
    assert fragments.get((3,), lambda: "x") == "<p>3</p>"


# --- whole posts are rendered once for readers who see them alike (post_html.ARTICLES) ---


def _as(viewer_id, post, token, path, **marks):
    viewer = post_html.viewer(
        user_id=viewer_id,
        liked_ids=marks.get("liked", ()),
        reposted_ids=marks.get("reposted", ()),
        csrf_token=token,
        next_path=path,
    )
    return post_html.render_post(_reloaded(post), viewer=viewer)


def test_each_reader_gets_their_own_token_and_path_in_a_post_rendered_once(db, carol, alice, bob):
    post = create_post(author=carol, text="shared")
    for_alice = _as(alice.pk, post, "a" * 32, "/?after=1")
    for_bob = _as(bob.pk, post, "b" * 32, "/search/?q=bobs")

    assert len(post_html.ARTICLES._kept) == 1  # rendered once for both
    assert for_alice.count('value="' + "a" * 32 + '"') == 5  # like, repost, report, mute, block
    assert for_alice.count('name="next" value="/?after=1"') == 5
    assert "b" * 32 not in for_alice and "bobs" not in for_alice
    assert for_bob.count('value="' + "b" * 32 + '"') == 5
    assert for_bob == for_alice.replace("a" * 32, "b" * 32).replace("/?after=1", "/search/?q=bobs")
    assert "<!--" not in for_alice
    with override_settings(DEBUG=True):
        assert _as(alice.pk, post, "a" * 32, "/?after=1") == for_alice


def test_what_a_whole_post_shows_changes_it_at_once(db, carol, alice, bob):
    post = create_post(author=carol, text="watched")
    first = _as(alice.pk, post, "t", "/")

    liked = _as(alice.pk, post, "t", "/", liked={post.pk})
    assert f'action="/posts/{post.pk}/unlike/"' in liked and liked != first
    reposted = _as(alice.pk, post, "t", "/", reposted={post.pk})
    assert f'action="/posts/{post.pk}/unrepost/"' in reposted
    assert f'action="/posts/{post.pk}/delete/"' in _as(carol.pk, post, "t", "/")
    assert "/like/" not in post_html.render_post(_reloaded(post), viewer=post_html.Viewer(None))

    like(user=bob, post=post)
    assert 'Like</span> <span class="count">1</span>' in _as(alice.pk, post, "t", "/")

    reposter = User.objects.only("id", "username", "display_name", "avatar").get(pk=bob.pk)
    by_bob = post_html.render_post(
        _reloaded(post), viewer=post_html.Viewer(alice.pk), reposted_by=[reposter]
    )
    User.objects.filter(pk=bob.pk).update(display_name="Bob Renamed")
    renamed = User.objects.only("id", "username", "display_name", "avatar").get(pk=bob.pk)
    by_renamed = post_html.render_post(
        _reloaded(post), viewer=post_html.Viewer(alice.pk), reposted_by=[renamed]
    )
    assert "Reposted by" in by_bob and "Bob Renamed" in by_renamed and by_renamed != by_bob


def test_a_quote_turning_unavailable_shows_at_once(db, carol, alice):
    quoted = create_post(author=alice, text="the original")
    quote = create_post(author=carol, text="look", quote_of=quoted)
    before = _as(carol.pk, quote, "t", "/")
    Post.objects.filter(pk=quoted.pk).update(deleted_at=timezone.now())
    after = _as(carol.pk, quote, "t", "/")

    assert "the original" in before and "Quoted post unavailable" not in before
    assert "Quoted post unavailable" in after
