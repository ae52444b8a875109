"""An index of each liker's likes by time, for the API's favourites, built without
locking the table as the timeline key's index was (0015)."""

import importlib

from django.db import migrations, models

AddIndexWithoutLocking = importlib.import_module(
    "posts.migrations.0015_post_timeline_idx"
).AddIndexWithoutLocking


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("posts", "0016_media_uploads"),
    ]

    operations = [
        AddIndexWithoutLocking(
            model_name="like",
            index=models.Index(fields=["user", "created_at", "post"], name="like_time_idx"),
        ),
    ]
