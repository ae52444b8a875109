"""Images and content warnings in headless Chromium: a post with two images
and their alt texts, seen in a follower's feed; a content warning opened; the
compose box's counter and alt fields; screenshots at desktop and phone width."""

import io

import pytest
from PIL import Image, ImageDraw

from accounts.models import User
from posts.models import Post, PostMedia
from relations.services import follow
from tests.browser.test_site import (  # noqa: F401 (visitors: a fixture)
    DESKTOP,
    PASSWORD,
    PHONE,
    article,
    log_in,
    sign_up,
    visitors,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def picture(size: tuple[int, int], colors: tuple[str, str]) -> bytes:
    """A JPEG with stripes, so the screenshots show something."""
    image = Image.new("RGB", size, colors[0])
    draw = ImageDraw.Draw(image)
    for x in range(0, size[0], 80):
        draw.rectangle([x, 0, x + 39, size[1]], fill=colors[1])
    out = io.BytesIO()
    image.save(out, "JPEG")
    return out.getvalue()


def choose_images(visitor, files: list[tuple[str, bytes]]) -> None:
    visitor.page.set_input_files(
        "form.compose input[name=media]",
        [{"name": name, "mimeType": "image/jpeg", "buffer": data} for name, data in files],
    )


def test_a_post_with_two_images_reaches_a_follower_and_a_warning_opens(visitors):  # noqa: F811
    writer, reader = visitors(), visitors()
    sign_up(writer, "wren", "Wren Writer")
    sign_up(reader, "robin", "Robin Reader")
    follow(follower=User.objects.get(username="robin"), followee=User.objects.get(username="wren"))

    # The compose box: the extras open, two images chosen, an alt field for each.
    page = writer.page
    writer.go("/")
    page.click("form.compose summary")
    choose_images(
        writer,
        [
            ("heron.jpg", picture((900, 600), ("#2b6cb0", "#90cdf4"))),
            ("reeds.jpg", picture((600, 800), ("#2f855a", "#9ae6b4"))),
        ],
    )
    alts = page.locator("form.compose [data-compose-alt]")
    assert [alts.nth(n).is_visible() for n in range(4)] == [True, True, False, False]
    assert "heron.jpg" in alts.nth(0).inner_text()
    alts.nth(0).locator("textarea").fill("A grey heron standing in shallow water")
    alts.nth(1).locator("textarea").fill("Reeds bending in the wind")
    text = "Down at the lake this morning https://example.com/" + "long-path/" * 20
    page.fill("form.compose textarea[name=text]", text)
    counter = page.locator("form.compose [data-compose-counter]")
    assert (
        counter.inner_text()
        == f"{500 - (len('Down at the lake this morning ') + 23)} characters left"
    )
    writer.submit("form.compose")
    page.locator("#feed article .post-media img").first.wait_for()  # in place, with its images
    post = Post.objects.get(author__username="wren")
    assert PostMedia.objects.filter(post=post).count() == 2

    reader.go("/")
    images = article(reader, post.pk).locator(".post-media img")
    assert images.count() == 2
    assert images.nth(0).get_attribute("alt") == "A grey heron standing in shallow water"
    assert images.nth(1).get_attribute("alt") == "Reeds bending in the wind"
    # Thumbnails load lazily: in view, both arrive (the image view answers the follower).
    article(reader, post.pk).scroll_into_view_if_needed()
    reader.page.wait_for_function(
        "s => [...document.querySelectorAll(s)].every(i => i.complete && i.naturalWidth > 0)",
        arg=f"article[data-post-id='{post.pk}'] img",
    )

    # A content warning: closed, the text hidden; one click opens it.
    writer.go("/")
    page.click("form.compose summary")
    page.fill("form.compose input[name=spoiler_text]", "The end of the film")
    page.fill("form.compose textarea[name=text]", "The butler did it, in the library.")
    writer.submit("form.compose")
    page.locator("#feed article details.post-warning").first.wait_for()  # in place
    warned = Post.objects.get(spoiler_text="The end of the film")
    reader.go("/")
    warning = article(reader, warned.pk).locator("details.post-warning")
    assert "The end of the film" in warning.locator("summary").inner_text()
    assert not warning.locator(".post-text").is_visible()
    warning.locator("summary").click()
    assert warning.locator(".post-text").inner_text() == "The butler did it, in the library."


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_screenshots_of_posts_with_images_and_warnings(visitors, screenshots, width):  # noqa: F811
    from posts import media
    from posts.services import create_post
    from tests.images import upload

    viewport = DESKTOP if width == "desktop" else PHONE
    ada = User.objects.create_user(username="ada", password=PASSWORD, display_name="Ada Lovelace")
    li = User.objects.create_user(username="li_bai", password="x", display_name="李白")
    follow(follower=li, followee=ada)
    shots = [
        [("loom.jpg", picture((1200, 800), ("#744210", "#f6e05e")), "A Jacquard loom's cards")],
        [
            (f"{n}.jpg", picture((800, 800), (a, b)), f"Study {n}")
            for n, (a, b) in enumerate(
                [("#c53030", "#feb2b2"), ("#2b6cb0", "#bee3f8"), ("#276749", "#c6f6d5")]
            )
        ],
    ]
    posts = [
        create_post(
            author=ada,
            text=f"{len(files)} picture(s) from the workshop",
            media=media.prepare_all([upload(n, d) for n, d, _ in files], [a for *_, a in files]),
        )
        for files in shots
    ]
    create_post(author=ada, text="Spoilers below.", spoiler_text="Ending of the novel")
    visitor = visitors(viewport)  # signed out: ada's pages are public
    for name, path in (("media-profile", "/@ada/"), ("media-post", f"/posts/{posts[0].pk}/")):
        visitor.go(path)
        for summary in visitor.page.locator("details.post-warning summary").all():
            summary.click()
        visitor.page.screenshot(path=str(screenshots / f"{name}-{width}.png"), full_page=True)
        scroll_width = visitor.page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= viewport["width"], f"{name} is {scroll_width}px wide on {width}"
    # The compose box with its extras open, as ada: feed below it.
    log_in(visitor, "ada")
    visitor.go("/")
    visitor.page.click("form.compose summary")
    visitor.page.fill(
        "form.compose textarea[name=text]", "Counting: https://example.com/a/long/link"
    )
    visitor.page.screenshot(path=str(screenshots / f"media-compose-{width}.png"))
    assert visitor.page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
