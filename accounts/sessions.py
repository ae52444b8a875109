"""A user's signed-in sessions: recorded at log-in, listed, ended one by one or all.

Django keeps sessions (the session engine's store) but not which belong to
whom. ``UserSession`` rows, keyed (user, session key), say so: written at
log-in (the ``user_logged_in`` signal), removed at log-out, their last-seen
time written at most every ``ACCOUNTS_SESSION_TOUCH_SECONDS`` by the
middleware (the session itself remembers when it last wrote). Ending a
session deletes it from the session store, so its cookie signs nobody in.

Pages never show a session key (it is the cookie): a session is named by a
digest of its key.
"""

import hashlib
import re
import time
from dataclasses import dataclass
from datetime import datetime
from importlib import import_module

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone

from accounts.models import User, UserSession
from feed_project.ratelimits import client_address

SEEN_SESSION_KEY = "accounts_seen_at"


def _store(session_key: str | None = None):
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)


def digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()[:32]


def _describe(request: HttpRequest) -> dict[str, str]:
    agent = str(request.META.get("HTTP_USER_AGENT", ""))[:300]
    return {"user_agent": agent, "ip": client_address(request)[:64]}


def record_login(*, request: HttpRequest, user: User) -> None:
    if request.session.session_key is None:
        request.session.save()  # a session flushed by the log-in has no key until saved
    now = timezone.now()
    UserSession.objects.update_or_create(
        user_id=user.pk,
        session_key=request.session.session_key,
        defaults={**_describe(request), "last_seen_at": now},
        create_defaults={**_describe(request), "last_seen_at": now, "created_at": now},
    )
    request.session[SEEN_SESSION_KEY] = int(time.time())


def touch(request: HttpRequest) -> None:
    """Note that the signed-in session of ``request`` is here: one UPDATE every few minutes."""
    seen = request.session.get(SEEN_SESSION_KEY, 0)
    now = int(time.time())
    key = request.session.session_key
    recent = isinstance(seen, int) and now - seen < settings.ACCOUNTS_SESSION_TOUCH_SECONDS
    if key is None or recent:
        return
    fields = {**_describe(request), "last_seen_at": timezone.now()}
    user_id = request.user.pk
    if not UserSession.objects.filter(user_id=user_id, session_key=key).update(**fields):
        # A session from before sessions were recorded. Two first requests of it may
        # come at once: the second finds the row the first wrote.
        UserSession.objects.bulk_create(
            [
                UserSession(
                    user_id=user_id, session_key=key, created_at=fields["last_seen_at"], **fields
                )
            ],
            ignore_conflicts=True,
        )
    request.session[SEEN_SESSION_KEY] = now


def rekey(*, user: User, old_key: str | None, new_key: str | None) -> None:
    """The current session got a new key (Django cycles it when the password changes)."""
    if old_key and new_key and old_key != new_key:
        UserSession.objects.filter(user_id=user.pk, session_key=old_key).update(session_key=new_key)


def forget(*, user_id: int, session_key: str | None) -> None:
    """Log-out: the session store drops the session itself; drop its row."""
    if session_key:
        UserSession.objects.filter(user_id=user_id, session_key=session_key).delete()


@dataclass(frozen=True)
class SessionInfo:
    id: str
    device: str
    ip: str
    created_at: datetime
    last_seen_at: datetime
    current: bool


def list_sessions(*, user: User, current_key: str | None) -> list[SessionInfo]:
    """The user's sessions, the current one first, then by last seen, newest first."""
    rows = UserSession.objects.filter(user_id=user.pk).order_by("-last_seen_at")
    sessions = [
        SessionInfo(
            id=digest(row.session_key),
            device=device_name(row.user_agent),
            ip=row.ip,
            created_at=row.created_at,
            last_seen_at=row.last_seen_at,
            current=row.session_key == current_key,
        )
        for row in rows
    ]
    return sorted(sessions, key=lambda s: not s.current)


def _end(rows: list[UserSession]) -> int:
    for row in rows:
        _store(row.session_key).delete()
    UserSession.objects.filter(
        user_id__in={row.user_id for row in rows},
        session_key__in=[row.session_key for row in rows],
    ).delete()
    return len(rows)


def end_session(*, user: User, session_id: str, current_key: str | None) -> bool:
    """End one of ``user``'s other sessions, named by its digest; False if there is none."""
    rows = [
        row
        for row in UserSession.objects.filter(user_id=user.pk)
        if digest(row.session_key) == session_id and row.session_key != current_key
    ]
    return _end(rows) > 0


def end_other_sessions(*, user: User, current_key: str | None) -> int:
    """End every session of ``user`` but ``current_key`` (None: every one)."""
    rows = list(UserSession.objects.filter(user_id=user.pk).exclude(session_key=current_key or ""))
    return _end(rows)


_BROWSERS = [
    ("Edge", r"Edg(e|A|iOS)?/"),
    ("Opera", r"OPR/|Opera"),
    ("Firefox", r"Firefox/|FxiOS/"),
    ("Chrome", r"Chrome/|CriOS/|Chromium/"),
    ("Safari", r"Safari/"),
    ("curl", r"^curl/"),
]
_SYSTEMS = [
    ("iPhone", r"iPhone"),
    ("iPad", r"iPad"),
    ("Android", r"Android"),
    ("Windows", r"Windows"),
    ("macOS", r"Mac OS X|Macintosh"),
    ("ChromeOS", r"CrOS"),
    ("Linux", r"Linux"),
]


def device_name(user_agent: str) -> str:
    """A person's name for a browser: "Firefox on Windows"; "Unknown device" if none fits.

    A few patterns, not a user-agent database: the page needs a hint to tell
    one's phone from one's laptop, nothing more.
    """
    browser = next((name for name, rx in _BROWSERS if re.search(rx, user_agent)), None)
    system = next((name for name, rx in _SYSTEMS if re.search(rx, user_agent)), None)
    if browser and system:
        return f"{browser} on {system}"
    return browser or system or "Unknown device"
