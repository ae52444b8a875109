"""The layout of feed_project.sharding: primary keys that include the distribution
column (PostgreSQL), and, on a Citus coordinator only, the tables distributed.

Every table the map names must exist by now, so this depends on the last
migration of each app. A later migration that adds a table to the map runs
``sharding.set_primary_keys`` and ``sharding.distribute`` again: both skip
what is done already.
"""

from django.db import migrations

from feed_project import sharding


def post_id_index(apps, schema_editor):
    # The primary key is (author_id, id) now; lookups and joins by id alone
    # (a reply's parent, a repost's original) keep an index of their own.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE INDEX IF NOT EXISTS post_id_idx ON posts_post (id)")


class Migration(migrations.Migration):
    dependencies = [
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("sessions", "0001_initial"),
        ("accounts", "0002_user_unread_notifications"),
        ("relations", "0003_unenforced_other_user_keys"),
        ("posts", "0005_unenforced_post_keys"),
        ("timelines", "0005_unenforced_cross_shard_keys"),
    ]

    operations = [
        migrations.RunPython(sharding.set_primary_keys, migrations.RunPython.noop),
        migrations.RunPython(post_id_index, migrations.RunPython.noop),
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
