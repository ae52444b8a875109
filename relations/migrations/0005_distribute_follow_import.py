"""follow imports keyed by (user_id, id) on PostgreSQL and distributed on Citus (a no-op
elsewhere), in a transaction of their own as posts 0010 does for media."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("relations", "0004_follow_import"),
    ]

    operations = [
        migrations.RunPython(sharding.set_primary_keys, migrations.RunPython.noop),
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
