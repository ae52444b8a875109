"""The answers' shapes, for the OpenAPI document (``/api/openapi.json``): Mastodon's
Account, Status and their parts, as ``api.entities`` builds them."""

from typing import Any

from pydantic import BaseModel


class Entity(BaseModel):
    """An answer's shape. Answers are plain dicts, built by ``api.entities`` and the
    areas' modules, so pydantic checks them directly: ninja's ``Schema`` reads each
    field through a getter made for model instances, which cost a third of a home
    page (docs/BENCHMARKS.md, "The client API's home timeline")."""


class Field(Entity):
    name: str
    value: str
    verified_at: str | None = None


class Account(Entity):
    id: str
    username: str
    acct: str
    display_name: str
    locked: bool
    bot: bool
    discoverable: bool
    group: bool
    created_at: str
    note: str
    url: str
    uri: str
    avatar: str
    avatar_static: str
    header: str
    header_static: str
    followers_count: int
    following_count: int
    statuses_count: int
    last_status_at: str | None
    emojis: list[Any]
    fields: list[Field]


class Source(Entity):
    """What the signed-in user typed, and what their settings say."""

    privacy: str
    sensitive: bool
    language: str | None
    note: str
    fields: list[Field]
    follow_requests_count: int


class CredentialAccount(Account):
    source: Source


class Mention(Entity):
    id: str
    username: str
    acct: str
    url: str


class Tag(Entity):
    name: str
    url: str


class MediaAttachment(Entity):
    id: str
    type: str
    url: str
    preview_url: str
    remote_url: str | None
    preview_remote_url: str | None
    text_url: str | None
    meta: dict[str, Any]
    description: str | None
    blurhash: str | None


class QuoteApproval(Entity):
    automatic: list[str]
    manual: list[str]
    current_user: str


class Quote(Entity):
    """What a status quotes: ``quoted_status`` is null unless ``state`` is "accepted"."""

    state: str
    quoted_status: "Status | None"


class Status(Entity):
    id: str
    created_at: str
    in_reply_to_id: str | None
    in_reply_to_account_id: str | None
    sensitive: bool
    spoiler_text: str
    visibility: str
    language: str | None
    uri: str
    url: str | None
    replies_count: int
    reblogs_count: int
    favourites_count: int
    quotes_count: int
    edited_at: str | None
    favourited: bool
    reblogged: bool
    muted: bool
    bookmarked: bool
    content: str
    filtered: list[Any]
    reblog: "Status | None"
    quote: Quote | None
    quote_approval: QuoteApproval
    application: dict[str, Any] | None
    account: Account
    media_attachments: list[MediaAttachment]
    mentions: list[Mention]
    tags: list[Tag]
    emojis: list[Any]
    card: dict[str, Any] | None
    poll: dict[str, Any] | None


Quote.model_rebuild()


class DeletedStatus(Status):
    """Delete and redraft: the status as it was, with the text its author typed."""

    text: str


class App(Entity):
    id: str
    name: str
    website: str | None = None
    scopes: list[str]
    redirect_uri: str
    redirect_uris: list[str]
    vapid_key: str
    client_id: str | None = None
    client_secret: str | None = None
    client_secret_expires_at: int | None = None
