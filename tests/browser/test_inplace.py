"""Actions in place (static/js/site.js): like, repost, follow and reply without a page
load, the scroll position kept, the next page fetched near the end; and the same
flows through the plain forms with JavaScript switched off."""

from collections.abc import Iterator

import pytest

from accounts.models import User
from posts.models import Like, Post
from posts.services import create_post
from relations.models import Followee
from relations.services import follow
from timelines.suggestions import ranking

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery-staple-42"
DESKTOP = {"width": 1280, "height": 900}


class Reader:
    """A signed-in person in a browser context of their own, counting page loads."""

    def __init__(self, browser, base_url: str, *, javascript: bool = True) -> None:
        self.context = browser.new_context(
            base_url=base_url, viewport=DESKTOP, java_script_enabled=javascript
        )
        self.context.set_default_timeout(10_000)
        self.page = self.context.new_page()
        self.loads = 0
        self.problems: list[str] = []
        self.page.on("framenavigated", self._on_navigated)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("console", self._on_console)

    def _on_navigated(self, frame) -> None:
        if frame == self.page.main_frame:
            self.loads += 1

    def _on_console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.problems.append(message.text)

    def log_in(self, username: str) -> None:
        self.page.goto("/accounts/login/")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", PASSWORD)
        with self.page.expect_navigation():
            self.page.locator("main form button[type=submit]").first.click()

    def article(self, post_id: str):
        return self.page.locator(f"article[data-post-id='{post_id}']").first

    def close(self) -> None:
        assert not self.problems, self.problems
        self.context.close()


@pytest.fixture
def readers(browser, live_server) -> Iterator:
    opened: list[Reader] = []

    def open_reader(username: str, *, javascript: bool = True) -> Reader:
        reader = Reader(browser, live_server.url, javascript=javascript)
        reader.log_in(username)
        opened.append(reader)
        return reader

    yield open_reader
    for reader in opened:
        reader.close()


@pytest.fixture
def world() -> dict[str, object]:
    """wren wrote 25 posts (the home page shows 20); robin follows wren; kit is unrelated."""
    wren = User.objects.create_user(username="wren", password=PASSWORD, display_name="Wren")
    robin = User.objects.create_user(username="robin", password=PASSWORD, display_name="Robin")
    kit = User.objects.create_user(username="kit", password=PASSWORD, display_name="Kit")
    follow(follower=robin, followee=wren)
    posts = [create_post(author=wren, text=f"Numbered post {n:02d}") for n in range(25)]
    return {"wren": wren, "robin": robin, "kit": kit, "posts": posts[::-1]}  # newest first


def test_liking_the_16th_post_keeps_the_scroll_position_and_loads_no_page(readers, world):
    reader = readers("robin")
    reader.page.goto("/")
    sixteenth = world["posts"][15]
    reader.article(sixteenth.pk).scroll_into_view_if_needed()
    reader.page.mouse.wheel(0, 200)
    reader.page.wait_for_timeout(200)
    scroll = reader.page.evaluate("window.scrollY")
    loads = reader.loads
    assert scroll > 1000

    reader.article(sixteenth.pk).locator("form[action$='/like/'] button").click()
    reader.article(sixteenth.pk).locator("form[action$='/unlike/']").wait_for()

    assert reader.page.evaluate("window.scrollY") == scroll
    assert reader.loads == loads
    assert Like.objects.filter(user=world["robin"], post_id=sixteenth.pk).exists()
    liked = reader.article(sixteenth.pk).locator("form[action$='/unlike/'] button")
    assert liked.get_attribute("aria-pressed") == "true"
    assert liked.locator(".count").inner_text() == "1"
    # The button pressed keeps the keyboard focus.
    assert reader.page.evaluate("document.activeElement.closest('form').action").endswith(
        "/unlike/"
    )


def test_repost_follow_and_reply_happen_in_place(readers, world):
    reader = readers("robin")
    post = world["posts"][0]
    reader.page.goto("/")
    loads = reader.loads

    reader.article(post.pk).locator("form[action$='/repost/'] button").click()
    reader.article(post.pk).locator("form[action$='/unrepost/']").wait_for()
    assert Post.objects.filter(author=world["robin"], repost_of_id=post.pk).exists()
    assert "Reposted" in reader.page.inner_text("#live-status")
    assert reader.loads == loads

    reader.page.goto("/@kit/")
    loads = reader.loads
    reader.page.locator("form[action$='/follow/'] button").click()
    reader.page.locator("form[action$='/unfollow/']").wait_for()
    # By kit's id: on Citus a join of robin's follows to kit's row (another shard) is refused.
    assert Followee.objects.filter(user=world["robin"], followee=world["kit"]).exists()
    assert "You now follow @kit" in reader.page.inner_text("#live-status")
    assert reader.loads == loads

    reader.page.goto(f"/posts/{post.pk}/")
    loads = reader.loads
    reader.page.fill("#reply textarea[name=text]", "Replying in place")
    reader.page.locator("#reply button[type=submit]").click()
    reader.page.locator("#replies article", has_text="Replying in place").wait_for()
    assert reader.loads == loads
    assert reader.page.input_value("#reply textarea[name=text]") == ""
    reply = Post.objects.get(text="Replying in place")
    assert reply.in_reply_to_id == post.pk
    assert "Replying to @wren" in reader.article(reply.pk).inner_text()


def test_the_next_page_appears_as_the_reader_nears_the_end(readers, world):
    reader = readers("robin")
    reader.page.goto("/")
    articles = reader.page.locator("#feed article[data-post-id]")
    assert articles.count() == 20
    assert reader.page.locator("a[rel=next]").count() == 1  # there for readers without JS
    loads = reader.loads

    reader.page.mouse.wheel(0, 20_000)
    reader.page.locator(".end-of-feed").wait_for()

    assert articles.count() == 25
    assert reader.loads == loads
    shown = [articles.nth(i).get_attribute("data-post-id") for i in range(25)]
    assert shown == [post.pk for post in world["posts"]]
    assert reader.page.locator("a[rel=next]").count() == 0


def test_the_same_flows_work_through_the_plain_forms_without_javascript(readers, world):
    reader = readers("robin", javascript=False)
    post = world["posts"][15]
    reader.page.goto("/")
    loads = reader.loads
    with reader.page.expect_navigation():
        reader.article(post.pk).locator("form[action$='/like/'] button").click()
    assert reader.loads > loads  # a page load, back to the feed
    assert reader.article(post.pk).locator("form[action$='/unlike/']").count() == 1
    assert Like.objects.filter(user=world["robin"], post_id=post.pk).exists()

    with reader.page.expect_navigation():
        reader.article(post.pk).locator("form[action$='/repost/'] button").click()
    assert reader.article(post.pk).locator("form[action$='/unrepost/']").count() == 1

    reader.page.goto("/@kit/")
    with reader.page.expect_navigation():
        reader.page.locator("form[action$='/follow/'] button").click()
    assert reader.page.locator("form[action$='/unfollow/']").count() == 1

    reader.page.goto(f"/posts/{post.pk}/")
    reader.page.fill("#reply textarea[name=text]", "Replying the old way")
    with reader.page.expect_navigation():
        reader.page.locator("#reply button[type=submit]").click()
    assert reader.page.url.endswith(f"/posts/{post.pk}/")
    assert reader.page.locator("#replies article", has_text="Replying the old way").count() == 1

    # Delete asks first: the <details> menu opens a confirmation without JavaScript.
    reply = Post.objects.get(text="Replying the old way")
    menu = reader.article(reply.pk).locator("details.post-more")
    menu.locator("summary").first.click()
    menu.locator("details.confirm summary").click()
    with reader.page.expect_navigation():
        menu.locator("form[action$='/delete/'] button").click()
    assert Post.objects.get(pk=reply.pk).deleted_at is not None

    reader.page.goto("/")
    with reader.page.expect_navigation():
        reader.page.locator("a[rel=next]").click()
    assert reader.page.locator("#feed article[data-post-id]").count() == 5
    assert reader.page.locator(".end-of-feed").count() == 1


def test_the_new_posts_notice_puts_the_new_posts_at_the_top(readers, world):
    reader = readers("robin")
    reader.page.goto("/")
    loads = reader.loads
    newer = [create_post(author=world["wren"], text=f"Fresh post {n}") for n in range(2)]

    # The script polls every 30 s while the page is visible; a visibility change polls now.
    reader.page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    notice = reader.page.locator("a.new-posts")
    notice.wait_for()
    assert notice.inner_text() == "2 new posts"
    notice.click()
    reader.page.locator("#feed article", has_text="Fresh post 1").wait_for()

    articles = reader.page.locator("#feed article[data-post-id]")
    shown = [articles.nth(i).get_attribute("data-post-id") for i in range(3)]
    assert shown == [newer[1].pk, newer[0].pk, world["posts"][0].pk]
    assert reader.page.locator("a.new-posts").count() == 0
    assert reader.loads == loads


@pytest.mark.parametrize("javascript", [True, False], ids=["in-place", "plain-form"])
def test_follow_from_who_to_follow_and_the_suggestion_goes(readers, world, javascript):
    """Desktop: the sidebar suggests Wren's follows to Robin; a click follows one, and
    the sidebar shows the others (in place with JavaScript, by the plain form without)."""
    wren, robin = world["wren"], world["robin"]
    kit = User.objects.get(username="kit")
    lark = User.objects.create_user(username="lark", password=PASSWORD, display_name="Lark")
    follow(follower=wren, followee=kit)
    follow(follower=wren, followee=lark)
    ranking.refresh(robin.pk)
    reader = readers("robin", javascript=javascript)
    reader.page.goto("/")
    sidebar = reader.page.locator("aside.sidebar [data-part='who-to-follow']")
    assert sidebar.is_visible()
    assert sidebar.locator("li.suggestion").count() == 2
    loads = reader.loads

    button = sidebar.locator("li[data-suggested='kit'] button[type=submit]")
    if javascript:
        button.click()
        # The section is swapped for the fresh one: kit is gone, lark stays.
        reader.page.locator("li[data-suggested='kit']").wait_for(state="detached")
        assert reader.loads == loads
        reader.page.locator("#live-status", has_text="You now follow @kit").wait_for()
    else:
        with reader.page.expect_navigation():
            button.click()
        assert reader.page.url.endswith("/")
        assert reader.page.locator("li[data-suggested='kit']").count() == 0
    assert Followee.objects.filter(user=robin, followee=kit).exists()
    assert reader.page.locator("li[data-suggested='lark'] button[type=submit]").is_visible()
