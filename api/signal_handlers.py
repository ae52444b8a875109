"""What the API keeps of a person goes when the site ends their sessions; and each
delivery of a new post is published to the live streams (``api.streaming``).

Asking for deletion ends every session (``accounts.deletion``), so it ends
every token too; an erasure deletes the tokens, codes and the apps the person
owns. The keys are not database constraints (``api.models``), so nothing
cascades by itself.
"""

from typing import Any

from django.dispatch import receiver
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from accounts.signals import account_deactivated, account_erasing
from api import streaming
from timelines.home import delivered


def end_tokens(user_id: int) -> None:
    """Refresh tokens first: deleting an access token leaves its refresh token unusable."""
    get_refresh_token_model().objects.filter(user_id=user_id).delete()
    get_access_token_model().objects.filter(user_id=user_id).delete()
    get_grant_model().objects.filter(user_id=user_id).delete()


@receiver(account_deactivated, dispatch_uid="api.end_tokens")
def on_account_deactivated(sender: Any, user_id: int, **kwargs: Any) -> None:
    end_tokens(user_id)


@receiver(account_erasing, dispatch_uid="api.erase")
def on_account_erasing(sender: Any, user_id: int, **kwargs: Any) -> None:
    end_tokens(user_id)
    get_id_token_model().objects.filter(user_id=user_id).delete()
    get_application_model().objects.filter(user_id=user_id).delete()


@receiver(delivered, dispatch_uid="api.streaming.publish")
def on_delivered(sender: Any, reader_ids: list[int], timeline_key: str, **kwargs: Any) -> None:
    streaming.publish(reader_ids, timeline_key)
