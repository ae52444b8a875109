"""Distribute the markers table on Citus by its user (a no-op elsewhere), in a
transaction of its own, after the table exists."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("timelines", "0016_marker"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
