"""Username and e-mail claims (accounts.unique_names), distributed by their own key when
the citus extension is installed, then filled from the users there are."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from feed_project import sharding

BATCH = 5000  # users read per round trip; the claims are written in batches as big


def fill_claims(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    UsernameClaim = apps.get_model("accounts", "UsernameClaim")
    EmailClaim = apps.get_model("accounts", "EmailClaim")
    users = User.objects.order_by("pk").values_list("pk", "username", "email")
    for start in range(0, users.count(), BATCH):
        rows = list(users[start : start + BATCH])
        # Older accounts first: where two rows share a name (possible only on Citus,
        # without the constraint) the older keeps it.
        UsernameClaim.objects.bulk_create(
            [UsernameClaim(name=name.lower(), user_id=pk) for pk, name, _ in rows],
            ignore_conflicts=True,
        )
        EmailClaim.objects.bulk_create(
            [EmailClaim(address=email.lower(), user_id=pk) for pk, _, email in rows if email],
            ignore_conflicts=True,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_account_deletion'),
        # After the shard layout: distributing again must find posts' keys set.
        ('posts', '0006_shard_layout'),
    ]

    operations = [
        migrations.CreateModel(
            name='EmailClaim',
            fields=[
                ('address', models.CharField(max_length=508, primary_key=True, serialize=False)),
                ('user', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name='UsernameClaim',
            fields=[
                ('name', models.CharField(max_length=30, primary_key=True, serialize=False)),
                ('user', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        # Distributed first: Citus refuses to distribute a table in a transaction
        # that already read a distributed one in parallel (fill_claims reads users).
        migrations.RunPython(sharding.distribute, migrations.RunPython.noop),
        migrations.RunPython(fill_claims, migrations.RunPython.noop),
    ]
