"""Who of the people a reader follows (or the reader) reposted these originals: the
"reposted by" of a feed item, where a post and its reposts collapse into one (seed
004). The rule is ``posts.visibility``'s, in SQL, as in the entries statement
(``timelines.home._items``)."""

from django.conf import settings
from django.db import connection

from accounts.models import User
from posts import page_queries, visibility
from posts.models import Post
from relations.visibility import sql_self_and_followees


def reposts_scanned_most(following: int) -> int:
    """The most reposts of an original scanned for a reader who follows ``following``
    people; past it, the reader and the people they follow are probed instead."""
    return settings.FEED_REPOSTS_SCANNED_PER_FOLLOWEE * (following + 1)


# Who of the people the reader follows (or the reader) reposted these originals:
# the rule as SQL, as in the entries statement (as a QuerySet, building the
# rule's subqueries cost more CPU than running them, every page). Each original's
# reposts are found from the smaller side, as there: scanned, or probed once per
# person the reader follows (a scalar subquery per person and original).
_SCANNED_REPOSTERS_SQL = """
SELECT r.repost_of_id, a.id, a.username, a.display_name, a.avatar, r.timeline_key
FROM {post} r
JOIN {user} a ON a.id = r.author_id
WHERE r.repost_of_id {among_post_ids} AND {shown_repost}
"""
_PROBED_REPOSTERS_SQL = """
SELECT hit.original_id, a.id, a.username, a.display_name, a.avatar, hit.timeline_key
FROM (
    SELECT o.id AS original_id, w.id AS reposter_id,
      (SELECT r.timeline_key FROM {post} r
       WHERE r.author_id = w.id AND r.repost_of_id = o.id AND {shown_repost}
       LIMIT 1) AS timeline_key
    FROM {self_and_followees} w CROSS JOIN {post} o
    WHERE o.id {among_post_ids}) hit
JOIN {user} a ON a.id = hit.reposter_id
WHERE hit.timeline_key IS NOT NULL
"""


def reposted_by(reader_id: int, originals: list[Post], *, following: int) -> dict[str, list[User]]:
    """Live reposts of these posts by people the reader follows (or the reader), newest
    first: their authors by the original's id."""
    scan_most = reposts_scanned_most(following)
    scanned = [o.pk for o in originals if o.repost_count <= scan_most]
    probed = [o.pk for o in originals if o.repost_count > scan_most]
    params: dict[str, object] = {"viewer": reader_id}
    legs = [
        leg.format(
            post=Post._meta.db_table,
            user=User._meta.db_table,
            self_and_followees=sql_self_and_followees(),
            among_post_ids=page_queries.among(chosen, params, name),
            shown_repost=visibility.sql_shown_repost_of("r"),
        )
        for leg, chosen, name in (
            (_SCANNED_REPOSTERS_SQL, scanned, "scanned"),
            (_PROBED_REPOSTERS_SQL, probed, "probed"),
        )
        if chosen
    ]
    sql = " UNION ALL ".join(legs) + " ORDER BY 6 DESC"
    reposters: dict[str, list[User]] = {}
    with connection.cursor() as db:
        db.execute(sql, params)
        for original_id, *author, _ in db.fetchall():
            reposters.setdefault(original_id, []).append(page_queries.author_of(tuple(author)))
    return reposters
