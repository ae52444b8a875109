"""Events of the follow graph, sent from transaction.on_commit.

followed, unfollowed kwargs: follower_id, followee_id.
blocked, muted, unmuted kwargs: user_id, target_id.
"""

from django.dispatch import Signal

followed = Signal()
unfollowed = Signal()
blocked = Signal()
muted = Signal()
unmuted = Signal()
