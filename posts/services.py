from functools import partial

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from posts import ids
from posts.models import Post
from posts.signals import post_created, post_deleted


def create_post(*, author: User, text: str) -> Post:
    """Publish a post; followers get it once the transaction commits."""
    with transaction.atomic():
        # The counter UPDATE also locks the author's row, so two posts of one
        # author take their ids one after the other (posts.ids.next_post_id).
        User.objects.filter(pk=author.pk).update(posts_count=F("posts_count") + 1)
        last = Post.objects.by_author(author.pk).order_by("-pk").values_list("pk", flat=True)
        post_id = ids.next_post_id(
            author_id=author.pk, now=timezone.now(), last_post_id=last.first()
        )
        post = Post.objects.create(
            id=post_id,
            timeline_key=ids.post_id_to_timeline_key(post_id),
            author=author,
            text=text,
        )
        transaction.on_commit(
            partial(post_created.send, sender=Post, post_id=post.pk, author_id=author.pk)
        )
    return post


def delete_post(*, post: Post) -> bool:
    """Delete a post: its text is gone at once, feeds skip it from now on."""
    with transaction.atomic():
        deleted = Post.objects.filter(pk=post.pk, deleted_at__isnull=True).update(
            deleted_at=timezone.now(), text=""
        )
        if not deleted:
            return False
        User.objects.filter(pk=post.author_id).update(posts_count=F("posts_count") - 1)
        transaction.on_commit(
            partial(post_deleted.send, sender=Post, post_id=post.pk, author_id=post.author_id)
        )
    return True
