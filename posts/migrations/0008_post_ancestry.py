"""Post.ancestry: a reply keeps the ids up its thread (posts.selectors.ancestors_of)."""

from django.db import migrations, models

MAX_ANCESTORS = 20


def fill_ancestry(apps, schema_editor):
    """Every existing reply's ancestry, parents before their replies (time order)."""
    Post = apps.get_model("posts", "Post")
    ancestry: dict[str, str] = {}
    replies = (
        Post.objects.filter(in_reply_to__isnull=False)
        .order_by("timeline_key")
        .values_list("pk", "author_id", "in_reply_to_id")
        .iterator(chunk_size=10_000)
    )
    for post_id, author_id, parent_id in replies:
        chain = [*ancestry.get(parent_id, "").split(), parent_id][-MAX_ANCESTORS:]
        ancestry[post_id] = " ".join(chain)
        Post.objects.filter(author_id=author_id, pk=post_id).update(ancestry=ancestry[post_id])


class Migration(migrations.Migration):
    dependencies = [
        ("posts", "0007_account_deletion"),
    ]

    operations = [
        migrations.AddField(
            model_name="post",
            name="ancestry",
            field=models.TextField(blank=True, db_default="", default="", editable=False),
        ),
        migrations.RunPython(fill_ancestry, migrations.RunPython.noop, elidable=True),
    ]
