"""Each kept inbox's floor: where what it vouches for starts.

An inbox written before the floor vouched for what lay above its oldest entry,
so that entry is its floor. The readers are walked in batches by id, each
batch's oldest entries read in one grouped query on the shard key, so that it
runs as it is on a Citus cluster.
"""

from django.db import migrations
from django.db.models import Min

import posts.fields
from posts import ids

BATCH = 1000


def floors_at_oldest_entries(apps, schema_editor):
    InboxState = apps.get_model("timelines", "InboxState")
    InboxEntry = apps.get_model("timelines", "InboxEntry")
    after = 0
    while True:
        readers = list(
            InboxState.objects.filter(reader_id__gt=after)
            .order_by("reader_id")
            .values_list("reader_id", flat=True)[:BATCH]
        )
        if not readers:
            return
        oldest = (
            InboxEntry.objects.filter(reader_id__in=readers)
            .values("reader_id")
            .annotate(oldest=Min("timeline_key"))
            .order_by()
        )
        for row in oldest:
            InboxState.objects.filter(reader_id=row["reader_id"]).update(floor=row["oldest"])
        after = readers[-1]


class Migration(migrations.Migration):
    dependencies = [
        ("timelines", "0013_distribute_suggestions"),
    ]

    operations = [
        migrations.AddField(
            model_name="inboxstate",
            name="floor",
            field=posts.fields.KeyField(default=ids.LOWEST_KEY, db_default=ids.LOWEST_KEY),
        ),
        migrations.RunPython(floors_at_oldest_entries, migrations.RunPython.noop),
    ]
