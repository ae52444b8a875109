"""Distribute the who-to-follow tables on Citus by their user (a no-op elsewhere),
in a transaction of their own, after the tables exist."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("timelines", "0012_contacts_and_suggestions"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
