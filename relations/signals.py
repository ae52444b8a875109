"""Events of the follow graph, sent inside the transaction that makes the change.

A listener that writes rows writes them in that transaction (they commit or
roll back with the change); one that acts outside the database (a task, a
cache) does it from ``transaction.on_commit``.

followed, unfollowed kwargs: follower_id, followee_id.
follow_requested, follow_accepted kwargs: user_id (the locked account), requester_id.
blocked, muted, unmuted kwargs: user_id, target_id.
"""

from django.dispatch import Signal

followed = Signal()
unfollowed = Signal()
blocked = Signal()
muted = Signal()
unmuted = Signal()
follow_requested = Signal()
follow_accepted = Signal()
