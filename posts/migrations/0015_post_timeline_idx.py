"""An index of posts by timeline key, for the feed's entries statement.

Built concurrently on PostgreSQL (and Citus), so that posting goes on while it
builds on a large table; SQLite has no such form, and needs none.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexWithoutLocking(AddIndexConcurrently):
    """``AddIndexConcurrently`` on PostgreSQL, a plain ``AddIndex`` elsewhere."""

    @staticmethod
    def _form(schema_editor) -> type[migrations.AddIndex]:
        postgresql = schema_editor.connection.vendor == "postgresql"
        return AddIndexConcurrently if postgresql else migrations.AddIndex

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        form = self._form(schema_editor)
        form.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        form = self._form(schema_editor)
        form.database_backwards(self, app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("posts", "0014_post_visibility"),
    ]

    operations = [
        AddIndexWithoutLocking(
            model_name="post",
            index=models.Index(fields=["timeline_key"], name="post_timeline_idx"),
        ),
    ]
