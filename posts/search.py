"""Search: people by username and display name, posts by their text (docs/ARCHITECTURE.md).

On PostgreSQL posts are matched with full-text search against the stored
column ``search_document`` = ``posts_search_document(text)`` (migrations
0003 and 0004), served by a GIN index: English words are stemmed ("running"
finds "run"); CJK runs, written without spaces, are indexed as overlapping
bigrams, so a query's CJK run is matched as a phrase of its bigrams (a single
character as a prefix of one). People are matched with ``icontains``, served
by a trigram GIN index.

On SQLite (the embedded default) both are plain ``icontains`` scans.

Posts come newest first, by timeline key, with ``?before=`` / ``?after=``
cursors. Deleted, hidden and blocked content never shows; reposts (no text of
their own) are not results. ``#tag`` in a query finds the posts carrying the tag.
"""

import re
import unicodedata
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.postgres.search import SearchQuery, SearchVectorField
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_page
from feed_project.refusals import Invalid
from posts.models import Post
from posts.tags import HASHTAG, hashtags, tag_page, tagged_post_ids
from posts.visibility import listed, visible_to, without_muted_words

MAX_QUERY_LENGTH = 200
PEOPLE_SHOWN = 5

# The same ranges as CJK in posts/migrations/0003_search.py: keep them in step.
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def search_document() -> RawSQL:
    """The stored ``posts_search_document(text)`` (migration 0004), GIN-indexed.

    A generated column outside the model's state, so it is named in SQL here.
    """
    return RawSQL('"posts_post"."search_document"', [], output_field=SearchVectorField())


@dataclass
class SearchResults:
    query: str
    people: list[User] = field(default_factory=list)
    posts: Page[Post] = field(default_factory=lambda: Page(items=[]))


def checked_query(raw: str) -> str:
    """The query as typed, normalized; Invalid when longer than MAX_QUERY_LENGTH: refused,
    not trimmed, since a trimmed query would answer a question nobody asked."""
    if len(raw) > MAX_QUERY_LENGTH:
        raise Invalid(f"A search is at most {MAX_QUERY_LENGTH} characters.")
    return normalize_query(raw)


def normalize_query(raw: str) -> str:
    """The query with control characters (NUL among them) dropped and spaces collapsed."""
    kept = "".join(" " if unicodedata.category(c).startswith("C") else c for c in raw)
    return " ".join(kept.split())


def full_text_query(query: str) -> SearchQuery | None:
    """The tsquery for ``query``: English words, and CJK runs as phrases of bigrams.

    None when the query has no word at all to look for.
    """
    parts: list[SearchQuery] = []
    latin = _CJK_RUN.sub(" ", query).strip()
    if latin:
        parts.append(SearchQuery(latin, config="english", search_type="plain"))
    for run in _CJK_RUN.findall(query):
        # CJK characters are never tsquery syntax, so quoting them is enough.
        if len(run) == 1:
            raw = f"'{run}':*"  # any bigram starting with it, or a run's last character
        else:
            raw = " <-> ".join(f"'{run[i : i + 2]}'" for i in range(len(run) - 1))
        parts.append(SearchQuery(raw, config="simple", search_type="raw"))
    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined &= part
    return combined


def _viewer_id(viewer: User | AnonymousUser | None) -> int | None:
    return viewer.pk if viewer is not None and viewer.is_authenticated else None


def matching_posts(query: str) -> QuerySet[Post]:
    """Visible original posts (not reposts) whose text matches ``query``, in no order.

    A ``#tag`` in the query asks for posts carrying that tag (the tag index,
    posts/tags.py); the other words are matched as text.
    """
    posts = Post.objects.visible().filter(listed(), repost_of__isnull=True)
    wanted_tags = hashtags(query)
    if wanted_tags:
        for tag in wanted_tags:
            posts = posts.filter(pk__in=tagged_post_ids(tag))
        query = " ".join(HASHTAG.sub(" ", query).split())
        if not query:
            return posts
    if connection.vendor != "postgresql":
        # Every word somewhere in the text, as the full-text query asks.
        for word in query.split():
            posts = posts.filter(text__icontains=word)
        return posts
    tsquery = full_text_query(query)
    if tsquery is None:
        return posts.none()
    return posts.alias(document=search_document()).filter(document=tsquery)


def search_people(
    *, query: str, viewer: User | AnonymousUser | None, limit: int = PEOPLE_SHOWN
) -> list[User]:
    """The first ``limit`` active people whose username or display name contains
    ``query``, most followed first."""
    people = User.objects.filter(is_active=True).filter(
        Q(username__icontains=query) | Q(display_name__icontains=query)
    )
    people = visible_to(people, _viewer_id(viewer), "pk")
    return list(people.order_by("-followers_count", "pk")[:limit])


def search_posts(
    *, query: str, viewer: User | AnonymousUser | None, cursor: Cursor, limit: int | None = None
) -> Page[Post]:
    """One page of matching posts, newest first, with their authors: two queries."""
    limit = limit or settings.FEED_PAGE_SIZE
    wanted_tags = hashtags(query)
    if len(wanted_tags) == 1 and not HASHTAG.sub(" ", query).strip():
        # A tag alone is its tag page (one range scan of the tag index): through
        # matching_posts' list of the tag's post ids it read the whole tag every page.
        return tag_page(
            tag=wanted_tags[0], viewer_id=_viewer_id(viewer), cursor=cursor, limit=limit
        )
    # Authors come in a second query by primary key: joined, the planner's guess
    # at the number of matches (often far off for words it has no statistics
    # for) made it hash-join the whole users table.
    posts = visible_to(matching_posts(query), _viewer_id(viewer)).prefetch_related("author")
    posts = without_muted_words(posts, _viewer_id(viewer))
    return keyset_page(posts, field="timeline_key", cursor=cursor, limit=limit)


def search(
    *, query: str, viewer: User | AnonymousUser | None, cursor: Cursor, limit: int | None = None
) -> SearchResults:
    """People (first page only) and one page of posts for ``query``: at most three queries.

    ``query`` should come through ``normalize_query``; an empty one finds nothing
    and costs no query.
    """
    if not query:
        return SearchResults(query=query)
    return SearchResults(
        query=query,
        people=search_people(query=query, viewer=viewer) if cursor.first_page else [],
        posts=search_posts(query=query, viewer=viewer, cursor=cursor, limit=limit),
    )
