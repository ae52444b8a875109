"""Events of the follow graph, sent from transaction.on_commit.

kwargs: follower_id, followee_id.
"""

from django.dispatch import Signal

followed = Signal()
unfollowed = Signal()
