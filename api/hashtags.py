"""Mastodon's Tag entity, from the site's tags (``posts.tags``): search, trends, the tag
timeline's ``/api/v1/tags/:name`` all answer the same shape.

A Tag's ``history`` is Mastodon's use by day; the site keeps one figure, the
people who used a trending tag in the last 24 hours (``TrendingTag.authors``),
so a trending tag has one day, today, and that figure as both its uses and its
accounts, wherever it is shown; other tags have none. Nobody follows a tag
here yet.
"""

from datetime import UTC, datetime
from typing import Any

from api.entities import Links
from api.schemas import Entity
from posts.tags import trending


class TagHistory(Entity):
    day: str
    uses: str
    accounts: str


class Tag(Entity):
    name: str
    url: str
    history: list[TagHistory]
    following: bool


def today() -> str:
    """Today's first second as Unix time, as Mastodon writes a history's day."""
    now = datetime.now(UTC)
    return str(int(datetime(now.year, now.month, now.day, tzinfo=UTC).timestamp()))


def tag(name: str, link: Links, *, people: int | None = None) -> dict[str, Any]:
    """A tag; ``people``: how many used it today, when the site counted them (trending)."""
    history = []
    if people is not None:
        history.append({"day": today(), "uses": str(people), "accounts": str(people)})
    return {"name": name, "url": link.tag(name), "history": history, "following": False}


def tags(names: list[str], link: Links) -> list[dict[str, Any]]:
    """Tags by name, each with today's figure when it is trending (one query of the
    trending table's ten rows)."""
    people = {row.tag: row.authors for row in trending()} if names else {}
    return [tag(name, link, people=people.get(name)) for name in names]
