"""Sign-up, verification, password reset and an e-mail change through a real Celery worker.

The site (this process) queues the mail tasks on a real broker; a ``celery
worker`` subprocess renders and sends them to the SMTP server running in this
process (aiosmtpd, tests/accounts/conftest.py); the test reads the mails and
follows their links.
"""

import pytest
from django.test import Client

from accounts.models import User
from tests.conftest import PASSWORD
from tests.timelines.test_worker import real_queue  # noqa: F401 (a fixture)

pytestmark = pytest.mark.worker

NEW = "a-brand-new-passphrase-42"


@pytest.mark.django_db(transaction=True)
def test_mail_goes_out_through_a_real_worker(real_queue, mailbox):  # noqa: F811
    real_queue.start_worker(EMAIL_URL=f"smtp://127.0.0.1:{mailbox.port}")
    client = Client()
    response = client.post(
        "/accounts/signup/",
        {
            "username": "dora",
            "email": "dora@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert response.status_code == 302

    verify = mailbox.link(mailbox.wait_for("dora@example.com", timeout=30))
    assert client.post(verify).status_code == 302
    assert User.objects.get(username="dora").email_verified

    client.post("/accounts/email/", {"email": "dora@new.example", "password": PASSWORD})
    change = mailbox.link(mailbox.wait_for("dora@new.example", timeout=30))
    assert client.post(change).status_code == 302
    assert User.objects.get(username="dora").email == "dora@new.example"

    Client().post("/accounts/password/reset/", {"email": "dora@new.example"})
    reset = mailbox.link(mailbox.wait_for("dora@new.example", count=2, timeout=30))
    visitor = Client()
    form = visitor.get(reset, follow=True)
    done = visitor.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302
    assert User.objects.get(username="dora").check_password(NEW)
    real_queue.wait_for_drain()
