"""Hostile input on every form and query parameter: never a 500, nothing written when refused.

Hypothesis throws overlong strings, NUL bytes, invalid UTF-8 (raw bytes in
query strings and form bodies), HTML and script tags, SQL fragments, negative
and huge numbers, malformed cursors and awkward unicode (RTL marks, emoji,
CJK, combining characters) at each page and action of the public contract.
For every request:

- the answer is never a 5xx;
- a refused request (a 4xx, or a form shown again with its errors) wrote
  nothing: the rows of User, Post, Follower, Followee, Like and Report are
  unchanged, and the two follow tables still mirror each other;
- a redirect never leaves the site (``next`` is not an open redirect);
- text that was stored renders escaped on every page that shows it.

Examples share one database (the test's transaction), like requests share a site.
"""

import re
from urllib.parse import quote, quote_from_bytes, urlsplit

import pyotp
import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts import twofactor
from accounts.models import Export, Invite, RecoveryCode, SignupApplication, TwoFactor, User
from posts.models import Like, Post, Report
from posts.services import create_post
from relations.models import Followee, Follower
from tests.conftest import PASSWORD
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

NASTY = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "%00",
    "\r\n\r\n",
    "<script>alert(1)</script>",
    '"><script>alert(document.cookie)</script>',
    "<img src=x onerror=alert(1)>",
    "</textarea><script>alert(1)</script>",
    "javascript:alert(1)",
    "{{ 7|add:7 }}{% debug %}",
    "' OR '1'='1",
    "'; DROP TABLE posts_post; --",
    "1; SELECT pg_sleep(10)--",
    "\\",
    "%",
    "_%_",
    "-1",
    "0",
    "-99999999999999999999999999",
    "99999999999999999999999999999999",
    "1e308",
    "NaN",
    "\u202eevil\u202c",
    "\u200f\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "👩‍👩‍👧‍👦🏳️‍🌈",
    "微博的时间线是按时间倒序排列的",
    "e\u0301\u0301\u0301\u0301\u0301",
    "Z\u0351\u0352\u0353\u0354\u0355\u0356",
    "\ufeff\ufffe\uffff",
    "x" * 281,
    "長" * 5000,
    "//evil.example/",
    "https://evil.example/",
    "/\\evil.example",
    "@alice",
    "0000000000000000",
    "ZZZZZZZZZZZZZZZZ",
    "zzzzzzzzzzzzzzzz",
    "0000430RE9XL850",
    "0000430RE9XL85000",
]


def _huge(n: int) -> str:
    return "A" * n


nasty_text = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=60),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.integers(min_value=200, max_value=40_000).map(_huge),
    st.tuples(st.sampled_from(NASTY), st.text(max_size=20)).map("".join),
)
raw_bytes = st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\x80"]),
)


def _rows() -> dict[str, int]:
    models = {"user": User, "post": Post, "follower": Follower, "followee": Followee}
    models |= {"like": Like, "report": Report, "two-factor": TwoFactor, "invite": Invite}
    models |= {"recovery code": RecoveryCode, "application": SignupApplication}
    counts = {name: model.objects.count() for name, model in models.items()}
    counts["live posts"] = Post.objects.filter(deleted_at__isnull=True).count()
    return counts


def _assert_sane(response, before: dict[str, int], *, refused_if_200: bool = False) -> None:
    """No 5xx; a refused request wrote nothing; a redirect stays on the site."""
    assert response.status_code < 500, response.content[:2000]
    after = _rows()
    assert after["follower"] == after["followee"], "the follow tables no longer mirror"
    if response.status_code >= 400 or (refused_if_200 and response.status_code == 200):
        assert after == before
    if response.status_code in (301, 302, 303, 307, 308):
        location = response["Location"]
        parts = urlsplit(location)
        assert parts.netloc in ("", "testserver"), location
        assert not location.startswith(("//", "/\\")), location


def _assert_escaped(html: str, stored: str) -> None:
    """Text that holds markup appears only escaped."""
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    for line in stored.splitlines():
        if "<" in line:
            assert line not in html, line


def _url(name: str, *args: str) -> str:
    return reverse(name, args=args)


@pytest.fixture(autouse=True)
def _limits_off():
    """Hypothesis posts hundreds of times a minute: that is not what is tested here."""
    with override_settings(RATELIMIT_ENABLED=False):
        yield


@pytest.fixture
def cast(db):
    """fuzzer acts; alice has posts to page through and act on; bob follows alice."""
    fuzzer = UserFactory(username="fuzzer")
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob")
    posts = [create_post(author=alice, text=f"post {n}") for n in range(3)]
    client = Client()
    client.force_login(fuzzer)
    return {"fuzzer": fuzzer, "alice": alice, "bob": bob, "posts": posts, "client": client}


# --- Query parameters ------------------------------------------------------------------

PAGES = [
    "/",
    "/@alice/",
    "/@alice/followers/",
    "/@alice/following/",
    "/search/",
    "/notifications/",
    "/timeline/new/",
    "/tags/",
    "/tags/news/",
    "/public/",
    "/messages/",
    "/follow-requests/",
    "/settings/muted-words/",
]
PARAMS = ["before", "after", "q", "next", "page"]


@FUZZ
@given(
    page=st.sampled_from(PAGES),
    params=st.dictionaries(st.sampled_from(PARAMS), nasty_text, max_size=3),
    signed_in=st.booleans(),
)
def test_query_parameters_never_break_a_page(cast, page, params, signed_in):
    client = cast["client"] if signed_in else Client()
    before = _rows()
    response = client.get(page, params)
    _assert_sane(response, before)
    assert _rows() == before
    if response.status_code == 200:
        _assert_escaped(response.content.decode(), " ".join(params.values()))


@FUZZ
@given(
    page=st.sampled_from(PAGES),
    name=st.sampled_from(PARAMS),
    raw=raw_bytes,
    encode=st.booleans(),
)
def test_invalid_utf8_in_query_strings_is_not_a_500(cast, page, name, raw, encode):
    value = quote_from_bytes(raw).encode() if encode else raw
    # WSGI carries the query string as latin-1 code points, byte for byte.
    query_string = (name.encode() + b"=" + value).decode("latin-1")
    before = _rows()
    response = cast["client"].generic("GET", page, QUERY_STRING=query_string)
    _assert_sane(response, before)
    assert _rows() == before


@FUZZ
@given(post_id=nasty_text, suffix=st.sampled_from(["", "delete/", "edit/", "history/"]))
def test_any_post_id_in_the_path_is_not_a_500(cast, post_id, suffix):
    path = f"/posts/{quote(post_id, safe='')}/{suffix}"
    before = _rows()
    reads = ("", "history/")
    response = (
        cast["client"].get(path) if suffix in reads else cast["client"].post(path, {"text": "x"})
    )
    _assert_sane(response, before)
    assert _rows() == before  # nobody's post but the fuzzer's could go, and they have none


@FUZZ
@given(tag=nasty_text)
def test_any_tag_in_the_path_is_not_a_500(cast, tag):
    before = _rows()
    response = cast["client"].get(f"/tags/{quote(tag, safe='')}/")
    _assert_sane(response, before)
    assert _rows() == before


@FUZZ
@given(quote_of=nasty_text, text=nasty_text)
def test_any_quote_of_field_is_not_a_500(cast, quote_of, text):
    before = _rows()
    response = cast["client"].post("/posts/new/", {"text": text, "quote_of": quote_of})
    _assert_sane(response, before)


@FUZZ
@given(
    username=nasty_text,
    action=st.sampled_from(
        ["", "followers/", "following/", "follow/", "unfollow/", "block/", "mute/", "report/"]
    ),
)
def test_any_username_in_the_path_is_not_a_500(cast, username, action):
    path = f"/@{quote(username, safe='')}/{action}"
    client = cast["client"]
    before = _rows()
    reads = ("", "followers/", "following/")
    response = client.get(path) if action in reads else client.post(path, {"reason": "x"})
    _assert_sane(response, before)


# --- Forms -----------------------------------------------------------------------------


@FUZZ
@given(word=nasty_text, days=nasty_text, visibility=nasty_text)
def test_muted_words_and_visibility_fields(cast, word, days, visibility):
    """A muted word and its days, a post's level: any text is a form error or goes through."""
    client = cast["client"]
    before = _rows()
    response = client.post("/settings/muted-words/", {"word": word, "expires_in_days": days})
    _assert_sane(response, before)
    response = client.post("/posts/new/", {"text": "x", "visibility": visibility})
    _assert_sane(response, before)
    assert client.get("/").status_code == 200


@FUZZ
@given(
    username=nasty_text,
    display_name=nasty_text,
    password=st.sampled_from([PASSWORD, "x"]),
    email=st.one_of(st.just("someone@example.com"), nasty_text),
)
def test_signup_form(db, username, display_name, password, email):
    before = _rows()
    data = {
        "username": username,
        "display_name": display_name,
        "email": email,
        "password1": password,
        "password2": password,
    }
    client = Client()
    response = client.post("/accounts/signup/", data)
    _assert_sane(response, before, refused_if_200=True)
    if response.status_code == 302:
        user = User.objects.get(username=username.strip())  # the form strips whitespace
        page = client.get(f"/@{user.username}/")
        assert page.status_code == 200
        _assert_escaped(page.content.decode(), user.display_name)


@FUZZ
@given(username=nasty_text, password=nasty_text, next_url=nasty_text)
def test_login_form(cast, username, password, next_url):
    before = _rows()
    client = Client()
    response = client.post(
        f"/accounts/login/?next={quote(next_url, safe='')}",
        {"username": username, "password": password, "next": next_url},
    )
    _assert_sane(response, before, refused_if_200=True)
    assert _rows() == before
    assert "_auth_user_id" not in client.session


@FUZZ
@given(display_name=nasty_text, bio=nasty_text)
def test_profile_form(cast, display_name, bio):
    fuzzer = cast["fuzzer"]
    fuzzer.refresh_from_db()
    was = (fuzzer.display_name, fuzzer.bio)
    before = _rows()
    response = cast["client"].post("/accounts/profile/", {"display_name": display_name, "bio": bio})
    _assert_sane(response, before)
    fuzzer.refresh_from_db()
    if response.status_code >= 400:
        assert (fuzzer.display_name, fuzzer.bio) == was
    else:
        for page in ("/@fuzzer/", "/@alice/followers/", "/"):
            html = cast["client"].get(page).content.decode()
            _assert_escaped(html, fuzzer.display_name + "\n" + fuzzer.bio)


@FUZZ
@given(
    text=nasty_text,
    in_reply_to=st.one_of(st.none(), nasty_text, st.just("REAL")),
    extra=st.fixed_dictionaries(
        {}, optional={"author": nasty_text, "next": nasty_text, "repost_of": nasty_text}
    ),
)
def test_new_post_form(cast, text, in_reply_to, extra):
    data = {"text": text, **extra}
    if in_reply_to == "REAL":
        data["in_reply_to"] = cast["posts"][0].pk
    elif in_reply_to is not None:
        data["in_reply_to"] = in_reply_to
    before = _rows()
    response = cast["client"].post("/posts/new/", data)
    _assert_sane(response, before)
    if response.status_code < 400:
        post = Post.objects.filter(author=cast["fuzzer"]).order_by("-pk").first()
        assert post is not None and post.author_id == cast["fuzzer"].pk
        for page in ("/", "/@fuzzer/", f"/posts/{post.pk}/"):
            response = cast["client"].get(page)
            assert response.status_code == 200
            _assert_escaped(response.content.decode(), post.text)


@FUZZ
@given(raw=raw_bytes, field=st.sampled_from(["text", "in_reply_to", "next"]), encode=st.booleans())
def test_invalid_utf8_in_a_post_body_is_not_a_500(cast, raw, field, encode):
    value = quote_from_bytes(raw).encode() if encode else raw
    body = b"text=hello&" + field.encode() + b"=" + value
    before = _rows()
    response = cast["client"].generic(
        "POST", "/posts/new/", body, content_type="application/x-www-form-urlencoded"
    )
    _assert_sane(response, before)


@FUZZ
@given(
    action=st.sampled_from(["follow", "unfollow"]),
    who=st.sampled_from(["alice", "bob", "fuzzer", "ALICE"]),
    extra=st.fixed_dictionaries(
        {},
        optional={
            "next": nasty_text,
            "follower": nasty_text,
            "followee": nasty_text,
            "user": nasty_text,
            "username": nasty_text,
        },
    ),
)
def test_follow_and_unfollow(cast, action, who, extra):
    before = _rows()
    response = cast["client"].post(f"/@{who}/{action}/", extra)
    _assert_sane(response, before)
    followed = Followee.objects.filter(user=cast["fuzzer"]).values("followee_id")
    following = set(User.objects.filter(pk__in=followed).values_list("username", flat=True))
    assert following <= {"alice", "bob"}


@FUZZ
@given(
    action=st.sampled_from(["delete", "like", "unlike", "repost", "unrepost", "report"]),
    which=st.integers(min_value=0, max_value=2),
    extra=st.fixed_dictionaries(
        {},
        optional={"next": nasty_text, "reason": nasty_text, "user": nasty_text, "text": nasty_text},
    ),
)
def test_actions_on_someone_elses_post(cast, action, which, extra):
    post = cast["posts"][which]
    url = _url(f"posts:{action}", post.pk)
    before = _rows()
    response = cast["client"].post(url, extra)
    _assert_sane(response, before)
    post.refresh_from_db()
    assert post.deleted_at is None  # alice's post: the fuzzer cannot delete it


@FUZZ
@given(
    reason=nasty_text,
    extra=st.fixed_dictionaries({}, optional={"next": nasty_text, "user": nasty_text}),
)
def test_reporting_a_profile(cast, reason, extra):
    url = _url("posts:report_user", "alice")
    before = _rows()
    response = cast["client"].post(url, {"reason": reason, **extra})
    _assert_sane(response, before)


@pytest.mark.parametrize(
    "view",
    [
        "follow",
        "unfollow",
        "delete",
        "report_post",
        "report_user",
    ],
)
@pytest.mark.parametrize("next_url", ["a b", "@alice", "home"])
def test_a_next_field_that_is_not_a_path_is_not_a_500(cast, view, next_url):
    """``next`` is where to go back to: anything but a path on this site goes to the default."""
    own = create_post(author=cast["fuzzer"], text="mine")
    url = {
        "follow": "/@alice/follow/",
        "unfollow": "/@alice/unfollow/",
        "delete": f"/posts/{own.pk}/delete/",
        "report_post": _url("posts:report", cast["posts"][0].pk),
        "report_user": _url("posts:report_user", "alice"),
    }[view]
    client = cast["client"]
    client.raise_request_exception = False
    response = client.post(url, {"next": next_url, "reason": "spam"})
    assert response.status_code == 302
    assert response["Location"].startswith("/"), response["Location"]
    assert not response["Location"].endswith(next_url)


# --- Accounts: e-mail, password reset, two-factor, sessions, invites ------------------


@FUZZ
@given(email=nasty_text, extra=st.fixed_dictionaries({}, optional={"next": nasty_text}))
def test_password_reset_form(cast, email, extra):
    before = _rows()
    response = Client().post("/accounts/password/reset/", {"email": email, **extra})
    _assert_sane(response, before)
    assert _rows() == before
    assert response.status_code in (302, 400)


@FUZZ
@given(uid=nasty_text, token=nasty_text, password=nasty_text)
def test_password_reset_link_with_any_uid_and_token(cast, uid, token, password):
    path = f"/accounts/password/reset/{quote(uid, safe='')}/{quote(token, safe='')}/"
    before = _rows()
    client = Client()
    _assert_sane(client.get(path), before)
    response = client.post(path, {"new_password1": password, "new_password2": password})
    _assert_sane(response, before)
    assert _rows() == before


@FUZZ
@given(token=nasty_text, method=st.sampled_from(["get", "post"]))
def test_any_verification_token_is_not_a_500(cast, token, method):
    before = _rows()
    response = getattr(Client(), method)(f"/accounts/verify/{quote(token, safe='')}/")
    _assert_sane(response, before)
    assert _rows() == before


@pytest.fixture
def two_factor_user(cast):
    """The fuzzer with two-factor on, and a visitor half-way through its log-in."""
    setup = twofactor.start_setup(user=cast["fuzzer"])
    twofactor.confirm_setup(user=cast["fuzzer"], code=pyotp.TOTP(setup.secret).now())
    visitor = Client()
    visitor.post("/accounts/login/", {"username": "fuzzer", "password": PASSWORD})
    return visitor


@FUZZ
@given(code=nasty_text)
def test_login_code_form(cast, two_factor_user, code):
    before = _rows()
    response = two_factor_user.post("/accounts/login/code/", {"code": code})
    _assert_sane(response, before)
    assert response.status_code == 400
    assert "_auth_user_id" not in two_factor_user.session


@FUZZ
@given(email=nasty_text, password=st.sampled_from([PASSWORD, "x", ""]))
def test_email_change_form(cast, email, password):
    before = _rows()
    response = cast["client"].post("/accounts/email/", {"email": email, "password": password})
    _assert_sane(response, before)
    fuzzer = User.objects.get(pk=cast["fuzzer"].pk)
    assert fuzzer.email == ""  # a change waits for its link
    if response.status_code == 400:
        assert fuzzer.unconfirmed_email == ""


@FUZZ
@given(
    route=st.sampled_from(
        [
            "/settings/security/2fa/confirm/",
            "/settings/security/2fa/disable/",
            "/settings/security/2fa/recovery-codes/",
            "/settings/security/sessions/end/",
            "/settings/security/password/",
        ]
    ),
    field=st.sampled_from(["code", "password", "session", "old_password", "new_password1"]),
    value=nasty_text,
)
def test_security_actions(cast, route, field, value):
    twofactor.start_setup(user=cast["fuzzer"])
    before = _rows()
    response = cast["client"].post(route, {field: value})
    _assert_sane(response, before)
    assert User.objects.get(pk=cast["fuzzer"].pk).check_password(PASSWORD)
    assert "_auth_user_id" in cast["client"].session  # no field logs the fuzzer out


@FUZZ
@given(password=nasty_text | st.just(PASSWORD), code=nasty_text)
def test_delete_account_form(cast, password, code):
    twofactor.start_setup(user=cast["fuzzer"])  # not confirmed: no code asked
    before = _rows()
    response = cast["client"].post("/settings/delete/", {"password": password, "code": code})
    _assert_sane(response, before)
    fuzzer = User.objects.get(pk=cast["fuzzer"].pk)
    if response.status_code == 302:
        assert password == PASSWORD and fuzzer.deletion_due_at is not None
        cast["client"].force_login(fuzzer)  # logging in again cancels it
        fuzzer.refresh_from_db()
    else:
        assert response.status_code == 400  # a wrong password, or a code over 64 characters
    assert fuzzer.deletion_due_at is None
    assert Post.objects.filter(hidden_at__isnull=False).count() == 0


@FUZZ
@given(days=nasty_text, max_uses=nasty_text)
def test_invite_form(cast, days, max_uses):
    cast["fuzzer"].user_permissions.add(Permission.objects.get(codename="add_invite"))
    before = _rows()
    response = cast["client"].post("/settings/invites/", {"days": days, "max_uses": max_uses})
    _assert_sane(response, before)
    for invite in Invite.objects.all():
        assert 1 <= invite.max_uses <= 100


@FUZZ
@given(invite=nasty_text, method=st.sampled_from(["get", "post"]))
def test_sign_up_by_invite_with_any_token(cast, invite, method):
    with override_settings(REGISTRATION_MODE="invite"):
        before = _rows()
        data = {
            "username": "newcomer",
            "email": "new@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "invite": invite,
        }
        if method == "get":
            response = Client().get("/accounts/signup/", {"invite": invite})
        else:
            response = Client().post("/accounts/signup/", data)
        _assert_sane(response, before)
        assert _rows() == before
        assert response.status_code in (400, 403)


# --- Data export and the import of follows ----------------------------------------------


@FUZZ
@given(extra=st.dictionaries(st.sampled_from(["user", "user_id", "next", "format"]), nasty_text))
def test_export_request_with_any_fields(cast, extra):
    before = _rows()
    response = cast["client"].post("/settings/export/", extra)
    _assert_sane(response, before)
    assert response.status_code == 302
    assert set(Export.objects.values_list("user_id", flat=True)) == {cast["fuzzer"].pk}


@FUZZ
@given(token=nasty_text | st.sampled_from(["1:abc:def", "[1, 1]", "W1sxLDFdXQ:1tX:sig"]))
def test_any_download_token_is_not_a_500(cast, token):
    before = _rows()
    response = cast["client"].get(f"/settings/export/download/{quote(token, safe='')}/")
    _assert_sane(response, before)
    assert response.status_code in (404, 410)
    assert _rows() == before


def _csv_of(lines: list[str]) -> bytes:
    return ("username,followed_at\n" + "\n".join(lines) + "\n").encode()


@FUZZ
@given(
    content=st.one_of(
        raw_bytes,
        nasty_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.lists(st.one_of(nasty_text, st.sampled_from(["alice", "@bob", "fuzzer"]))).map(_csv_of),
    ),
    name=st.one_of(nasty_text, st.just("following.csv")),
)
def test_import_follows_with_any_file(cast, content, name):
    before = _rows()
    # A name the test client can send at all (it refuses "", "..", paths); the server
    # sees what a browser would send.
    name = re.sub(r"[/\\\x00]", "_", name[:200]).strip(". ") or "x"
    upload = SimpleUploadedFile(name, content, "text/csv")
    response = cast["client"].post("/settings/import/follows/", {"file": upload})
    _assert_sane(response, before)
    assert response.status_code in (302, 400)
    followed = Followee.objects.filter(user=cast["fuzzer"]).values("followee_id")
    assert set(User.objects.filter(pk__in=followed).values_list("username", flat=True)) <= {
        "alice",
        "bob",
    }
