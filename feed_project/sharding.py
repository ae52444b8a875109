"""How every table is spread over a Citus cluster: the one map of distribution columns.

Seed 000's UID-hash sharding: nearly everything belongs to one user and is
distributed by that user's id, all in one colocation group with
``accounts_user``, so a user's row, posts, follow lists, blocks, mutes,
likes, inbox and notifications live on the same worker and join there.
Small tables every node needs are reference tables (a copy on every node).
Docs: docs/SCALING.md. Used by:

- the migration that distributes the tables (``distribute``: a no-op unless
  the ``citus`` extension is installed, so plain PostgreSQL and SQLite are
  untouched) and sets the primary keys Citus requires on PostgreSQL;
- ``tests/test_sharding.py``: every statement of the main scenarios filters a
  distributed table on its column, and no foreign key is one Citus refuses.

Only table names here: this module imports no app.
"""

from dataclasses import dataclass

# The colocation group of everything a user owns.
BY_USER = "accounts_user"


@dataclass(frozen=True)
class Distributed:
    """A table hashed on ``column``; ``colocate_with`` names the group's first table
    (None: a group of its own). ``primary_key``: the key the database must have
    when Django's (the id alone) lacks the column."""

    column: str
    colocate_with: str | None = BY_USER
    primary_key: tuple[str, ...] | None = None
    # Unique constraints and indexes Citus cannot keep (they lack the column),
    # dropped on Citus only; the docstring of the table's model says what holds instead.
    citus_drops: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reference:
    """A small table copied to every node: joins with anything, costs every node a write."""


TABLES: dict[str, Distributed | Reference] = {
    # --- one user's data: hashed by the user id, colocated ------------------------
    "accounts_user": Distributed(
        "id",
        colocate_with=None,
        citus_drops=(
            "accounts_user_username_key",
            "accounts_user_username_ci_unique",
            "accounts_user_email_ci_unique",
        ),
    ),
    "accounts_user_groups": Distributed("user_id", primary_key=("user_id", "id")),
    "accounts_user_user_permissions": Distributed("user_id", primary_key=("user_id", "id")),
    "django_admin_log": Distributed("user_id", primary_key=("user_id", "id")),
    "relations_follower": Distributed("user_id"),
    "relations_followee": Distributed("user_id"),
    "relations_block": Distributed("user_id"),
    "relations_followrequest": Distributed("user_id"),
    "relations_mutedword": Distributed("user_id", primary_key=("user_id", "id")),
    "timelines_conversation": Distributed("user_id"),
    "timelines_conversationmessage": Distributed("user_id"),
    # Read positions (Mastodon's markers), a user's two rows.
    "timelines_marker": Distributed("user_id"),
    "relations_mute": Distributed("user_id"),
    # Who to follow (timelines.suggestions): a user's contact degrees and suggestions.
    "timelines_contact": Distributed("user_id"),
    "timelines_suggestion": Distributed("user_id"),
    # A CSV of follows being imported (relations.follow_import), by its importer.
    "relations_followimport": Distributed("user_id", primary_key=("user_id", "id")),
    # A post id starts with its author (posts.ids): (author_id, id) is unique iff id is.
    "posts_post": Distributed("author_id", primary_key=("author_id", "id")),
    "posts_like": Distributed("user_id"),
    # A post's images, by the post's author: read with the post, on its shard.
    "posts_postmedia": Distributed("author_id", primary_key=("author_id", "id")),
    # A post's hashtags and earlier versions, beside the post (docs/SCALING.md: the
    # tag index by author, not by tag: a tag page fans out to every shard).
    "posts_posttag": Distributed("author_id"),
    "posts_postedit": Distributed("author_id"),
    "timelines_inboxentry": Distributed("reader_id"),
    "timelines_inboxstate": Distributed("reader_id"),
    "timelines_notification": Distributed("recipient_id", primary_key=("recipient_id", "id")),
    # The outbox: keyed by the user whose inbox or notifications the task changes.
    "timelines_pendingtask": Distributed("owner"),
    # Accounts' own: two-factor, recovery codes, sessions, invites, sign-up applications.
    "accounts_twofactor": Distributed("user_id"),
    "accounts_recoverycode": Distributed("user_id"),
    "accounts_usersession": Distributed("user_id"),
    "accounts_invite": Distributed("user_id"),
    "accounts_signupapplication": Distributed("user_id"),
    # Data exports (accounts.exports): a user's archives, read by their owner.
    "accounts_export": Distributed("user_id", primary_key=("user_id", "id")),
    # --- keyed by something else: a group of their own -------------------------
    # Read and written by post id only (one per post, the sweeper scans them all).
    "timelines_fanout": Distributed("post_id", colocate_with=None),
    # Read by session key on every signed-in request.
    "django_session": Distributed("session_key", colocate_with=None),
    # Usernames and e-mail addresses taken (accounts.unique_names): uniqueness, and
    # the look-up of a person by name or address, on the one shard of the key.
    "accounts_usernameclaim": Distributed("name", colocate_with=None),
    "accounts_emailclaim": Distributed("address", colocate_with=None),
    # --- small, rarely written, joined with anything: on every node --------------
    "django_content_type": Reference(),
    "auth_permission": Reference(),
    "auth_group": Reference(),
    "auth_group_permissions": Reference(),
    # Big accounts only (thousands at most), written when one crosses the threshold.
    "timelines_pullauthor": Reference(),
    # One row, bumped when a Redis write fails.
    "timelines_cachegeneration": Reference(),
    # The trending tags: ten rows (posts.tags.TRENDING_SHOWN) rewritten every few minutes by a task.
    "posts_trendingtag": Reference(),
    # The registration mode an operator set in the admin: one row, read at sign-up.
    "accounts_registrationsetting": Reference(),
    # Moderation: a queue across every user, written by reports and moderators.
    "posts_report": Reference(),
    "posts_moderationlog": Reference(),
    # The client API's OAuth tables (api.models): every API request reads its token
    # (on any node, by its checksum), log-ins write them; apps are few.
    "api_application": Reference(),
    "api_accesstoken": Reference(),
    "api_refreshtoken": Reference(),
    "api_grant": Reference(),
    "api_idtoken": Reference(),
    "api_devicegrant": Reference(),
}

# Tables Django keeps for itself and Citus need not know.
UNMANAGED = {"django_migrations"}


def distributed() -> dict[str, str]:
    """Table -> distribution column, for every distributed table."""
    return {name: t.column for name, t in TABLES.items() if isinstance(t, Distributed)}


def group_of(table: str) -> str | None:
    """The colocation group of a distributed table (its first table's name)."""
    spec = TABLES.get(table)
    if not isinstance(spec, Distributed):
        return None
    return spec.colocate_with or table


def refused_foreign_key(
    table: str, columns: tuple[str, ...], target: str, target_columns: tuple[str, ...]
) -> str | None:
    """Why Citus would refuse this foreign key, or None when it accepts it.

    Citus takes a key from a distributed table to a reference table, between
    reference tables, and between colocated distributed tables when it runs
    from distribution column to distribution column.
    """
    source, dest = TABLES.get(table), TABLES.get(target)
    if source is None or dest is None:
        return f"{table if source is None else target} is not in feed_project.sharding.TABLES"
    if isinstance(dest, Reference):
        return None
    if isinstance(source, Reference):
        return "a reference table cannot point at a distributed table"
    if group_of(table) != group_of(target):
        return f"{table} and {target} are not colocated"
    pairs = dict(zip(columns, target_columns, strict=True))
    if pairs.get(source.column) != dest.column:
        return f"the key does not run from {table}.{source.column} to {target}.{dest.column}"
    return None


# --- the migration's work --------------------------------------------------------


_ON_CITUS: dict[tuple, bool] = {}


def on_citus(connection) -> bool:
    """Whether this connection's database is a Citus coordinator (asked once per database).

    Reads that would join one user's shard to another's take their routed
    form there (``timelines.home._items``).
    """
    if connection.vendor != "postgresql":
        return False
    # Every page asks (two or three times): one read of the connection's settings
    # through Django's proxy, not one per name: each read looks the thread's connection up.
    database = connection.settings_dict
    where = (database.get("HOST"), database.get("PORT"), database.get("NAME"))
    if where not in _ON_CITUS:
        with connection.cursor() as cursor:
            _ON_CITUS[where] = _has_citus(cursor)
    return _ON_CITUS[where]


def on_plain_postgresql(connection) -> bool:
    """Whether this connection's database is PostgreSQL without Citus: where one
    statement may join any rows, and PostgreSQL-only forms (row versions, planner
    fences) hold."""
    return connection.vendor == "postgresql" and not on_citus(connection)


def _has_citus(cursor) -> bool:
    cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
    return cursor.fetchone() is not None


def _existing(cursor, tables: list[str]) -> list[str]:
    cursor.execute("SELECT t FROM unnest(%s::text[]) t WHERE to_regclass(t) IS NOT NULL", [tables])
    found = {row[0] for row in cursor.fetchall()}
    return [table for table in tables if table in found]


def _primary_key(cursor, table: str) -> tuple[str | None, tuple[str, ...]]:
    cursor.execute(
        """
        SELECT c.conname, array_agg(a.attname ORDER BY k.ord)
        FROM pg_constraint c
        CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
        WHERE c.conrelid = %s::regclass AND c.contype = 'p'
        GROUP BY c.conname
        """,
        [table],
    )
    row = cursor.fetchone()
    return (row[0], tuple(row[1])) if row else (None, ())


def set_primary_keys(apps, schema_editor) -> None:
    """PostgreSQL (plain or Citus): the primary keys of TABLES that include the column."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for table in _existing(cursor, list(TABLES)):
            spec = TABLES[table]
            if not isinstance(spec, Distributed) or spec.primary_key is None:
                continue
            name, columns = _primary_key(cursor, table)
            if columns == spec.primary_key:
                continue
            quoted = ", ".join(f'"{c}"' for c in spec.primary_key)
            if name is not None:
                cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
            cursor.execute(f'ALTER TABLE "{table}" ADD PRIMARY KEY ({quoted})')


def _foreign_keys(cursor, tables: list[str]) -> list[tuple[str, str, str]]:
    """(table, constraint, definition) of every foreign key from or to these tables."""
    cursor.execute(
        """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
        FROM pg_constraint
        WHERE contype = 'f'
          AND (conrelid::regclass::text = ANY(%s) OR confrelid::regclass::text = ANY(%s))
        ORDER BY 1, 2
        """,
        [tables, tables],
    )
    return cursor.fetchall()


def distribute(apps, schema_editor) -> None:
    """On a Citus coordinator, distribute every table of TABLES not yet distributed.

    Foreign keys are dropped first and added back after (Citus checks each
    against the layout then); a key it refuses fails the migration.
    Elsewhere (plain PostgreSQL, SQLite) this does nothing.
    """
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if not _has_citus(cursor):
            return
        cursor.execute("SELECT logicalrelid::regclass::text FROM pg_dist_partition")
        done = {row[0] for row in cursor.fetchall()}
        todo = [table for table in _existing(cursor, list(TABLES)) if table not in done]
        if not todo:
            return
        # Foreign keys to reference tables need one connection per node for
        # the whole transaction (the migration's).
        cursor.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        keys = _foreign_keys(cursor, todo)
        for table, name, _ in keys:
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
        # Reference tables first, then each group's first table, then the rest.
        ordered = sorted(
            todo,
            key=lambda t: 0 if isinstance(TABLES[t], Reference) else 1 if group_of(t) == t else 2,
        )
        for table in ordered:
            spec = TABLES[table]
            for name in getattr(spec, "citus_drops", ()):
                cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{name}"')
                cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
            if isinstance(spec, Reference):
                cursor.execute("SELECT create_reference_table(%s)", [table])
            else:
                cursor.execute(
                    "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                    [table, spec.column, spec.colocate_with or "none"],
                )
        for table, name, definition in keys:
            cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
