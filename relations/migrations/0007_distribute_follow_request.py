"""Distribute relations_followrequest on Citus by the locked account (a no-op elsewhere),
in a transaction of its own, after the table exists."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("relations", "0006_follow_request"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
