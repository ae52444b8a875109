"""End to end in headless Chromium against a live server: what a person does, as they do it.

Two people sign up through the forms, one follows the other, posts, and the
post shows in the follower's feed; the follower pages back with rel="next".
Then reply, like, repost, search, report, and a moderator hiding the post
in the admin: each must be there (a missing form or button fails the test).
Stored markup never runs, and no page breaks the Content-Security-Policy.

``test_screenshots_of_the_main_pages`` saves PNGs of the main pages at desktop
and phone width to artifacts/screenshots/ and checks that nothing on a 375px
phone is wider than the screen.
"""

# ruff: noqa: RUF001 (Chinese text has its own full-width commas)
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Permission
from django.test import override_settings

from accounts.models import User
from posts.models import Post, Report
from posts.services import create_post
from relations.services import follow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery-staple-42"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}


class Visitor:
    """One person in their own browser context (cookies of their own), on one tab."""

    def __init__(self, browser, base_url: str, viewport: dict[str, int] = DESKTOP) -> None:
        self.context = browser.new_context(base_url=base_url, viewport=viewport)
        self.context.set_default_timeout(10_000)
        self.page = self.context.new_page()
        # Stored script running shows as a dialog; a CSP violation as a console error.
        self.problems: list[str] = []
        self.page.on("dialog", self._on_dialog)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("console", self._on_console)

    def _on_dialog(self, dialog) -> None:
        self.problems.append(f"a dialog opened: {dialog.message}")
        dialog.dismiss()

    def _on_console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.problems.append(f"{self.page.url}: {message.text}")

    def go(self, path: str):
        return self.page.goto(path)

    def submit(self, form: str) -> None:
        """Press the submit button of the form matched by the ``form`` selector, and wait
        for the page it leads to; a form sent in place (``data-inplace``, site.js) leads
        to none: the caller waits for its answer on the page.

        Not ``click()`` then ``wait_for_load_state()``: that returns at once while the
        POST is still in flight (the old page is loaded), and the next step then reads
        the old page or a database the request has not written yet.
        """
        target = self.page.locator(f":is({form})").first
        button = target.locator(":is(button[type=submit], input[type=submit])").first
        if target.get_attribute("data-inplace") is not None:
            button.click()
            return
        with self.page.expect_navigation():
            button.click()

    def follow_link(self, link) -> None:
        """Click the ``link`` locator and wait for the page it opens (not for the old one)."""
        with self.page.expect_navigation():
            link.click()

    def close(self) -> None:
        assert not self.problems, self.problems
        self.context.close()


@pytest.fixture
def visitors(browser, live_server) -> Iterator:
    opened: list[Visitor] = []

    def open_visitor(viewport: dict[str, int] = DESKTOP) -> Visitor:
        visitor = Visitor(browser, live_server.url, viewport)
        opened.append(visitor)
        return visitor

    yield open_visitor
    for visitor in opened:
        visitor.close()


def sign_up(visitor: Visitor, username: str, display_name: str) -> None:
    page = visitor.page
    visitor.go("/accounts/signup/")
    page.fill("input[name=username]", username)
    page.fill("input[name=display_name]", display_name)
    page.fill("input[name=email]", f"{username}@example.com")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    visitor.submit("main form")
    assert page.url.endswith("/"), page.url
    assert f"Welcome, {display_name}" in page.inner_text(".messages")


def log_in(visitor: Visitor, username: str, path: str = "/accounts/login/") -> None:
    visitor.go(path)
    visitor.page.fill("input[name=username]", username)
    visitor.page.fill("input[name=password]", PASSWORD)
    visitor.submit("main form, #content form")


def write_post(visitor: Visitor, text: str) -> str:
    """Post from the home page's compose box; the new post's id."""
    visitor.go("/")
    visitor.page.fill("form.compose textarea[name=text]", text)
    count = visitor.page.locator("#feed article").count()
    visitor.submit("form.compose")
    # In place (static/js/site.js): the new post goes to the top of the feed, no page load.
    visitor.page.locator(f"#feed article >> nth={count}").wait_for()
    assert visitor.page.url.endswith("/")
    return Post.objects.filter(text=text.replace("\r\n", "\n")).get().pk


def article(visitor: Visitor, post_id: str):
    return visitor.page.locator(f"article[data-post-id='{post_id}']").first


def test_sign_up_follow_post_and_read_it_in_the_followers_feed(visitors):
    writer, reader = visitors(), visitors()
    sign_up(writer, "wren", "Wren Writer")
    sign_up(reader, "robin", "Robin Reader")

    reader.go("/@wren/")
    reader.submit("form[action$='/follow/']")
    reader.page.locator("form[action$='/unfollow/']").wait_for()  # in place
    assert "You now follow @wren" in reader.page.inner_text("#live-status")

    post_id = write_post(writer, "Hello from a real browser, 你好，微博")
    reader.go("/")
    assert "Hello from a real browser" in article(reader, post_id).inner_text()

    # Page back: 25 more posts (made fast, through the service) push it to page two.
    wren = User.objects.get(username="wren")
    for n in range(25):
        create_post(author=wren, text=f"Numbered post {n:02d}")
    reader.go("/")
    feed = reader.page.locator("article[data-post-id]")
    assert feed.count() == 20
    assert "Numbered post 24" in feed.first.inner_text()
    assert not article(reader, post_id).is_visible()
    with reader.page.expect_navigation():
        reader.page.locator("a[rel=next]").click()
    assert "?before=" in reader.page.url
    assert feed.count() == 6
    assert article(reader, post_id).is_visible()
    assert reader.page.locator("a[rel=next]").count() == 0
    with reader.page.expect_navigation():
        reader.page.locator("a[rel=prev]").click()
    assert "?after=" in reader.page.url
    assert "Numbered post 24" in feed.first.inner_text()


def test_stored_markup_is_shown_as_text_and_never_runs(visitors):
    writer, reader = visitors(), visitors()
    sign_up(writer, "mallory", '<img src=x onerror=alert("name")>')
    sign_up(reader, "victim", "Victim")
    follow(
        follower=User.objects.get(username="victim"),
        followee=User.objects.get(username="mallory"),
    )
    text = '<script>alert("xss")</script><img src=x onerror=alert(1)> "quoted" & done'
    post_id = write_post(writer, text)
    for path in ("/", "/@mallory/", f"/posts/{post_id}/", "/search/?q=quoted"):
        reader.go(path)
        if path.startswith("/search/") and not article(reader, post_id).count():
            continue  # search may index asynchronously
        assert article(reader, post_id).locator(".post-text").inner_text() == text
    assert reader.page.locator("img[src=x]").count() == 0
    # reader.close() (in the fixture) fails the test if any dialog opened.


def test_reply_like_repost_search_report_and_a_moderator_hiding_the_post(visitors, live_server):
    writer, reader = visitors(), visitors()
    sign_up(writer, "wren", "Wren Writer")
    sign_up(reader, "robin", "Robin Reader")
    reader.go("/@wren/")
    reader.submit("form[action$='/follow/']")
    reader.page.locator("form[action$='/unfollow/']").wait_for()  # in place
    post_id = write_post(writer, "Sparrows at the feeder this morning")

    # Reply, from the form on the post's page.
    reader.go(f"/posts/{post_id}/")
    reply_form = reader.page.locator("form:has(input[name=in_reply_to])")
    assert reply_form.count() == 1
    reply_form.locator("textarea[name=text]").fill("Lucky you! Mine only get pigeons.")
    reply_form.locator("button[type=submit]").click()
    reader.page.locator("#replies article", has_text="Lucky you!").wait_for()  # in place
    reply = Post.objects.get(text="Lucky you! Mine only get pigeons.")
    assert reply.in_reply_to_id == post_id
    reader.go(f"/posts/{post_id}/")
    assert article(reader, reply.pk).is_visible()

    # Like and repost: the buttons on the post in the reader's feed.
    for action, undo in (("like", "unlike"), ("repost", "unrepost")):
        reader.go("/")
        button = article(reader, post_id).locator(f"form[action$='/{action}/'] button")
        assert button.count() == 1, action
        button.click()  # in place (static/js/site.js): wait for the button to turn
        article(reader, post_id).locator(f"form[action$='/{undo}/']").wait_for()
        reader.go(f"/posts/{post_id}/")
        assert article(reader, post_id).locator(f"form[action$='/{undo}/']").count() == 1
    reader.go("/@robin/")
    assert article(reader, post_id).is_visible()  # the repost shows the original's id

    # Search, from the box in the header.
    reader.go("/")
    box = reader.page.locator("header input[name=q], form[role=search] input[name=q]").first
    box.fill("sparrows")
    with reader.page.expect_navigation():
        box.press("Enter")
    assert "/search/?q=sparrows" in reader.page.url
    assert article(reader, post_id).is_visible()

    # Report, from the post's "more" menu, with a reason.
    reader.go(f"/posts/{post_id}/")
    menu = article(reader, post_id).locator("details.post-more")
    menu.locator("summary").first.click()
    menu.locator("details.confirm", has_text="Report").locator("summary").click()
    menu.locator("form[action$='/report/'] select[name=category]").select_option("spam")
    menu.locator("form[action$='/report/'] textarea[name=reason]").fill("Selling pills")
    with reader.page.expect_navigation():
        menu.locator("form[action$='/report/'] button").click()
    assert "Thanks" in reader.page.inner_text("main")
    assert Report.objects.get(post_id=post_id).reason == "spam: Selling pills"

    # A moderator hides it from the admin's post list.
    moderator = User.objects.create_user(username="mod", password=PASSWORD, is_staff=True)
    moderator.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="posts", codename__in=["moderate", "view_post", "change_post"]
        ),
        *Permission.objects.filter(content_type__app_label="accounts", codename="view_user"),
    )
    admin = visitors()
    log_in(admin, "mod", "/admin/login/?next=/admin/posts/post/")
    assert admin.page.url.endswith("/admin/posts/post/"), admin.page.url
    assert admin.page.locator("select[name=action] option[value=hide_posts]").count() == 1
    admin.page.check(f"input[name=_selected_action][value='{post_id}']")
    admin.page.select_option("select[name=action]", "hide_posts")
    with admin.page.expect_navigation():
        admin.page.locator("button[name=index]").click()
    assert "Hid 1 post" in admin.page.inner_text("body")
    reader.go("/")
    assert article(reader, post_id).count() == 0
    assert reader.go(f"/posts/{post_id}/").status == 404
    reader.go("/@wren/")
    assert article(reader, post_id).count() == 0
    # The admin's own pages keep to the CSP too (admin.close() checks the console).
    wren = User.objects.get(username="wren")
    for path in ("/admin/posts/report/", f"/admin/accounts/user/{wren.pk}/change/"):
        assert admin.go(path).status == 200, path


def _seed_pages() -> dict[str, str]:
    """A small, realistic world for the screenshots; the paths to shoot."""
    ada = User.objects.create_user(
        username="ada", password=PASSWORD, display_name="Ada Lovelace", bio="Notes on engines."
    )
    li = User.objects.create_user(username="li_bai", password=PASSWORD, display_name="李白")
    long = User.objects.create_user(
        username="a_very_long_username_indeed",
        password=PASSWORD,
        display_name="Somebody With Quite A Long Name That Wraps",
    )
    for person in (li, long):
        follow(follower=person, followee=ada)
    follow(follower=ada, followee=li)
    texts = [
        (li, "床前明月光，疑是地上霜。举头望明月，低头思故乡。"),
        (long, "A link-free post with a very long word: " + "supercalifragilistic" * 4),
        (
            ada,
            "The Analytical Engine weaves algebraic patterns\njust as the Jacquard loom "
            "weaves flowers and leaves.",
        ),
        (ada, "Second thought: a post can have\n\nblank lines too."),
    ]
    posts = [create_post(author=author, text=text) for author, text in texts]
    for n in range(22):
        create_post(author=li, text=f"Verse {n + 1}: 白日依山尽，黄河入海流。")
    return {
        "home": "/",
        "profile": "/@ada/",
        "post": f"/posts/{posts[2].pk}/",
        "followers": "/@ada/followers/",
        "following": "/@ada/following/",
        "search": "/search/?q=engine",
        "signup": "/accounts/signup/",
        "login": "/accounts/login/",
        "404": "/no-such-page/",
    }


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_screenshots_of_the_main_pages(visitors, screenshots, width):
    viewport = DESKTOP if width == "desktop" else PHONE
    pages = _seed_pages()
    visitor = visitors(viewport)
    visitor_anonymous = visitors(viewport)
    log_in(visitor, "ada")
    for name, path in pages.items():
        who = visitor_anonymous if name in ("signup", "login", "404") else visitor
        response = who.go(path)
        assert response.status == (404 if name == "404" else 200), (name, response.status)
        who.page.screenshot(path=str(screenshots / f"{name}-{width}.png"), full_page=True)
        if name == "home":  # the whole feed is long: also what the first screen shows
            who.page.screenshot(path=str(screenshots / f"home-top-{width}.png"))
        scroll_width = who.page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= viewport["width"], f"{name} is {scroll_width}px wide on {width}"
    # The 429 page, with a tiny log-in limit.
    rates = {"post": ("", ""), "follow": ("", ""), "like": ("", ""), "signup": ("", "")}
    with override_settings(RATELIMIT_ENABLED=True, RATELIMIT_RATES={**rates, "login": ("1/d", "")}):
        for _ in range(2):
            log_in(visitor_anonymous, "nobody")
        assert "Slow down" in visitor_anonymous.page.inner_text("h1")
        visitor_anonymous.page.screenshot(path=str(screenshots / f"429-{width}.png"))
    assert re.search(r"\d+ seconds?|about \d+ minutes", visitor_anonymous.page.inner_text("main"))
