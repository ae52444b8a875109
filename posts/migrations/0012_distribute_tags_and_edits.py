"""Distribute posts_posttag and posts_postedit on Citus (a no-op elsewhere), in a
transaction of its own (see 0010: not after 0011's parallel ALTER TABLE)."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("posts", "0011_tags_quotes_edits"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
