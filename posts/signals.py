"""Events of posts, sent inside the transaction that makes the change.

A listener that writes rows writes them in that transaction (they commit or
roll back with the change); one that acts outside the database (a task, a
cache) does it from ``transaction.on_commit``.

post_created kwargs: post_id, author_id, in_reply_to_id, repost_of_id (a repost
is a post of the reposter), visibility. post_deleted kwargs: post_id, author_id.
post_liked kwargs: post_id, author_id (the post's), user_id (who liked it).
post_edited: see below.
"""

from django.dispatch import Signal

post_created = Signal()
post_deleted = Signal()
post_liked = Signal()
# post_edited kwargs: post_id, author_id, version (the PostEdit row keeping the text
# it replaced: one "edited" notification per version).
post_edited = Signal()
