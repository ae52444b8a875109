"""Distribute posts_postmedia on Citus (a no-op elsewhere), in a transaction of its own.

Citus distributes a table in sequential mode, which it refuses in a
transaction that already ran a parallel statement (0009's ALTER TABLE of the
distributed posts_post).
"""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("posts", "0009_media_and_content_warnings"),
    ]

    operations = [
        migrations.RunPython(sharding.set_primary_keys, migrations.RunPython.noop),
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
