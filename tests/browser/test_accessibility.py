"""axe-core (npm, installed by `make test`) on the main pages, light and dark, desktop and
phone: no serious or critical violation. Screenshots of each go to
artifacts/screenshots/; a desktop screen shows at least 7 one-line posts below
the compose box."""

import json
from pathlib import Path

import pytest

from accounts.models import User
from posts.services import create_post, like
from relations.services import follow
from timelines.suggestions import ranking

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery-staple-42"
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
SIGNED_IN = ("/", "/@wren/", "DETAIL", "/notifications/", "/search/?q=post", "/suggestions/")
SIGNED_OUT = ("/accounts/signup/", "/accounts/login/")


@pytest.fixture
def world() -> dict[str, str]:
    wren = User.objects.create_user(username="wren", password=PASSWORD, display_name="Wren")
    robin = User.objects.create_user(username="robin", password=PASSWORD, display_name="Robin")
    follow(follower=robin, followee=wren)
    follow(follower=wren, followee=robin)
    posts = [create_post(author=wren, text=f"Numbered post {n:02d}") for n in range(12)]
    create_post(author=robin, text="A reply", in_reply_to=posts[-1])
    like(user=wren, post=create_post(author=robin, text="Robin's post, liked"))
    # Who to follow: Wren's follows, one of them locked, suggested to Robin.
    for name in ("kit", "lark"):
        follow(follower=wren, followee=User.objects.create_user(username=name, password=PASSWORD))
    User.objects.filter(username="lark").update(locked=True)  # its button asks instead
    ranking.refresh(robin.pk)
    return {"DETAIL": f"/posts/{posts[-1].pk}/"}


def _axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"no {AXE}: `make test` installs it (make npm-tools: npm ci)")
    return AXE.read_text()


def _serious(page, source: str) -> list[str]:
    # The test's own script: the page's CSP rightly refuses inline scripts, so the
    # contexts here bypass it (bypass_csp) for axe alone.
    page.add_script_tag(content=source)
    result = page.evaluate(
        "async () => JSON.stringify((await axe.run(document, "
        "{resultTypes: ['violations']})).violations)"
    )
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in json.loads(result)
        if v["impact"] in ("serious", "critical")
    ]


def _log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():  # not the log-in page, still loaded, while the POST runs
        page.locator("main form button[type=submit]").first.click()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_main_pages_have_no_serious_accessibility_violations(
    browser, live_server, world, screenshots, scheme, width
):
    source = _axe_source()
    found: dict[str, list[str]] = {}
    for signed_in, paths in ((False, SIGNED_OUT), (True, SIGNED_IN)):
        context = browser.new_context(
            base_url=live_server.url,
            viewport=WIDTHS[width],
            color_scheme=scheme,
            bypass_csp=True,
        )
        page = context.new_page()
        if signed_in:
            _log_in(page, "robin")
        for path in paths:
            page.goto(world.get(path, path))
            page.wait_for_load_state()
            assert "{#" not in page.inner_text("body"), path  # no template comment shows
            name = path.strip("/").replace("/", "_").replace("?", "_").replace("=", "_")
            page.screenshot(path=screenshots / f"{name or 'home'}-{width}-{scheme}.png")
            problems = _serious(page, source)
            if problems:
                found[path] = problems
        context.close()
    assert not found, found


def test_a_desktop_screen_shows_seven_one_line_posts_below_the_compose_box(
    browser, live_server, world
):
    context = browser.new_context(base_url=live_server.url, viewport=WIDTHS["desktop"])
    page = context.new_page()
    _log_in(page, "robin")
    page.goto("/")
    compose = page.locator("form.compose").bounding_box()
    boxes = [box for box in page.locator("#feed article").all() if box.is_visible()]
    inside = [
        b
        for b in (box.bounding_box() for box in boxes)
        if b["y"] >= compose["y"] + compose["height"] and b["y"] + b["height"] <= 900
    ]
    context.close()
    assert len(inside) >= 7, len(inside)
