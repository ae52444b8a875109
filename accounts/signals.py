"""Events accounts announces; other apps listen (timelines decides what they mean)."""

from django.dispatch import Signal

# Sent when last-active is refreshed: kwargs user_id, previous (datetime or None).
last_active_refreshed = Signal()
