"""Rate limits on the actions people can flood: posting, following, liking, sign-up, log-in.

A view is limited by one decorator line, ``@ratelimit("post")``, placed next
to the ``def`` (under ``require_POST`` and ``login_required``, so only
requests that would really act are counted). Each action has a per-user and a
per-IP rate, ``settings.RATELIMIT_RATES`` (documented in the settings). Only
POSTs count. Over either rate the view is not run: the answer is a 429 page
with ``Retry-After``.

The client API (``/api/``) has its own budget besides, Mastodon's: every request,
whatever its method, counts against ``RATELIMIT_RATES["api"]`` per token (per IP
without one), and its answers say where the request stands against the limit
that is nearest (``api_usage``, read by ``api.middleware``).

Counting is django-ratelimit's (``django_ratelimit.core.get_usage``): a
fixed window per key in the default cache, created with ``add`` and bumped
with the cache's atomic ``incr``. When the cache fails (Redis down; the cache
ignores the error and answers None), ``RATELIMIT_FAIL_OPEN`` lets the request
through rather than refusing everyone.
"""

import hashlib
import ipaddress
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_ratelimit import ALL
from django_ratelimit.core import get_usage

View = Callable[..., HttpResponse]
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ACTIONS = (
    "post",
    "follow",
    "like",
    "signup",
    "login",
    "password_reset",
    "twofactor",
    "account_mail",
    "export",
    "import_follows",
)

# The session key under which a log-in waiting for its second factor keeps the
# account's id (accounts.twofactor_views): that step's per-account limit.
PENDING_TWO_FACTOR_SESSION_KEY = "accounts_2fa_pending"


def _forwarded_for(request: HttpRequest) -> list[str]:
    """The hops of the request, the farthest first: X-Forwarded-For, then REMOTE_ADDR."""
    header = str(request.META.get("HTTP_X_FORWARDED_FOR", "") or "")
    hops = [part.strip() for part in header.split(",") if part.strip()]
    return [*hops, str(request.META.get("REMOTE_ADDR", "") or "")]


def _is_trusted(hop: str, proxies: tuple[IPNetwork, ...]) -> bool:
    try:
        address = ipaddress.ip_address(hop)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # ::ffff:10.0.0.1 from a dual-stack socket
    return any(address in network for network in proxies)


def client_address(request: HttpRequest) -> str:
    """The address the request came from: the rightmost hop that is not our own proxy.

    Hops left of that one were written by the client and prove nothing (the
    leftmost X-Forwarded-For entry is whatever the client sent); with no
    trusted proxies X-Forwarded-For is not read at all.
    """
    proxies = settings.TRUSTED_PROXIES
    if not proxies:
        return str(request.META.get("REMOTE_ADDR", "") or "")
    hops = _forwarded_for(request)
    if isinstance(proxies, int):
        # Each of our N proxies appended one hop: the N rightmost are theirs.
        return hops[max(len(hops) - 1 - proxies, 0)]
    for hop in reversed(hops):
        if not _is_trusted(hop, proxies):
            return hop
    return hops[0]  # every hop is ours: the request started inside


def client_ip(request: HttpRequest) -> str:
    """The client's address for per-IP limits, an IPv6 one cut to its /64 (one network)."""
    raw = client_address(request)
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw[:64] or "unknown"
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False).network_address)
    return str(address)


def login_key(username: str) -> str:
    """The username as the database compares it: every spelling of one account, one key.

    Log-in finds the account with ``UPPER(username) = UPPER(typed)``, and
    ``UPPER`` maps look-alikes onto ASCII (U+017F long s to ``S``, U+0131
    dotless i to ``I``); NFKC is what Django's username field does to what is
    typed. Keying on the upper-cased text (lower-cased again, for readable
    keys) gives "ka" + two long s, ``KASS`` and ``kass`` one budget of
    guesses. The log-in form refuses such letters anyway
    (accounts.forms.LoginForm): this keeps the two in step should the form
    ever accept them.
    """
    return unicodedata.normalize("NFKC", username).strip().upper().lower()[:150]


def _user_key(action: str, request: HttpRequest) -> str | None:
    if action == "login":
        # Per account tried, whoever tries it.
        return login_key(str(request.POST.get("username", ""))) or None
    if action == "password_reset":
        # Per address asked for, whoever asks.
        return str(request.POST.get("email", "")).strip().lower()[:254] or None
    if action == "twofactor":
        pending = request.session.get(PENDING_TWO_FACTOR_SESSION_KEY) or {}
        return str(pending.get("user_id", "")) or None
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return str(user.pk)
    return None


def retry_after(request: HttpRequest, action: str) -> int | None:
    """Count this request; the seconds to wait when it is over a limit, else None."""
    if not settings.RATELIMIT_ENABLED or request.method != "POST":
        return None
    user_rate, ip_rate = settings.RATELIMIT_RATES[action]
    keys = [(user_rate, "user", _user_key(action, request)), (ip_rate, "ip", client_ip(request))]
    wait: int | None = None
    for rate, scope, value in keys:
        if not rate or value is None:
            continue
        usage = get_usage(
            request,
            group=f"{action}:{scope}",
            key=lambda _group, _request, value=value: value,
            rate=rate,
            method="POST",
            increment=True,
        )
        if usage is not None and usage["should_limit"]:
            wait = max(wait or 1, usage["time_left"], 1)
    return wait


def too_many_requests(request: HttpRequest, wait: int) -> HttpResponse:
    """The friendly 429 page, with Retry-After in seconds."""
    if wait < 90:
        wait_text = f"{wait} second{'s' if wait != 1 else ''}"
    else:
        wait_text = f"about {round(wait / 60)} minutes"
    context = {"retry_after": wait, "wait_text": wait_text}
    response = render(request, "429.html", context, status=429)
    response["Retry-After"] = str(wait)
    return response


def ratelimit(action: str) -> Callable[[View], View]:
    """Limit a view as ``action`` (one of ACTIONS) per user and per IP."""
    if action not in ACTIONS:
        raise ValueError(f"unknown rate-limited action {action!r}")

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            wait = retry_after(request, action)
            if wait is not None:
                return too_many_requests(request, wait)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


@dataclass(frozen=True)
class Usage:
    """Where a request stands against one limit: ``wait`` is set when it is over it."""

    limit: int
    remaining: int
    reset_at: float  # seconds since the epoch when the window ends
    wait: int | None


def _usage(counted: dict[str, Any] | None) -> Usage | None:
    if counted is None:
        return None
    left = max(int(counted["time_left"]), 1)
    return Usage(
        limit=counted["limit"],
        remaining=max(counted["limit"] - counted["count"], 0),
        reset_at=time.time() + left,
        wait=left if counted["should_limit"] else None,
    )


def _bearer(request: HttpRequest) -> str | None:
    """The bearer token's digest: a key per token that keeps the token out of the cache."""
    scheme, _, value = str(request.headers.get("Authorization", "")).partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return hashlib.sha256(value.strip().encode()).hexdigest()


def api_usage(request: HttpRequest) -> Usage | None:
    """Count an API request against the API's budget (``RATELIMIT_RATES["api"]``):
    per token, or per IP for a request without one. None when limits are off."""
    if not settings.RATELIMIT_ENABLED:
        return None
    token_rate, ip_rate = settings.RATELIMIT_RATES.get("api", ("", ""))
    token = _bearer(request)
    scope, rate, value = ("token", token_rate, token) if token else ("ip", ip_rate, None)
    if not rate:
        return None
    value = value or client_ip(request)
    return _usage(
        get_usage(
            request,
            group=f"api:{scope}",
            key=lambda _group, _request: value,
            rate=rate,
            method=ALL,
            increment=True,
        )
    )


def action_usage(request: HttpRequest, action: str) -> Usage | None:
    """Where a request already counted by ``retry_after`` stands against ``action``'s
    per-user limit, counting nothing; None when that limit does not apply."""
    if not settings.RATELIMIT_ENABLED or request.method != "POST":
        return None
    rate = settings.RATELIMIT_RATES[action][0]
    value = _user_key(action, request)
    if not rate or value is None:
        return None
    return _usage(
        get_usage(
            request,
            group=f"{action}:user",
            key=lambda _group, _request: value,
            rate=rate,
            method="POST",
            increment=False,
        )
    )
