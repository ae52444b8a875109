"""The API's periodic work: spent authorization codes and ended tokens are purged.

A code lives ten minutes and is deleted when exchanged, but one never exchanged
(an app that gave up, a person who never came back from the consent page)
stays; the toolkit's ``clear_expired`` (what ``manage.py cleartokens`` runs)
deletes those, expired access tokens and the refresh tokens left without one.
"""

from celery import shared_task


@shared_task(name="api.clear_expired_tokens")
def clear_expired_tokens() -> None:
    """Celery beat: django-oauth-toolkit's purge of what can no longer be used."""
    from oauth2_provider.models import clear_expired

    clear_expired()
