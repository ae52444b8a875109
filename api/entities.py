"""Mastodon's Account and Status entities, built from the site's rows.

One module shapes what every endpoint answers, so a status looks the same in
a timeline, a thread or the answer to a new post. A page is hydrated as the
HTML page is: what the viewer liked and reposted and the posts' images are
``posts.selectors``' one query each for the whole page (``Hydration``); then
the people shown, one query when the list loaded its authors with only the
columns a page shows (an Account has their counts and dates), and the
mentioned people one more when a post mentions someone. Nothing is read per
post, and nothing is loaded onto the posts: the feed's are every reader's.

Ids are timeline keys as decimal numbers (``posts.ids``); URLs are absolute,
built from the request (https behind a TLS proxy, with ``HTTPS=1``).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.urls import reverse

from accounts import unique_names
from accounts.models import User
from posts import ids, links, quotes, tags
from posts.edits import Version
from posts.media import media_by_post
from posts.models import Post, PostMedia, Visibility
from posts.post_html import Urls, urls
from posts.selectors import liked_post_ids, reposted_post_ids
from relations.selectors import pending_requests_count

# The site's levels as Mastodon names them, and back.
MASTODON_LEVELS = {
    Visibility.PUBLIC: "public",
    Visibility.UNLISTED: "unlisted",
    Visibility.FOLLOWERS: "private",
    Visibility.DIRECT: "direct",
}
SITE_LEVELS = {mastodon: site for site, mastodon in MASTODON_LEVELS.items()}
_NAME = "Zq0NAME0qZ"  # a username no route holds, replaced by each person's


def timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds, as Mastodon writes every time."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def status_id_of_post(post_id: str) -> str:
    return ids.decimal_of_key(ids.post_id_to_timeline_key(post_id))


class Links:
    """Absolute URLs of the site's pages, from the request's scheme and host."""

    def __init__(self, request: HttpRequest) -> None:
        self.base = f"{request.scheme}://{request.get_host()}"
        self.paths: Urls = urls()
        self._png_avatar = reverse("accounts:avatar_png", args=[_NAME]).split(_NAME)

    def static_avatar(self, user: User) -> str:
        """The picture as a PNG (``accounts.avatars.static_avatar_url``), built with no
        reverse per person: the uploaded one's twin, else the generated one's."""
        if user.avatar:
            return self.base + self.paths.avatar(user).removesuffix(".webp") + ".png"
        return self.base + self._png_avatar[0] + user.username + self._png_avatar[1]

    def profile(self, username: str) -> str:
        return self.base + self.paths.profile(username)

    def tag(self, tag: str) -> str:
        return self.base + self.paths.tag(tag)

    def html(self, text: str, mentioned: Iterable[str] | None) -> str:
        """Text as Mastodon's content: a paragraph per blank-line-separated block, its
        lines broken with <br>, links, mentions and tags as anchors (``posts.links``)."""
        mentioned = set(mentioned) if mentioned is not None else None
        blocks = [block for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]
        return "".join(
            "<p>"
            + links.text_html(block, mentioned=mentioned, profile=self.profile, tag=self.tag)
            .strip("\n")
            .replace("\n", "<br>")
            + "</p>"
            for block in blocks
        )


def account(user: User, link: Links) -> dict[str, Any]:
    avatar = link.base + link.paths.avatar(user)
    profile = link.profile(user.username)
    joined = user.date_joined.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return {
        "id": str(user.pk),
        "username": user.username,
        "acct": user.username,
        "display_name": user.display_name,
        "locked": user.locked,
        "bot": False,
        "discoverable": True,
        "group": False,
        "created_at": timestamp(joined),
        "note": link.html(user.bio, None),
        "url": profile,
        "uri": profile,
        "avatar": avatar,
        "avatar_static": link.static_avatar(user),
        "header": "",
        "header_static": "",
        "followers_count": user.followers_count,
        "following_count": user.following_count,
        "statuses_count": user.posts_count,
        "last_status_at": None,
        "emojis": [],
        "fields": [],
    }


def credential_account(user: User, link: Links) -> dict[str, Any]:
    """The signed-in user's own account: ``source`` holds what they typed (the site has
    no default level of its own: new posts are public unless chosen otherwise), and how
    many follow requests wait (one count of their own rows)."""
    return {
        **account(user, link),
        "source": {
            "privacy": "public",
            "sensitive": False,
            "language": None,
            "note": user.bio,
            "fields": [],
            "follow_requests_count": pending_requests_count(user_id=user.pk),
        },
    }


@dataclass
class Hydration:
    """What a page of statuses needs besides the posts, read once for the page."""

    link: Links
    people: dict[int, User] = field(default_factory=dict)
    liked: set[str] = field(default_factory=set)
    reposted: set[str] = field(default_factory=set)
    media: dict[str, list[PostMedia]] = field(default_factory=dict)
    mentioned: dict[str, int] = field(default_factory=dict)
    quoted: dict[str, Post | None] = field(default_factory=dict)


def _whole(user: object) -> bool:
    """A user row with every column: lists load authors with a few (``posts.sql``, the
    feed's held posts, shared by every reader), and an Account needs them all."""
    return isinstance(user, User) and not user.get_deferred_fields()


def people_of(ids_wanted: set[int], known: Iterable[object]) -> dict[int, User]:
    """Whole user rows of these ids: those ``known`` already, the rest in one query."""
    people = {user.pk: user for user in known if _whole(user) and user.pk in ids_wanted}
    missing = ids_wanted - set(people)
    if missing:
        people.update((user.pk, user) for user in User.objects.filter(pk__in=missing))
    return people


def hydrate(request: HttpRequest, entries: list[tuple[str, Post]]) -> Hydration:
    """The page's marks, images, people and mentions, and what its quotes show: the
    quoted posts as the viewer may see them (``posts.quotes.quoted_posts``, one query
    when the page holds a quote), hydrated with the page's own posts."""
    viewer: User | AnonymousUser = request.user
    listed = [post for _, post in entries]
    quoted = quotes.quoted_posts(listed, viewer_id=viewer.pk if viewer.is_authenticated else None)
    posts = [*listed, *(post for post in quoted.values() if post is not None)]
    post_ids = [post.pk for post in posts]
    names = {name for post in posts for name in post.mentions.split()}
    authors = {post.author_id for post in posts}
    authors |= {
        ids.author_of_timeline_key(key) for key, post in entries if key != post.timeline_key
    }
    cached = Post._meta.get_field("author")
    known = [viewer, *(post.author for post in posts if cached.is_cached(post))]
    return Hydration(
        link=Links(request),
        people=people_of(authors, known),
        liked=liked_post_ids(viewer, post_ids),
        reposted=reposted_post_ids(viewer, post_ids),
        media=media_by_post(posts),
        mentioned=unique_names.user_ids_named(names) if names else {},
        quoted=quoted,
    )


def _attachment(post: Post, media: PostMedia, link: Links) -> dict[str, Any]:
    def size(width: int, height: int) -> dict[str, Any]:
        ratio = round(width / height, 4) if height else None
        return {"width": width, "height": height, "size": f"{width}x{height}", "aspect": ratio}

    return {
        "id": str(media.pk),
        "type": "image",
        "url": link.base + link.paths.media(post.pk, media.position),
        "preview_url": link.base + link.paths.media(post.pk, media.position, thumbnail=True),
        "remote_url": None,
        "preview_remote_url": None,
        "text_url": None,
        "meta": {
            "original": size(media.width, media.height),
            "small": size(media.thumbnail_width, media.thumbnail_height),
        },
        "description": media.alt_text or None,
        "blurhash": None,
    }


def _quote(post: Post, page: Hydration) -> dict[str, Any] | None:
    """Mastodon's Quote of what ``post`` quotes: the quoted post as a Status when the
    viewer may see it, else "deleted" and no content, as the site's "post unavailable"
    says nothing of why. The quoted status's own quote is left out (null)."""
    if not post.quote_of_id:
        return None
    quoted = page.quoted.get(post.quote_of_id)
    if quoted is None:
        return {"state": "deleted", "quoted_status": None}
    return {"state": "accepted", "quoted_status": status(quoted, page, quoting=False)}


def _quote_approval(post: Post) -> dict[str, Any]:
    """Who may quote the post: anyone, without asking, when it may be shared at all."""
    shared = post.may_be_shared
    return {
        "automatic": ["public"] if shared else [],
        "manual": [],
        "current_user": "automatic" if shared else "denied",
    }


def status(post: Post, page: Hydration, *, quoting: bool = True) -> dict[str, Any]:
    """A post (never a repost: see ``reblog``) as a Status; ``quoting``: with its quote."""
    link = page.link
    url = link.base + link.paths.detail(post.pk)
    mentioned = post.mentions.split()
    parent = post.in_reply_to_id
    return {
        "id": ids.decimal_of_key(post.timeline_key),
        "created_at": timestamp(post.created_at),
        "in_reply_to_id": status_id_of_post(parent) if parent else None,
        "in_reply_to_account_id": str(ids.author_of_post_id(parent)) if parent else None,
        "sensitive": bool(post.spoiler_text),
        "spoiler_text": post.spoiler_text,
        "visibility": MASTODON_LEVELS[post.visibility],
        "language": None,
        "uri": url,
        "url": url,
        "replies_count": post.reply_count,
        "reblogs_count": post.repost_count,
        "favourites_count": post.like_count,
        # The site keeps no count of a post's quotes (nor an index to count them by).
        "quotes_count": 0,
        "edited_at": timestamp(post.edited_at) if post.edited_at else None,
        "favourited": post.pk in page.liked,
        "reblogged": post.pk in page.reposted,
        "muted": False,  # the site mutes people and words, never a conversation
        "bookmarked": False,
        "content": link.html(post.text, mentioned),
        "filtered": [],
        "reblog": None,
        "quote": _quote(post, page) if quoting else None,
        "quote_approval": _quote_approval(post),
        "application": None,
        "account": account(page.people[post.author_id], link),
        "media_attachments": [_attachment(post, m, link) for m in page.media.get(post.pk, [])],
        "mentions": [
            {
                "id": str(page.mentioned[name]),
                "username": name,
                "acct": name,
                "url": link.profile(name),
            }
            for name in mentioned
            if name in page.mentioned
        ],
        "tags": [{"name": tag, "url": link.tag(tag)} for tag in tags.hashtags(post.text)],
        "emojis": [],
        "card": None,
        "poll": None,
    }


def status_edit(post: Post, version: Version, page: Hydration) -> dict[str, Any]:
    """One version of a post as Mastodon's StatusEdit: its words and warning then, with
    the post's images (an edit never changes them) and its mentions now."""
    link = page.link
    return {
        "content": link.html(version.text, post.mentions.split()),
        "spoiler_text": version.spoiler_text,
        "sensitive": bool(version.spoiler_text),
        "created_at": timestamp(version.written_at),
        "account": account(page.people[post.author_id], link),
        "poll": None,
        "media_attachments": [_attachment(post, m, link) for m in page.media.get(post.pk, [])],
        "emojis": [],
    }


def reblog(key: str, original: Post, reposter: User, page: Hydration) -> dict[str, Any]:
    """A repost: a status of its own (its id, its time, the reposter) wrapping the original."""
    shown = status(original, page)
    return {
        **shown,
        "id": ids.decimal_of_key(key),
        "created_at": timestamp(ids.moment_of(ids.parse_timeline_key(key).time)),
        "in_reply_to_id": None,
        "in_reply_to_account_id": None,
        "sensitive": False,
        "spoiler_text": "",
        "content": "",
        "account": account(reposter, page.link),
        "media_attachments": [],
        "mentions": [],
        "tags": [],
        "quote": None,
        "reblog": shown,
    }


def statuses(request: HttpRequest, entries: list[tuple[str, Post]]) -> list[dict[str, Any]]:
    """Entries of a list, (its key, the post shown: a repost's original), as statuses;
    an entry whose key is not its post's is a repost by the key's author."""
    page = hydrate(request, entries)
    shown = []
    for key, post in entries:
        if post.author_id not in page.people:  # erased between the list and now
            continue
        if key == post.timeline_key:
            shown.append(status(post, page))
            continue
        reposter = page.people.get(ids.author_of_timeline_key(key))
        if reposter is not None:  # an account erased since: its reposts are gone too
            shown.append(reblog(key, post, reposter, page))
    return shown
