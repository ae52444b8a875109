"""The signed-in user's own settings and collections that clients read at start-up:
preferences, filters, favourites, bookmarks, followed tags, lists, custom emojis,
announcements, endorsements, featured tags, domain blocks.

None of them may be a 404: a client that gets one at start-up shows an error
or stops. What the site has is answered from it: favourites are the user's
likes (``posts.liked_posts.liked_posts_page``, the latest liked first, paged by
the like), filters are their muted words in force
(``relations.muted_words.words_of``, which hide posts everywhere: Mastodon's
``hide`` in every context), preferences the compose box's defaults. What the
site does not have yet (bookmarks, lists, followed and featured tags,
endorsements, custom emojis, announcements, domain blocks) is an empty list.

A filter made here is a muted word made as the settings page makes one (its
form, ``mute_word``): one keyword, or the title without one; it hides, in every
context, whatever action or context is asked; its expiry is rounded up to whole
days, as the page keeps them; whether it matches whole words is the site's rule
(all but CJK phrases), not the client's. Editing a filter is not done here.
"""

from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from api import entities, schemas
from api.auth import Token
from api.errors import RateLimited, Unprocessable
from api.paging import Paging, link_header
from api.schemas import Entity
from feed_project.ratelimits import retry_after
from feed_project.refusals import NotFound
from posts.forms import PostForm
from posts.liked_posts import is_like_cursor, liked_posts_page
from relations.models import MutedWord
from relations.muted_word_views import MutedWordForm
from relations.muted_words import mute_word, unmute_word, whole_word, words_of

router = Router(tags=["personal"])
# Muted words hide a post wherever the reader would meet it.
FILTER_CONTEXT = ["home", "notifications", "public", "thread", "account"]
ONE_KEYWORD = "One keyword per filter: each filter is one muted word."
SECONDS_A_DAY = 86400
NO_SUCH_FILTER = "Record not found"
HIGHEST_LIKE = "9" * 40  # above every like cursor (posts.liked_posts.is_like_cursor)


class Preferences(Entity):
    posting_default_visibility: str = Field(alias="posting:default:visibility")
    posting_default_sensitive: bool = Field(alias="posting:default:sensitive")
    posting_default_language: str | None = Field(alias="posting:default:language")
    reading_expand_media: str = Field(alias="reading:expand:media")
    reading_expand_spoilers: bool = Field(alias="reading:expand:spoilers")


class FilterKeyword(Entity):
    id: str
    keyword: str
    whole_word: bool


class FilterV2(Entity):
    id: str
    title: str
    context: list[str]
    expires_at: str | None
    filter_action: str
    keywords: list[FilterKeyword]
    statuses: list[Any]


class FilterV1(Entity):
    id: str
    phrase: str
    context: list[str]
    expires_at: str | None
    irreversible: bool
    whole_word: bool


class KeywordIn(Schema):
    keyword: str | None = None
    whole_word: bool | None = None


class NewFilterV2(Schema):
    """A filter as a client sends it: one keyword (or, without one, the title) becomes
    one muted word; the context and action are the site's whatever is asked."""

    title: str | None = None
    context: list[str] | None = None
    filter_action: str | None = None
    expires_in: int | None = Field(default=None, ge=1)
    keywords_attributes: list[KeywordIn] | None = None


class NewFilterV1(Schema):
    phrase: str | None = None
    context: list[str] | None = None
    irreversible: bool | None = None
    whole_word: bool | None = None
    expires_in: int | None = Field(default=None, ge=1)


class FavouritesQuery(Paging):
    """Paging by a like's place in the list (``posts.liked_posts``), not a status id."""

    TOP: ClassVar[str] = HIGHEST_LIKE
    WHAT: ClassVar[str] = "favourite id"

    @classmethod
    def cursor_of(cls, value: str) -> str | None:
        return value if is_like_cursor(value) else None

    @classmethod
    def order(cls, cursor: str) -> Any:
        return int(cursor)


def _expiry(word: MutedWord) -> str | None:
    return entities.timestamp(word.expires_at) if word.expires_at else None


def filter_v2(word: MutedWord) -> dict[str, Any]:
    """A muted word as a filter of one keyword that hides what carries it."""
    return {
        "id": str(word.pk),
        "title": word.phrase,
        "context": FILTER_CONTEXT,
        "expires_at": _expiry(word),
        "filter_action": "hide",
        "keywords": [
            {"id": str(word.pk), "keyword": word.phrase, "whole_word": whole_word(word.phrase)}
        ],
        "statuses": [],
    }


def filter_v1(word: MutedWord) -> dict[str, Any]:
    return {
        "id": str(word.pk),
        "phrase": word.phrase,
        "context": FILTER_CONTEXT,
        "expires_at": _expiry(word),
        "irreversible": True,  # hidden from every feed, not shown behind a warning
        "whole_word": whole_word(word.phrase),
    }


def _muted(request: HttpRequest, phrase: str, expires_in: int | None) -> MutedWord:
    """Mute ``phrase`` as the settings page does (its form, then ``mute_word``); its
    errors as a 422 with the field's."""
    days = -(-expires_in // SECONDS_A_DAY) if expires_in else None
    form = MutedWordForm({"word": phrase, "expires_in_days": days or ""})
    if not form.is_valid():
        details = {
            "phrase" if field == "word" else "expires_in": [str(m) for m in messages]
            for field, messages in form.errors.items()
        }
        summary = "; ".join(m for messages in details.values() for m in messages)
        raise Unprocessable(f"Validation failed: {summary}", details)
    return mute_word(
        user=request.user,
        phrase=form.cleaned_data["word"],
        expires_in_days=form.cleaned_data["expires_in_days"],
    )


def _unmuted(request: HttpRequest, filter_id: str) -> None:
    """Take a muted word back as the settings page's button does (limited as it is)."""
    wait = retry_after(request, "follow")
    if wait is not None:
        raise RateLimited(wait)
    if not unmute_word(user=request.user, word_id=_word(request, filter_id).pk):
        raise NotFound(NO_SUCH_FILTER)


def _word(request: HttpRequest, filter_id: str) -> MutedWord:
    found = None
    if filter_id.isascii() and filter_id.isdigit() and len(filter_id) <= 18:
        found = words_of(request.user).filter(pk=int(filter_id)).first()
    if found is None:
        raise NotFound(NO_SUCH_FILTER)
    return found


@router.get("/v1/preferences", auth=Token("read:accounts"), response=Preferences, by_alias=True)
def preferences(request: HttpRequest) -> dict[str, Any]:
    default_level = PostForm.base_fields["visibility"].initial  # the compose box's default
    return {
        "posting:default:visibility": entities.MASTODON_LEVELS[default_level],
        "posting:default:sensitive": False,
        "posting:default:language": None,
        "reading:expand:media": "default",
        "reading:expand:spoilers": False,
    }


@router.get("/v2/filters", auth=Token("read:filters"), response=list[FilterV2])
def filters_v2(request: HttpRequest) -> list[dict[str, Any]]:
    return [filter_v2(word) for word in words_of(request.user)]


@router.get("/v2/filters/{filter_id}", auth=Token("read:filters"), response=FilterV2)
def filter_v2_one(request: HttpRequest, filter_id: str) -> dict[str, Any]:
    return filter_v2(_word(request, filter_id))


@router.post("/v2/filters", auth=Token("write:filters"), response=FilterV2)
def create_filter_v2(request: HttpRequest, body: NewFilterV2) -> dict[str, Any]:
    keywords = [k.keyword for k in body.keywords_attributes or [] if k.keyword]
    if len(keywords) > 1:
        raise Unprocessable(
            f"Validation failed: {ONE_KEYWORD}", {"keywords_attributes": [ONE_KEYWORD]}
        )
    phrase = keywords[0] if keywords else body.title or ""
    return filter_v2(_muted(request, phrase, body.expires_in))


@router.delete("/v2/filters/{filter_id}", auth=Token("write:filters"), response=dict[str, Any])
def delete_filter_v2(request: HttpRequest, filter_id: str) -> dict[str, Any]:
    _unmuted(request, filter_id)
    return {}


@router.get("/v1/filters", auth=Token("read:filters"), response=list[FilterV1])
def filters_v1(request: HttpRequest) -> list[dict[str, Any]]:
    return [filter_v1(word) for word in words_of(request.user)]


@router.get("/v1/filters/{filter_id}", auth=Token("read:filters"), response=FilterV1)
def filter_v1_one(request: HttpRequest, filter_id: str) -> dict[str, Any]:
    return filter_v1(_word(request, filter_id))


@router.post("/v1/filters", auth=Token("write:filters"), response=FilterV1)
def create_filter_v1(request: HttpRequest, body: NewFilterV1) -> dict[str, Any]:
    return filter_v1(_muted(request, body.phrase or "", body.expires_in))


@router.delete("/v1/filters/{filter_id}", auth=Token("write:filters"), response=dict[str, Any])
def delete_filter_v1(request: HttpRequest, filter_id: str) -> dict[str, Any]:
    _unmuted(request, filter_id)
    return {}


@router.get("/v1/favourites", auth=Token("read:favourites"), response=list[schemas.Status])
def favourites(
    request: HttpRequest, response: HttpResponse, query: Query[FavouritesQuery]
) -> list[dict[str, Any]]:
    page = liked_posts_page(user=request.user, cursor=query.cursor(), limit=query.size)
    items = query.keep(page.items, lambda item: item[0])
    if items or page.older:
        first = items[0][0] if items else page.older
        last = page.older or items[-1][0]
        link_header(request, response, first, last, more=page.older is not None)
    return entities.statuses(request, [(post.timeline_key, post) for _, post in items])


@router.get("/v1/bookmarks", auth=Token("read:bookmarks"), response=list[schemas.Status])
def bookmarks(request: HttpRequest, query: Query[FavouritesQuery]) -> list[dict[str, Any]]:
    """Nothing is bookmarked on the site yet; the paging is read, so bad ids are a 422."""
    query.cursor()
    return []


@router.get("/v1/custom_emojis", auth=Token("", optional=True), response=list[dict[str, Any]])
def custom_emojis(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/announcements", auth=Token("read"), response=list[dict[str, Any]])
def announcements(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/lists", auth=Token("read:lists"), response=list[dict[str, Any]])
def lists(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/followed_tags", auth=Token("read:follows"), response=list[dict[str, Any]])
def followed_tags(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/endorsements", auth=Token("read:accounts"), response=list[schemas.Account])
def endorsements(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/featured_tags", auth=Token("read:accounts"), response=list[dict[str, Any]])
def featured_tags(request: HttpRequest) -> list[Any]:
    return []


@router.get("/v1/domain_blocks", auth=Token("read:blocks"), response=list[str])
def domain_blocks(request: HttpRequest) -> list[str]:
    return []
