"""``manage.py createmoderator``: a moderator who can open the report queue, no e-mail asked."""

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.models import User


@pytest.mark.django_db
def test_createmoderator_makes_a_staff_account_that_opens_the_report_queue(monkeypatch):
    monkeypatch.setenv("MODERATOR_PASSWORD", "a-moderator-passphrase-42")
    call_command("createmoderator", "mod", "--noinput")

    mod = User.objects.get(username="mod")
    assert mod.is_staff and not mod.is_superuser
    assert mod.has_perm("posts.moderate")
    client = Client()
    assert client.login(username="mod", password="a-moderator-passphrase-42")
    assert client.get("/admin/posts/report/").status_code == 200


@pytest.mark.django_db
def test_createmoderator_promotes_an_existing_account_and_keeps_its_password(alice):
    call_command("createmoderator", "ALICE", "--noinput")

    alice.refresh_from_db()
    assert alice.is_staff and alice.has_perm("posts.moderate")
    assert User.objects.filter(username__iexact="alice").count() == 1
