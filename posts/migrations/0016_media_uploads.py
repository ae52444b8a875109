"""Images uploaded ahead of their post (posts.uploads): a media row with no post or position
until a post names it, and the index of the sweep of those never named."""


import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('posts', '0015_post_timeline_idx'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='postmedia',
            name='position',
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='postmedia',
            name='post',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='media', to='posts.post'),
        ),
        migrations.AddIndex(
            model_name='postmedia',
            index=models.Index(condition=models.Q(('discarded_at__isnull', True), ('post__isnull', True)), fields=['created_at'], name='post_media_unattached_idx'),
        ),
    ]
