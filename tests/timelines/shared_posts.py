"""What a held post holds, to check that no page changes it (timelines.home._held_posts: a feed's
posts are one object for every reader)."""

from posts.models import Post


def state(post: Post) -> list[dict]:
    """All a post and its author hold: their attributes and their related objects."""
    return [
        dict(vars(row)) | {"related": dict(row._state.fields_cache)} for row in (post, post.author)
    ]
