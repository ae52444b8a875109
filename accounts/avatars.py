"""Everyone's picture: a generated default (an SVG of the username's first letter
on a colour of its own), or the picture they uploaded.

The default depends on the username alone, so its URL never changes and the
browser keeps it; a page shows it with no query. Each picture has a PNG twin
(``static_avatar_url``) for clients that draw no SVG or WebP (Mastodon's apps
take ``avatar_static`` as PNG, JPEG or GIF).
"""

import colorsys
import hashlib
import io
from functools import lru_cache
from html import escape

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe
from PIL import Image, ImageDraw, ImageFont

from accounts.models import User

# Hues spread around the wheel, each dark enough for white text (WCAG AA on 0.45 lightness).
_HUES = (0, 25, 45, 95, 140, 170, 200, 220, 250, 280, 310, 335)


PNG_SIZE = 96  # pixels a side: the SVG's 48, sharp on a 2x screen


def _hue(username: str) -> int:
    digest = hashlib.sha256(username.lower().encode()).digest()
    return _HUES[digest[0] % len(_HUES)]


def generated_svg(username: str) -> str:
    """The default picture of ``username``: the same letter and colour every time."""
    hue = _hue(username)
    letter = escape(username[:1].upper() or "?")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48" width="48" height="48">'
        f'<rect width="48" height="48" rx="24" fill="hsl({hue} 55% 38%)"/>'
        '<text x="24" y="31.5" text-anchor="middle" font-family="system-ui,sans-serif" '
        f'font-size="22" font-weight="600" fill="#fff">{letter}</text></svg>'
    )


@lru_cache(maxsize=1024)  # a name's picture never changes, and lists show the same few
def generated_png(username: str) -> bytes:
    """``generated_svg`` drawn as a PNG: the same circle, colour and letter."""
    scale = PNG_SIZE / 48
    red, green, blue = colorsys.hls_to_rgb(_hue(username) / 360, 0.38, 0.55)
    image = Image.new("RGBA", (PNG_SIZE, PNG_SIZE), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse(
        (0, 0, PNG_SIZE - 1, PNG_SIZE - 1),
        fill=(round(red * 255), round(green * 255), round(blue * 255)),
    )
    font = ImageFont.load_default(size=round(22 * scale))
    letter = username[:1].upper() or "?"
    draw.text((PNG_SIZE / 2, PNG_SIZE / 2), letter, fill="white", font=font, anchor="mm")
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def uploaded_prefix() -> str:
    """What goes before an uploaded picture's storage name in its URL (``/accounts/``,
    the route ``accounts:avatar_file``): reversed once, then joined per picture."""
    return reverse("accounts:avatar_file", args=[0, "t"]).removesuffix("avatars/0/t.webp")


def static_avatar_url(user: User) -> str:
    """A PNG of ``user``'s picture: the uploaded one's twin (``avatar_upload.serve_png``),
    else the generated one's (``generated_png``)."""
    if user.avatar:
        return uploaded_prefix() + user.avatar.removesuffix(".webp") + ".png"
    return reverse("accounts:avatar_png", args=[user.username])


def avatar_url(user: User) -> str:
    """The picture ``user`` uploaded (``accounts.avatar_upload``), else the generated one."""
    if user.avatar:
        return uploaded_prefix() + user.avatar
    return reverse("accounts:avatar", args=[user.username])


@require_safe
@cache_control(public=True, max_age=7 * 24 * 3600, immutable=True)
def generated_view(request: HttpRequest, username: str) -> HttpResponse:
    """``/accounts/avatar/<username>.svg``: the default picture, whoever asks."""
    return HttpResponse(generated_svg(username), content_type="image/svg+xml")


@require_safe
@cache_control(public=True, max_age=7 * 24 * 3600, immutable=True)
def generated_png_view(request: HttpRequest, username: str) -> HttpResponse:
    """``/accounts/avatar/<username>.png``: the default picture as a PNG, whoever asks."""
    return HttpResponse(generated_png(username), content_type="image/png")
