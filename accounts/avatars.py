"""Everyone's picture: a generated default (an SVG of the username's first letter
on a colour of its own), or the picture they uploaded.

The default depends on the username alone, so its URL never changes and the
browser keeps it; a page shows it with no query.
"""

import hashlib
from html import escape

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from accounts.models import User

# Hues spread around the wheel, each dark enough for white text (WCAG AA on 0.45 lightness).
_HUES = (0, 25, 45, 95, 140, 170, 200, 220, 250, 280, 310, 335)


def generated_svg(username: str) -> str:
    """The default picture of ``username``: the same letter and colour every time."""
    digest = hashlib.sha256(username.lower().encode()).digest()
    hue = _HUES[digest[0] % len(_HUES)]
    letter = escape(username[:1].upper() or "?")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48" width="48" height="48">'
        f'<rect width="48" height="48" rx="24" fill="hsl({hue} 55% 38%)"/>'
        '<text x="24" y="31.5" text-anchor="middle" font-family="system-ui,sans-serif" '
        f'font-size="22" font-weight="600" fill="#fff">{letter}</text></svg>'
    )


def uploaded_prefix() -> str:
    """What goes before an uploaded picture's storage name in its URL (``/accounts/``,
    the route ``accounts:avatar_file``): reversed once, then joined per picture."""
    return reverse("accounts:avatar_file", args=[0, "t"]).removesuffix("avatars/0/t.webp")


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
