"""accounts' tasks: mail, erasure, data exports. Thin adapters that take ids and strings,
load what they need, and call a service.

Mail never goes out inside a request: the view's service queues a task on
commit (``enqueue_on_commit``), and a worker renders and sends. A mail server
that refuses or times out is retried with backoff; a retried task may send a
mail twice, which is better than not at all.
"""

import smtplib
from typing import Any

from celery import shared_task
from django.db import DatabaseError

from accounts import mail
from feed_project import queueing

MAIL_ERRORS = (smtplib.SMTPException, OSError)
RETRY = {"autoretry_for": MAIL_ERRORS, "retry_backoff": True, "max_retries": 5}
# Deleting files: a storage that fails now (object storage down) is tried again;
# the hourly sweep finds what is left anyway.
FILE_RETRY = {"autoretry_for": (OSError, DatabaseError), "retry_backoff": True, "max_retries": 5}


def enqueue_on_commit(task: Any, *args: Any) -> None:
    """Queue ``task`` once the current transaction commits; never fail the request.

    A broker outage must not lose the mail (or the erasure, the export): the
    task runs in process instead (``queueing.RUN_HERE``), after the commit.
    """
    queueing.enqueue_on_commit(task, *args, if_refused=queueing.RUN_HERE)


@shared_task(name="accounts.send_verification_mail", **RETRY)
def send_verification_mail(user_id: int, address: str, base_url: str) -> None:
    mail.send_verification(user_id=user_id, address=address, base_url=base_url)


@shared_task(name="accounts.send_address_in_use_mail", **RETRY)
def send_address_in_use_mail(address: str, base_url: str) -> None:
    mail.send_address_in_use(address=address, base_url=base_url)


@shared_task(name="accounts.send_password_reset_mail", **RETRY)
def send_password_reset_mail(user_id: int, base_url: str) -> None:
    mail.send_password_reset(user_id=user_id, base_url=base_url)


@shared_task(name="accounts.send_approved_mail", **RETRY)
def send_approved_mail(user_id: int, base_url: str) -> None:
    mail.send_approved(user_id=user_id, base_url=base_url)


@shared_task(name="accounts.erase_account", acks_late=True)
def erase_account(user_id: int) -> None:
    from accounts import deletion

    deletion.erase(user_id=user_id)


@shared_task(name="accounts.erase_due_accounts")
def erase_due_accounts() -> int:
    """Celery beat: queue the erasure of every account whose grace is over."""
    from accounts import deletion

    due = deletion.due_ids()
    for user_id in due:
        queueing.enqueue(erase_account, user_id, if_refused=queueing.RUN_HERE)
    return len(due)


@shared_task(name="accounts.build_export", acks_late=True)
def build_export(user_id: int, export_id: int) -> None:
    """Prepare a data export (accounts.exports); a failure shows on the page, not retried."""
    from accounts import exports

    try:
        exports.build(user_id=user_id, export_id=export_id)
    except Exception:
        exports.fail(user_id=user_id, export_id=export_id)
        raise


@shared_task(name="accounts.delete_exports_of", acks_late=True, **FILE_RETRY)
def delete_exports_of(user_id: int) -> int:
    """Delete a user's expired exports (files, then rows): retired by a new export or erasure."""
    from accounts import exports

    return exports.delete_expired_of(user_id=user_id)


@shared_task(name="accounts.delete_expired_exports")
def delete_expired_exports() -> int:
    """Celery beat: queue the deletion of every expired export, per owner."""
    from accounts import exports

    owners = exports.expired_owners()
    for user_id in owners:
        queueing.enqueue(delete_exports_of, user_id, if_refused=queueing.RUN_HERE)
    return len(owners)
