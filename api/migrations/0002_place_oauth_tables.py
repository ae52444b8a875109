"""The OAuth tables placed on Citus as reference tables (feed_project.sharding; a
no-op elsewhere), in a transaction of their own as the other apps' placements are."""

from django.db import migrations

from feed_project import sharding


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_oauth"),
    ]

    operations = [
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
    ]
