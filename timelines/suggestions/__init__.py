"""Who to follow: friends of friends weighted by contact degree, popular accounts after.

- ``contacts``: seed 003's contact degree (联系度), how much two people have had
  to do with each other lately. Replies, likes, reposts and quotes between
  them raise it (written by the notification task of each, off the request
  path); it halves every ``HALF_LIFE``. It is never shown to anyone: it only
  orders suggestions, so nobody can see it to game it, and a late or lost
  raise costs little (seed 003).
- ``ranking``: a user's suggestions, computed by a task (``timelines.suggest_for``,
  and beat's ``timelines.refresh_suggestions`` over every active user) into
  ``Suggestion`` rows; the sidebar and ``/suggestions/`` read only those rows
  (one query, on the user's shard).
- ``signals``: a follow, a follow request, a block or a mute drops the row at
  once, in the transaction that makes the change.
"""
