"""Distribute the conversation tables on Citus by their participant (a no-op elsewhere),
in a transaction of their own, after the tables exist."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("timelines", "0010_conversations"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
