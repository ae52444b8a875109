"""Events accounts announces; other apps listen (timelines decides what they mean)."""

from django.dispatch import Signal

# Sent when last-active is refreshed: kwargs user_id, previous (datetime or None).
last_active_refreshed = Signal()

# Sent inside the transaction that unlocks an account: kwargs user_id
# (relations accepts every pending follow request).
account_unlocked = Signal()

# Account deletion (accounts.deletion). Each app above accounts erases what it
# owns in its own room; accounts may not import them, so it announces:
# - account_deactivated(user_id): deletion asked for, the grace period begins:
#   hide what others see of the account (posts hides its posts).
# - account_reactivated(user_id): the owner logged in during the grace: show it again.
# - account_erasing(user_id, username): the grace is over; sent inside the erasing
#   transaction: each receiver deletes every row of its app that names the user
#   and fixes the counters it touches (Redis work on commit).
account_deactivated = Signal()
account_reactivated = Signal()
account_erasing = Signal()
