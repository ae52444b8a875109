"""Search indexes (posts.search), PostgreSQL only; SQLite searches with LIKE.

The indexes are raw SQL, not model state: expression indexes on a function of
our own, which ``Meta.indexes`` cannot name. ``makemigrations`` ignores them.

- ``posts_search_document(text)``: the English full-text vector of the text's
  non-CJK part, plus the CJK runs cut into overlapping bigrams (and each run's
  last character alone) in the ``simple`` configuration, so Chinese written
  without spaces is found. GIN index ``post_search_idx``.
- ``post_timeline_key_idx``: newest-first order of all posts, so a common word
  is answered by walking back from the newest post instead of sorting every match.
- ``user_search_trgm_idx``: trigram GIN over upper(username) and
  upper(display_name), the expressions Django's ``icontains`` compares.
"""

from django.db import migrations

# Hiragana, Katakana, CJK Extension A, CJK Unified Ideographs, Compatibility Ideographs.
CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    # Only pg_catalog functions inside, schema-qualified where it matters, so the
    # function gives the same answer whatever the search_path (pg_dump restores).
    rf"""
    CREATE OR REPLACE FUNCTION posts_search_document(body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT pg_catalog.to_tsvector(
               'pg_catalog.english'::regconfig,
               pg_catalog.regexp_replace(body, '[{CJK}]+', ' ', 'g'))
          || pg_catalog.to_tsvector(
               'pg_catalog.simple'::regconfig,
               coalesce((
                 SELECT pg_catalog.string_agg(pg_catalog.substr(run.m[1], i, 2), ' '
                                              ORDER BY run.n, i)
                 FROM pg_catalog.regexp_matches(body, '([{CJK}]+)', 'g')
                      WITH ORDINALITY AS run(m, n),
                      pg_catalog.generate_series(1, pg_catalog.char_length(run.m[1])) AS i
               ), ''))
    $$
    """,
    "CREATE INDEX IF NOT EXISTS post_search_idx ON posts_post "
    "USING gin (posts_search_document(text))",
    "CREATE INDEX IF NOT EXISTS post_timeline_key_idx ON posts_post (timeline_key)",
    "CREATE INDEX IF NOT EXISTS user_search_trgm_idx ON accounts_user USING gin "
    "((upper(username::text)) gin_trgm_ops, (upper(display_name::text)) gin_trgm_ops)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS user_search_trgm_idx",
    "DROP INDEX IF EXISTS post_timeline_key_idx",
    "DROP INDEX IF EXISTS post_search_idx",
    "DROP FUNCTION IF EXISTS posts_search_document(text)",
    # pg_trgm stays: other objects may have come to use it.
]


def _run(statements: list[str]):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("posts", "0002_like_moderationlog_report_post_hidden_at_and_more"),
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(_run(FORWARD), _run(BACKWARD), elidable=False),
    ]
