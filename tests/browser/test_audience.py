"""Who sees what, in a real browser: a locked account accepting a request, a muted word."""

import pytest
from django.utils import timezone

from accounts.models import User
from posts.services import create_post
from relations.services import follow
from tests.browser.test_site import PASSWORD, article, log_in, visitors  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def person(username: str) -> User:
    return User.objects.create_user(
        username=username, password=PASSWORD, display_name=username.title()
    )


def answered(visitor, form: str, path: str) -> None:
    """Submit ``form`` and wait for the site's answer to the POST to ``path``: with
    JavaScript, static/js/site.js sends it in place and the page does not load."""
    with visitor.page.expect_response(
        lambda response: response.url.endswith(path) and response.request.method == "POST"
    ):
        visitor.page.locator(f"{form} button[type=submit]").first.click()


def test_lock_an_account_accept_a_request_and_read_a_followers_only_post(visitors):  # noqa: F811
    lena, ask = visitors(), visitors()
    person("lena"), person("ask")
    log_in(lena, "lena")
    log_in(ask, "ask")

    lena.go("/accounts/profile/")
    lena.page.check("input[name=locked]")
    lena.submit("main form")
    ask.go("/@lena/")
    assert "locked" in ask.page.inner_text("h1")
    answered(ask, "form[action$='/follow/']", "/follow/")  # in place: the page stays
    ask.page.locator(".profile-actions", has_text="Requested").wait_for()
    ask.page.locator("#live-status", has_text="approves followers").wait_for()

    lena.go("/follow-requests/")
    lena.submit("li[data-requester='ask'] form[action$='/accept/']")
    assert "@ask follows you now" in lena.page.inner_text(".messages")
    lena.go("/")
    lena.page.fill("form.compose textarea[name=text]", "for my followers only")
    lena.page.select_option("form.compose select[name=visibility]", "followers")
    answered(lena, "form.compose", "/posts/new/")

    post = User.objects.get(username="lena").posts.get(text="for my followers only")
    assert post.visibility == "followers"
    ask.go("/")
    shown = article(ask, post.pk)
    assert "for my followers only" in shown.inner_text()
    assert shown.get_attribute("data-visibility") == "followers"
    assert shown.locator("form[action$='/repost/']").count() == 0  # cannot be reposted
    stranger = visitors()
    stranger.go(f"/posts/{post.pk}/")
    assert "for my followers only" not in stranger.page.content()


def test_mute_a_word_and_see_the_post_disappear(visitors):  # noqa: F811
    robin, wren = person("robin"), person("wren")
    User.objects.filter(pk=robin.pk).update(last_active_at=timezone.now())
    follow(follower=robin, followee=wren)
    spoiler = create_post(author=wren, text="The butler did it!")
    fine = create_post(author=wren, text="A fine day")
    reader = visitors()
    log_in(reader, "robin")
    reader.go("/")
    assert article(reader, spoiler.pk).is_visible()

    reader.go("/settings/muted-words/")
    reader.page.fill("input[name=word]", "butler")
    reader.submit("main form")
    assert reader.page.locator("[data-muted-word='butler']").is_visible()

    reader.go("/")
    assert article(reader, fine.pk).is_visible()
    assert article(reader, spoiler.pk).count() == 0


def test_send_and_answer_a_private_message(visitors):  # noqa: F811
    person("ann"), person("ben")
    ann, ben = visitors(), visitors()
    log_in(ann, "ann")
    log_in(ben, "ben")

    ann.go("/")
    ann.page.fill("form.compose textarea[name=text]", "@ben the secret plan")
    ann.page.select_option("form.compose select[name=visibility]", "direct")
    answered(ann, "form.compose", "/posts/new/")

    ben.go("/")
    assert "Messages 1" in ben.page.inner_text("nav.site-nav")
    with ben.page.expect_navigation():
        ben.page.locator("nav.site-nav a[href='/messages/']").click()
    with ben.page.expect_navigation():
        ben.page.locator("li.conversation a").first.click()
    assert "the secret plan" in ben.page.inner_text("main")
    ben.page.fill("form[data-conversation-reply] textarea[name=text]", "count me in")
    ben.submit("form[data-conversation-reply]")
    assert "/messages/" in ben.page.url
    messages = ben.page.locator("article[data-visibility='direct']")
    assert messages.count() == 2
    assert "count me in" in messages.last.inner_text()

    ann.go("/messages/")
    assert ann.page.locator("li.conversation.unread").count() == 1
    with ann.page.expect_navigation():
        ann.page.locator("li.conversation a").first.click()
    assert "count me in" in ann.page.inner_text("main")
