"""Events of posts, sent from transaction.on_commit.

post_created kwargs: post_id, author_id. post_deleted kwargs: post_id, author_id.
"""

from django.dispatch import Signal

post_created = Signal()
post_deleted = Signal()
