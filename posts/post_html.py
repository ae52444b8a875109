"""A post in a list as HTML: the fragment every feed page repeats, compiled by Jinja2.

Through Django's template engine the 20 posts of a page cost more CPU than
everything else the page does (most of it per-node overhead, ``{% url %}`` and
``{% csrf_token %}`` five times a post). Jinja2 compiles the same fragment
(``templates/posts/_post.jinja``) to Python; the URLs are the site's routes
reversed once per script prefix with a placeholder for the id; the viewer's part
(marks, CSRF token, the path forms come back to) is worked out once a page. A
post is rendered once for every reader who sees it alike, the request's form
inputs put in after (``ARTICLES``). Pages call it through
``{% post_article post reposted_by %}`` (``posts/templatetags/post_lists.py``).
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

import jinja2
from django.conf import settings
from django.db.models import Model
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from django.utils.dates import MONTHS_3
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from accounts import avatars
from accounts.models import User
from posts import links, quotes
from posts.models import Post, PostMedia
from posts.tags import tag_path

_ID = "Zq0POSTID0qZ"  # matches the routes' converters (str and username), found nowhere else
_ACTIONS = ("like", "unlike", "repost", "unrepost", "delete", "report")


class Urls:
    """The post and profile URLs of the site, ``reverse`` once and the id filled in after."""

    def __init__(self) -> None:
        def split(name: str) -> tuple[str, str]:
            before, after = reverse(name, args=[_ID]).split(_ID)
            return before, after

        self._profile = split("posts:profile")
        self._detail = split("posts:detail")
        self._actions = {action: split(f"posts:{action}") for action in _ACTIONS}
        self._pages = {page: split(f"posts:{page}") for page in ("edit", "history")}
        self._tag = split("posts:tag")
        self._relations = {action: split(f"relations:{action}") for action in ("mute", "block")}
        self._avatar = split("accounts:avatar")
        self._uploaded_avatar = avatars.uploaded_prefix()

    def profile(self, username: str) -> str:
        # Usernames are letters, digits and "_": nothing to quote (accounts.converters).
        return self._profile[0] + username + self._profile[1]

    def detail(self, post_id: str) -> str:
        return self._detail[0] + post_id + self._detail[1]

    def page(self, post_id: str, page: str) -> str:
        """``/posts/<id>/edit/`` or ``/posts/<id>/history/``."""
        before, after = self._pages[page]
        return before + post_id + after

    def tag(self, tag: str) -> str:
        """``/tags/<tag>/`` of a normalized tag (URL-encoded)."""
        return self._tag[0] + tag_path(tag) + self._tag[1]

    def relation(self, username: str, action: str) -> str:
        """``/@<username>/mute/`` or ``/@<username>/block/``."""
        before, after = self._relations[action]
        return before + username + after

    def avatar(self, user: User) -> str:
        """The person's picture: the one they uploaded, else their generated one."""
        if user.avatar:
            return self._uploaded_avatar + user.avatar
        return self._avatar[0] + user.username + self._avatar[1]

    def action(self, post_id: str, action: str) -> str:
        before, after = self._actions[action]
        return before + post_id + after

    def media(self, post_id: str, position: int, *, thumbnail: bool = False) -> str:
        """An image of the post (posts.media_views); the routes sit below the detail page."""
        return f"{self.detail(post_id)}media/{position}/{'thumbnail/' if thumbnail else ''}"


@cache
def _urls(script_prefix: str, urlconf: str | None) -> Urls:
    return Urls()


def urls() -> Urls:
    """The URLs under this request's script prefix and URLconf."""
    return _urls(get_script_prefix(), get_urlconf())


_NO_FORMS = SafeString("")


@dataclass(frozen=True)
class Viewer:
    """Who reads the page, worked out once a page: None for a visitor.

    ``form_inputs``: what each of the page's forms carries, the request's CSRF
    token and the path to come back to.
    """

    user_id: int | None
    liked_ids: Collection[str] = ()
    reposted_ids: Collection[str] = ()
    form_inputs: SafeString = _NO_FORMS


def viewer(
    *,
    user_id: int | None,
    liked_ids: Collection[str],
    reposted_ids: Collection[str],
    csrf_token: str,
    next_path: str,
) -> Viewer:
    # The CSRF input is the same markup as Django's {% csrf_token %}.
    form_inputs = format_html(
        '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
        '<input type="hidden" name="next" value="{}">',
        csrf_token,
        next_path,
    )
    return Viewer(user_id, liked_ids, reposted_ids, form_inputs)


def linkify(text: str, url: Urls, mentioned: Collection[str] | None = None) -> SafeString:
    """The text escaped, its URLs, @mentions and #tags made links (posts.links).

    ``mentioned``: the usernames (lower-cased) whose mentions are links; None, all.
    """
    return links.text_html(text, mentioned=mentioned, profile=url.profile, tag=url.tag)


def text_html(text: str, url: Urls, mentioned: Collection[str] | None = None) -> SafeString:
    """``text|linkify|linebreaksbr``: linkified, each line end a <br>."""
    linked = linkify(text, url, mentioned)
    return mark_safe(linked.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>"))


def time_ago(moment: datetime, now: datetime) -> str:
    """How long ago: "now", "5m", "3h", then the local day ("20 Nov", a year back "20 Nov 2025")."""
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    local = timezone.localtime(moment)
    day = f"{local.day} {MONTHS_3[local.month].title()}"
    return day if local.year == timezone.localtime(now).year else f"{day} {local.year}"


def display_time(moment: datetime) -> str:
    """``moment|date:"j M Y, H:i"`` in the current time zone, without the filter's overhead."""
    local = timezone.localtime(moment)
    month = MONTHS_3[local.month].title()
    return f"{local.day} {month} {local.year}, {local.hour:02d}:{local.minute:02d}"


def _icon(path: str) -> SafeString:
    return mark_safe(
        '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">'
        f'<path d="{path}"/></svg>'
    )


# The action icons, whole: a Jinja2 macro call each cost more than the rest of the line.
ICONS = {
    "reply": _icon("M4 4h16v12H8l-4 4z"),
    "like": _icon("M12 21 3.5 12.5A5 5 0 0 1 12 5.5a5 5 0 0 1 8.5 7z"),
    "repost": _icon("M7 7h10v3l4-4-4-4v3H5v6h2zm10 10H7v-3l-4 4 4 4v-3h12v-6h-2z"),
    "more": _icon(
        "M5 10a2 2 0 1 0 0 4 2 2 0 0 0 0-4m7 0a2 2 0 1 0 0 4 2 2 0 0 0 0-4"
        "m7 0a2 2 0 1 0 0 4 2 2 0 0 0 0-4"
    ),
}


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(settings.BASE_DIR / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=settings.DEBUG,
    )
    environment.globals["icons"] = ICONS
    return environment


def _template(name: str = "posts/_post.jinja") -> jinja2.Template:
    # Jinja2 keeps the compiled template; with DEBUG it checks the file's time first.
    return _environment().get_template(name)


class Fragments:
    """Rendered fragments by everything they were rendered from, the least recently
    used dropped past ``size``: a pure function's results, so nothing is ever stale.
    With DEBUG nothing is kept: a template edited on disk shows at once."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: OrderedDict[tuple, SafeString] = OrderedDict()
        self._lock = threading.Lock()  # gthread workers share a process

    def get(self, key: tuple, render: Callable[[], SafeString]) -> SafeString:
        if settings.DEBUG:
            return render()
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        rendered = render()
        with self._lock:
            self._kept[key] = rendered
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return rendered

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


# ~1-2 KB each: a few MB a process. The content is the costliest part of a post's
# rendering (all of its linkifying), 20 times a page.
CONTENTS = Fragments(size=4096)
# Whole posts as a kind of reader sees them (~3-5 KB each), their forms' inputs left as
# a mark: what a page repeats 20 times, for every reader of a post alike.
ARTICLES = Fragments(size=4096)
# Parts of pages by what they are rendered from ({% kept %}, posts/templatetags/post_lists.py),
# ~1-2 KB each: the trending tags are one part for everyone; who to follow is one per
# reader, kept for their next pages.
PARTS = Fragments(size=4096)
# Where the viewer's form inputs go: markup no escaped text can hold.
FORM_INPUTS = mark_safe("<!--form-inputs-->")


# Columns the content never shows (the counts are in the reactions, rendered every
# time): a like does not make the post's content render again.
_NOT_SHOWN_IN_CONTENT = frozenset({"reply_count", "like_count", "repost_count"})


def row(instance: Model) -> tuple:
    """The values of the instance's loaded columns (a deferred one is left out, not loaded),
    but a post's counts: what a kept fragment is rendered from."""
    values = instance.__dict__
    return tuple(
        values.get(field.attname)
        for field in instance._meta.concrete_fields
        if field.attname not in _NOT_SHOWN_IN_CONTENT
    )


@dataclass(frozen=True)
class _Content:
    """A post's content (``posts/_post_content.jinja``), the part every reader sees alike,
    with what it is shown with besides the post's and its author's columns."""

    post: Post
    url: Urls
    media: Sequence[PostMedia]
    full_media: bool
    replying_to: str | None
    created_ago: str  # "5m", "3h", "20 Nov"

    def key(self) -> tuple:
        """Everything it is rendered from, the time zone and year it is shown in too."""
        return (
            row(self.post),
            row(self.post.author),
            tuple(row(item) for item in self.media),
            self.full_media,
            self.replying_to,
            self.created_ago,
            timezone.get_current_timezone_name(),
            timezone.localtime().year,  # "20 Nov" this year, "20 Nov 2025" before
            self.url,
        )

    def render(self) -> SafeString:
        post, url = self.post, self.url
        created = timezone.localtime(post.created_at)
        edited = timezone.localtime(post.edited_at) if post.edited_at else None
        return mark_safe(
            _template("posts/_post_content.jinja").render(
                post=post,
                text=text_html(post.text, url, post.mentions.split()),
                created=created,
                created_text=display_time(created),
                created_ago=self.created_ago,
                replying_to=self.replying_to,
                edited=edited,
                edited_text=display_time(edited) if edited else "",
                url=url,
                media=self.media,
                full_media=self.full_media,
            )
        )


def render_post(
    post: Post,
    *,
    viewer: Viewer,
    reposted_by: Sequence[User] = (),
    media: Sequence[PostMedia] = (),
    full_media: bool = False,
    replying_to: str | None = None,
    quoted_posts: Mapping[str, Post | None] | None = None,
) -> SafeString:
    """One ``<article data-post-id>``: the post, who reposted it, the viewer's actions.

    ``media``: its images (``posts.media.media_by_post``), as thumbnails, or
    at their own size with ``full_media`` (the detail page's post).
    ``replying_to``: the username of the author of the post a reply answers
    (``posts.selectors.reply_names``), or None when the viewer may not see that post.
    ``quoted_posts``: the page's quoted posts as the viewer may see them
    (``posts.quotes.quoted_posts``); a quote not in it loads its own.
    Rendered once for every reader who sees it alike (``ARTICLES``: the same
    content, counts, quote, reposters, marks and kind of reader), and its content
    once for them all (``CONTENTS``); only the request's form inputs are put in
    each time.
    """
    url = urls()
    quoted = None
    if post.quote_of_id:
        if quoted_posts is None or post.quote_of_id not in quoted_posts:
            quoted_posts = quotes.quoted_posts([post], viewer_id=viewer.user_id)
        quoted = quoted_posts[post.quote_of_id]
    content = _Content(
        post,
        url=url,
        media=media,
        full_media=full_media,
        replying_to=replying_to,
        created_ago=time_ago(post.created_at, timezone.now()),
    )
    content_key = content.key()

    def article() -> SafeString:
        html = _template().render(
            post=post,
            reposted_by=reposted_by,
            content=CONTENTS.get(content_key, content.render),
            quoted=quoted,
            quoted_text=text_html(quoted.text, url, quoted.mentions.split()) if quoted else "",
            viewer=viewer,
            form_inputs=FORM_INPUTS,
            url=url,
        )
        return mark_safe(html)

    key = _article_key(content_key, post, viewer, reposted_by, quoted)
    return mark_safe(ARTICLES.get(key, article).replace(FORM_INPUTS, viewer.form_inputs))


def _article_key(
    content_key: tuple, post: Post, viewer: Viewer, reposted_by: Sequence[User], quoted: Post | None
) -> tuple:
    """Everything a whole post is rendered from but the form inputs: its content, its
    counts, the kind of reader and their marks, who reposted it and what it quotes."""
    if viewer.user_id is None:
        reader = "visitor"
    else:
        reader = "author" if viewer.user_id == post.author_id else "reader"
    return (
        content_key,
        (post.reply_count, post.like_count, post.repost_count),
        reader,
        post.pk in viewer.liked_ids,
        post.pk in viewer.reposted_ids,
        tuple(row(person) for person in reposted_by),
        None if quoted is None else (row(quoted), row(quoted.author)),
    )
