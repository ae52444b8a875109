"""Store each post's search document in a generated column (PostgreSQL only).

0003 indexed the expression ``posts_search_document(text)``. The GIN index
answers rare words well, but for a common word PostgreSQL walks
post_timeline_key_idx newest first and checks each post, and with an
expression index that check recomputes the document (a regex and two
``to_tsvector`` calls, ~70 us a row): "morning coffee" over 1,000,000 posts
took 144 ms at p50 (docs/BENCHMARKS.md). A stored column makes the check a
read of the stored vector. The column is not in the model's state: Django
never writes it (PostgreSQL computes it) and never selects it.
"""

from django.db import migrations

INDEXES = [
    "CREATE INDEX IF NOT EXISTS post_search_document_idx ON posts_post "
    "USING gin (search_document)",
    "CREATE INDEX IF NOT EXISTS post_timeline_key_idx ON posts_post (timeline_key)",
]

FORWARD = [
    "DROP INDEX IF EXISTS post_search_idx",
    "ALTER TABLE posts_post ADD COLUMN IF NOT EXISTS search_document tsvector "
    "GENERATED ALWAYS AS (posts_search_document(text)) STORED",
    *INDEXES,
    # Without statistics on the new column the planner takes every word for
    # rare and sorts all its matches: 200 ms instead of 16 for two common words.
    "ANALYZE posts_post",
]

BACKWARD = [
    "DROP INDEX IF EXISTS post_search_document_idx",
    "ALTER TABLE posts_post DROP COLUMN IF EXISTS search_document",
    "CREATE INDEX IF NOT EXISTS post_search_idx ON posts_post "
    "USING gin (posts_search_document(text))",
]


def _run(statements: list[str]):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("posts", "0003_search")]

    operations = [
        migrations.RunPython(_run(FORWARD), _run(BACKWARD), elidable=False),
    ]
