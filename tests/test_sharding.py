"""The layout of feed_project.sharding holds: queries route by the shard key, and
the schema has no key Citus would refuse. Both run on plain PostgreSQL,
so CI keeps them true without a Citus cluster (``make test-citus`` runs one)."""

import re
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from feed_project import sharding
from posts import ids
from posts.models import Post
from tests import images
from tests.conftest import PASSWORD
from tests.sharding_sql import tables_of, unpinned
from timelines.suggestions.tasks import refresh_suggestions
from timelines.tasks import trim_inboxes


@dataclass(frozen=True)
class Allowed:
    """Statements that may touch every shard, and why."""

    pattern: str  # a regular expression searched in the SQL
    reason: str
    pending: bool = False  # True: not by design; docs/SCALING.md lists it as left to do
    plain_only: bool = False  # True: only plain PostgreSQL runs it (Citus takes another form)


ALLOWED = [
    # --- every shard by design ------------------------------------------------------
    Allowed(
        r'"search_document"\) @@|UPPER\("accounts_user"\."(username|display_name)"::text\) LIKE',
        "search: posts and people by their words, across every author (docs/SCALING.md)",
    ),
    Allowed(
        r'FROM "posts_post".*"posts_post"\."in_reply_to_id" = '
        r"|FROM posts_post p\s.*\bp\.in_reply_to_id = ",
        "a post's replies are by many authors: every shard, one post_replies_idx probe each",
    ),
    Allowed(
        r'FROM "posts_posttag" .*"posts_posttag"\."tag" = ',
        "a tag page: the tag index is distributed by author beside the posts, so a tag's "
        "posts are on every shard (one post_tag_page_idx range scan each; docs/SCALING.md); "
        "joined on the id alone here, read in two routed statements on Citus "
        "(posts.tags._tag_page_routed)",
    ),
    Allowed(
        r"FROM unnest\(%\(authors\)s::bigint\[\].*?\) AS \w+\([^)]*\)\s+CROSS JOIN LATERAL",
        "pull and rebuild on plain PostgreSQL: one statement of LATERAL index scans, one "
        "per author, each pinned by its author from an array; Citus cannot push a LIMIT "
        "down that LATERAL, so there timelines.home._pull reads the authors from their user "
        "rows (colocated with posts, pushed down whole) and the rebuild takes that pull",
        plain_only=True,
    ),
    Allowed(
        r'FROM "timelines_inboxstate" WHERE "timelines_inboxstate"\."reader_id" > ',
        "the trim sweep walks every kept inbox in reader order (beat, every "
        "FEED_TRIM_EVERY_SECONDS): every shard, FEED_TRIM_BATCH rows a step; the trims "
        "it then runs name their readers",
    ),
    Allowed(
        r'FROM "timelines_inboxstate" INNER JOIN "accounts_user" ON '
        r'\("timelines_inboxstate"\."reader_id" = "accounts_user"\."id"\) '
        r'WHERE \("timelines_inboxstate"\."reader_id" > %s AND '
        r'"timelines_inboxstate"\."reader_id" <= %s AND \("accounts_user"\."last_active_at" < ',
        "the same sweep asks for the away readers in each batch's range of kept inboxes, "
        "joined to their users on the shard key (inside each shard): every shard, once a step",
    ),
    Allowed(
        r'FROM "posts_post" .*"posts_post"\."visibility" = .*ORDER BY "posts_post"\."timeline_key"',
        "the public timeline: everyone's public posts, every shard, one post_public_idx "
        "range scan each (posts.public_timeline)",
    ),
    Allowed(
        r'FROM "accounts_user" WHERE \("accounts_user"\."deletion_due_at" IS NULL AND '
        r'"accounts_user"\."is_active" AND "accounts_user"\."last_active_at" >= .*'
        r'ORDER BY "accounts_user"\."followers_count" DESC',
        "who to follow's fallback: the most followed accounts active lately, every shard, "
        "once per batch of beat's refresh or per newcomer's ranking, never a page "
        "(timelines.suggestions.ranking.popular_accounts)",
    ),
    Allowed(
        r'SELECT "accounts_user"\."id" AS "pk" FROM "accounts_user" WHERE \('
        r'"accounts_user"\."is_active" AND "accounts_user"\."last_active_at" >= %s AND '
        r'"accounts_user"\."id" > %s\) ORDER BY 1 ASC',
        "beat's refresh of suggestions walks every active user in id order (as the trim "
        "sweep walks inboxes): every shard, REFRESH_BATCH rows a step; each ranking then "
        "reads by its user",
    ),
    Allowed(
        r'FROM "posts_like" WHERE "posts_like"\."post_id" = ',
        "who liked an edited post (a task, once per edit): likes are keyed by the liker",
    ),
]


def allowed(sql: str) -> Allowed | None:
    return next((a for a in ALLOWED if re.search(a.pattern, sql, re.DOTALL)), None)


class SiteStatements:
    """The SQL the site runs, not counting the test's own look-ups (``paused``)."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.recording = True

    def __call__(self, execute, sql, params, many, context):
        if self.recording:
            self.statements.append(sql)
        return execute(sql, params, many, context)


RECORDER = SiteStatements()


def _post(client, url, data=None, on_commit=None):
    with on_commit(execute=True):
        response = client.post(url, data or {})
    assert response.status_code in (200, 302), (url, response.status_code)
    return response


def _get(client, url):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response


def _newest_post_id(username: str) -> str:
    RECORDER.recording = False
    try:
        return Post.objects.filter(author__username=username).order_by("-timeline_key")[0].pk
    finally:
        RECORDER.recording = True


def scripted_session(client_class, on_commit) -> None:
    """Sign up, follow, post (with an image), fan out, read every page and the image, like,
    repost, reply, report, delete (the image's files too)."""
    dora, erin, fred = client_class(), client_class(), client_class()
    for client, name in ((dora, "dora"), (erin, "erin"), (fred, "fred")):
        _post(
            client,
            "/accounts/signup/",
            {
                "username": name,
                "display_name": name,
                "email": f"{name}@example.com",
                "password1": PASSWORD,
                "password2": PASSWORD,
            },
            on_commit,
        )
    _get(dora, "/")  # builds dora's inbox
    _post(dora, "/@erin/follow/", on_commit=on_commit)
    _post(fred, "/@erin/follow/", on_commit=on_commit)
    photo = images.upload("cat.jpg", images.jpeg_with_gps())
    _post(
        erin,
        "/posts/new/",
        {"text": "hello @dora", "spoiler_text": "cats", "media": [photo], "media_alt": ["a cat"]},
        on_commit,
    )
    first = _newest_post_id("erin")
    _get(dora, f"/posts/{first}/media/0/thumbnail/")
    _get(dora, f"/posts/{first}/media/0/")
    _get(dora, "/")
    key = ids.post_id_to_timeline_key(first)
    _get(dora, "/?before=" + key)
    _get(dora, "/timeline/new/?after=" + key)
    _get(dora, "/@erin/")
    _get(dora, "/@erin/followers/")
    _get(dora, "/@dora/following/")
    _get(dora, f"/posts/{first}/")
    _post(dora, f"/posts/{first}/like/", on_commit=on_commit)
    _post(fred, f"/posts/{first}/repost/", on_commit=on_commit)
    _post(dora, "/posts/new/", {"text": "a reply", "in_reply_to": first}, on_commit)
    reply = _newest_post_id("dora")
    _get(erin, f"/posts/{reply}/")
    _get(erin, "/notifications/")
    _post(erin, "/notifications/read/", on_commit=on_commit)
    _get(dora, "/search/?q=hello")
    # Posts at each level, the public timeline.
    _post(erin, "/posts/new/", {"text": "friends only", "visibility": "followers"}, on_commit)
    _post(erin, "/posts/new/", {"text": "@dora just you", "visibility": "direct"}, on_commit)
    _get(dora, "/public/")
    _get(dora, "/")
    _get(dora, f"/posts/{_newest_post_id('erin')}/")
    # A locked account: a follow request, the requests page, its acceptance.
    _post(fred, "/accounts/profile/", {"display_name": "fred", "locked": "on"}, on_commit)
    _post(dora, "/@fred/follow/", on_commit=on_commit)
    _get(erin, "/@fred/")
    _get(fred, "/follow-requests/")
    _post(fred, "/follow-requests/dora/accept/", on_commit=on_commit)
    # A #tag, its page, trending, an edit and its history, quotes.
    _post(erin, "/posts/new/", {"text": "about #Topic and https://example.com"}, on_commit)
    tagged = _newest_post_id("erin")
    _get(dora, "/tags/topic/")
    _get(dora, "/tags/")
    _get(dora, "/search/?q=%23topic")  # a tag alone: its tag page
    _get(dora, "/search/?q=%23topic+about")  # a tag and words: words, then the tag index
    _get(erin, f"/posts/{tagged}/edit/")
    _post(erin, f"/posts/{tagged}/edit/", {"text": "about #Topic, edited @dora"}, on_commit)
    _get(dora, f"/posts/{tagged}/history/")
    _post(dora, f"/posts/{tagged}/repost/", {"text": "quoting #topic"}, on_commit)
    _post(fred, "/posts/new/", {"text": "me too", "quote_of": tagged}, on_commit)
    _get(erin, "/@dora/")
    _get(erin, "/notifications/")
    # A data export made, shown, downloaded; a CSV of follows imported.
    _post(dora, "/settings/export/", on_commit=on_commit)
    page = _get(dora, "/settings/export/").content.decode()
    _get(dora, re.search(r'href="(/settings/export/download/[^"]+/)"', page).group(1))
    following = SimpleUploadedFile("following.csv", b"username\ndora\nerin\n", "text/csv")
    _post(fred, "/settings/import/follows/", {"file": following}, on_commit)
    _get(fred, "/settings/import/follows/")
    _post(dora, f"/posts/{first}/report/", {"reason": "spam"}, on_commit)
    _post(dora, f"/posts/{first}/unlike/", on_commit=on_commit)
    _post(fred, f"/posts/{first}/unrepost/", on_commit=on_commit)
    _post(dora, "/@fred/mute/", on_commit=on_commit)
    _post(dora, "/@fred/unmute/", on_commit=on_commit)
    _post(erin, f"/posts/{first}/delete/", on_commit=on_commit)
    _post(dora, "/@fred/block/", on_commit=on_commit)
    _post(dora, "/@erin/unfollow/", on_commit=on_commit)
    _get(dora, "/")
    _get(fred, "/")
    _get(erin, "/suggestions/")
    trim_inboxes()  # beat's trim sweep (timelines.tasks)
    refresh_suggestions()  # beat's ranking of who to follow (timelines.suggestions)


@pytest.mark.django_db
@pytest.mark.parametrize("routed", [None, True], ids=["entries-as-found", "entries-routed"])
def test_every_statement_of_the_main_scenarios_routes_by_the_shard_key(
    django_capture_on_commit_callbacks, settings, routed
):
    settings.FEED_ROUTED_READS = routed
    RECORDER.statements.clear()
    with connection.execute_wrapper(RECORDER):
        scripted_session(Client, django_capture_on_commit_callbacks)
    statements = list(RECORDER.statements)
    offending, used = [], set()
    for sql in statements:
        missing = unpinned(sql)
        if not missing:
            continue
        rule = allowed(sql)
        if rule is None:
            offending.append(f"{', '.join(missing)} in: {sql}")
        else:
            used.add(rule.pattern)
    assert len(statements) > 100 and any(tables_of(sql) for sql in statements)
    assert not offending, "Statements that reach every shard:\n" + "\n\n".join(offending)
    citus = sharding.on_citus(connection)
    stale = [a.reason for a in ALLOWED if a.pattern not in used and not (a.plain_only and citus)]
    assert not stale, f"Allow-list entries no statement needs any more: {stale}"


def is_shard(table: str) -> bool:
    """A Citus shard placement on the coordinator (``posts_post_102040``), not a table."""
    return table not in sharding.TABLES and re.sub(r"_\d+$", "", table) in sharding.TABLES


@pytest.mark.django_db
def test_the_schema_has_no_foreign_key_citus_refuses():
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.conrelid::regclass::text, c.confrelid::regclass::text,
              (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(c.conkey)
                 WITH ORDINALITY k(att, n) JOIN pg_attribute a
                 ON a.attrelid = c.conrelid AND a.attnum = k.att),
              (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(c.confkey)
                 WITH ORDINALITY k(att, n) JOIN pg_attribute a
                 ON a.attrelid = c.confrelid AND a.attnum = k.att)
            FROM pg_constraint c JOIN pg_namespace s ON s.oid = c.connamespace
            WHERE c.contype = 'f' AND s.nspname = 'public'
            """
        )
        keys = cursor.fetchall()
    refused = [
        f"{table}({', '.join(cols)}) -> {target}({', '.join(tcols)}): {why}"
        for table, target, cols, tcols in keys
        if not is_shard(table)
        and (why := sharding.refused_foreign_key(table, tuple(cols), target, tuple(tcols)))
    ]
    assert keys and not refused, refused


@pytest.mark.django_db
def test_every_table_is_in_the_sharding_map_and_its_keys_hold_the_column():
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
        tables = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            """
            SELECT i.indrelid::regclass::text, c.relname,
              array(SELECT a.attname FROM pg_attribute a
                    WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey))
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            JOIN pg_namespace s ON s.oid = c.relnamespace
            WHERE (i.indisunique OR i.indisprimary) AND s.nspname = 'public'
            """
        )
        unique_keys = cursor.fetchall()
    unmapped = {t for t in tables if not is_shard(t)} - set(sharding.TABLES) - sharding.UNMANAGED
    assert not unmapped, f"Tables feed_project.sharding.TABLES does not place: {unmapped}"
    columns = sharding.distributed()
    lacking = [
        f"{table}: {index} {cols}"
        for table, index, cols in unique_keys
        if table in columns
        and columns[table] not in cols
        and index not in sharding.TABLES[table].citus_drops
    ]
    assert not lacking, f"Unique keys without the distribution column: {lacking}"


def test_the_checker_tells_routed_statements_from_the_rest():
    assert unpinned('SELECT 1 FROM "posts_post" WHERE "posts_post"."id" = %s') == [
        "posts_post=posts_post"
    ]
    assert not unpinned(
        'SELECT 1 FROM "posts_post" WHERE ("posts_post"."author_id" = %s'
        ' AND "posts_post"."id" = %s)'
    )
    # A join on both distribution columns carries the filter; on another column it does not.
    assert not unpinned(
        "SELECT 1 FROM posts_post p JOIN accounts_user a ON a.id = p.author_id"
        " WHERE p.author_id = ANY(%s)"
    )
    assert unpinned(
        "SELECT 1 FROM timelines_notification n JOIN accounts_user a ON a.id = n.actor_id"
        " WHERE n.recipient_id = %s"
    ) == ["a=accounts_user"]
    assert not unpinned(
        'DELETE FROM "relations_mute" WHERE ("relations_mute"."user_id",'
        ' "relations_mute"."muted_id") IN ((%s, %s))'
    )
    assert unpinned("SELECT 1 FROM posts_post p WHERE p.author_id IN (SELECT 1)") == [
        "p=posts_post"
    ]
    assert not unpinned("SELECT 1 FROM timelines_pullauthor")  # a reference table


def unenforced_keys() -> list[tuple[type, str]]:
    """(model, field) of every foreign key the database does not enforce."""
    return [
        (model, field.name)
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if field.is_relation and not field.db_constraint
    ]


@pytest.mark.django_db
def test_keys_the_database_does_not_enforce_still_point_at_rows_after_the_session(
    django_capture_on_commit_callbacks,
):
    scripted_session(Client, django_capture_on_commit_callbacks)
    dangling = []
    for model, name in unenforced_keys():
        field = model._meta.get_field(name)
        target = field.related_model
        rows = model.objects.exclude(**{f"{name}__isnull": True}).exclude(
            **{f"{field.attname}__in": target.objects.values("pk")}
        )
        if rows.exists():
            dangling.append(f"{model.__name__}.{name}")
    assert {m.__name__ for m, _ in unenforced_keys()} >= {"Post", "Like", "Notification", "FanOut"}
    assert not dangling, f"Rows pointing at nothing: {dangling}"
