"""relations' tasks: applying an import of follows (relations.follow_import). Ids only (JSON)."""

from celery import shared_task


@shared_task(name="relations.apply_follow_import", acks_late=True)
def apply_follow_import(user_id: int, import_id: int) -> None:
    """Follow the accounts of a saved import; run again after a crash, it skips those done."""
    from relations import follow_import

    follow_import.run(user_id=user_id, import_id=import_id)
