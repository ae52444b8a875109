"""Give relations_mutedword its primary key (user_id, id) on PostgreSQL, and distribute it
on Citus by its owner (a no-op elsewhere), in a transaction of its own."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("relations", "0008_follow_options_muted_words"),
    ]

    operations = [
        # The primary key (user_id, id) first: Citus needs the owner in it.
        migrations.RunPython(sharding.set_primary_keys, migrations.RunPython.noop),
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
