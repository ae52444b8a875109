"""Quote a post, edit it and read its history, follow a #tag and a link: in a real browser,
with screenshots at desktop and phone width."""

import pytest

from accounts.models import User
from posts.models import Post
from tests.browser.test_site import (  # noqa: F401 (visitors: the fixture)
    DESKTOP,
    PHONE,
    article,
    sign_up,
    visitors,
    write_post,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_quote_edit_history_and_tag_pages(visitors, screenshots, width):  # noqa: F811
    viewport = DESKTOP if width == "desktop" else PHONE
    writer, reader = visitors(viewport), visitors(viewport)
    sign_up(writer, "wren", "Wren Writer")
    sign_up(reader, "robin", "Robin Reader")
    reader.go("/@wren/")
    reader.submit("form[action$='/follow/']")
    reader.page.locator("form[action$='/unfollow/']").wait_for()  # in place
    post_id = write_post(writer, "Frsh #Bread at https://example.com/bakery/today-only 面包")

    # The link and the tag are links; the tag page lists the post.
    reader.go(f"/posts/{post_id}/")
    link = article(reader, post_id).locator("a.link")
    assert link.get_attribute("href") == "https://example.com/bakery/today-only"
    assert link.get_attribute("rel") == "nofollow noopener ugc"
    reader.follow_link(article(reader, post_id).locator("a.hashtag"))
    assert reader.page.url.endswith("/tags/bread/")
    assert article(reader, post_id).is_visible()

    # Quote it, from the form on the post's page.
    reader.go(f"/posts/{post_id}/")
    reader.page.fill("form#quote textarea[name=text]", "Best in town #bread")
    reader.submit("form#quote")
    quote = Post.objects.get(author=User.objects.get(username="robin"))
    assert quote.quote_of_id == post_id
    reader.go("/")
    embedded = article(reader, quote.pk).locator(f"[data-quoted-post-id='{post_id}']")
    assert "Frsh" in embedded.inner_text()

    # The writer fixes the typo: the quote shows the new text, the post says "edited".
    writer.go(f"/posts/{post_id}/")
    article(writer, post_id).locator("details.post-more > summary").click()  # the "more" menu
    writer.follow_link(article(writer, post_id).locator("a.post-edit"))
    writer.page.fill(
        "textarea[name=text]", "Fresh #Bread at https://example.com/bakery/today-only 面包"
    )
    writer.submit("main form.compose")
    assert writer.page.url.endswith(f"/posts/{post_id}/")
    assert "edited" in article(writer, post_id).locator(".post-edited").inner_text()
    reader.go("/")
    assert "Fresh #Bread" in embedded.inner_text()
    reader.page.screenshot(path=str(screenshots / f"quote-{width}.png"), full_page=True)

    # The history lists both versions, newest first.
    writer.follow_link(article(writer, post_id).locator("a.post-edited"))
    versions = writer.page.locator(".post-version .post-text").all_inner_texts()
    assert [v.split(" at ")[0] for v in versions] == ["Fresh #Bread", "Frsh #Bread"]
    writer.page.screenshot(path=str(screenshots / f"history-{width}.png"), full_page=True)

    # Deleted, the quoted post is "post unavailable" inside the quote.
    writer.go(f"/posts/{post_id}/")
    article(writer, post_id).locator("details.post-more > summary").click()
    article(writer, post_id).locator("details.confirm > summary").click()  # asks first
    writer.submit(f"article[data-post-id='{post_id}'] form[action$='/delete/']")
    reader.go("/")
    assert "post unavailable" in embedded.inner_text()
    for who in (reader, writer):
        scroll_width = who.page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= viewport["width"], f"{who.page.url} is {scroll_width}px wide"
