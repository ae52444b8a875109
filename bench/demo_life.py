"""The demo world, lived in: likes, replies, reposts and follows made through the
services after the bulk world is written, so counters, notifications and
feeds come out as they do for real people.

A fixed amount of activity, whatever the world's size, so ``--users 100000``
costs seconds more, not minutes: the newest posts of the accounts ``demo``
follows get likes, replies and reposts from anyone; ``demo`` gets followers,
likes, replies, reposts and mentions (notifications waiting at first log-in);
``mod`` is a moderator with a few reports in the queue; ``demo``'s suggestions
of whom to follow are ranked.
"""

import random
from dataclasses import dataclass

from accounts.models import User
from accounts.moderators import make_moderator
from bench import phrases
from posts import services as posts
from posts import tags
from posts.models import Post
from posts.moderation import services as moderation
from relations import services as relations
from relations.models import Followee
from timelines.suggestions import ranking

MOD_USERNAME = "mod"
MOD_PASSWORD = "mod-password-123"
FEED_POSTS = 60  # the newest posts in demo's feed that get reactions
MAX_LIKES_PER_POST = 8
REPLIES = 20
REPOSTS = 12
DEMO_NEW_FOLLOWERS = 5
DEMO_LIKERS = 6
DEMO_REPLIES = 6
DEMO_REPOSTS = 3
DEMO_MENTIONS = 2
DEMO_LIKES = 10
# Tagged posts, so the trending list and the signed-out landing page have something.
TAGS = ("周末", "coffee", "photography", "读书", "running")
TAGGED_POSTS = 30
REPORTS = ("spam: Same link posted ten times", "abuse: Insults in the replies", "other")


@dataclass(frozen=True)
class Life:
    likes: int = 0
    replies: int = 0
    reposts: int = 0
    follows: int = 0
    reports: int = 0
    suggestions: int = 0


def bring_to_life(*, rng: random.Random, demo_id: int, user_ids: list[int]) -> Life:
    """Reactions between the demo users, through the services; a moderator and reports."""
    demo = User.objects.get(pk=demo_id)
    followees = list(Followee.objects.filter(user_id=demo_id).values_list("followee_id", flat=True))
    feed = list(
        Post.objects.filter(
            author_id__in=followees, repost_of__isnull=True, deleted_at__isnull=True
        )
        .select_related("author")
        .order_by("-timeline_key")[:FEED_POSTS]
    )
    own = list(Post.objects.filter(author_id=demo_id).order_by("-timeline_key")[:5])
    others = [pk for pk in user_ids if pk != demo_id]
    people = {user.pk: user for user in User.objects.filter(pk__in=_sample(rng, others, 400))}
    crowd = list(people.values())
    if not crowd:
        return Life()
    likes = replies = reposts = follows = 0

    for post in feed:  # a long tail: most posts get a little, a few get a lot
        count = min(len(crowd), MAX_LIKES_PER_POST, int(rng.paretovariate(1.2)) - 1)
        for person in rng.sample(crowd, count):
            if person.pk != post.author_id:
                likes += posts.like(user=person, post=post)
    for post in rng.sample(feed, min(len(feed), REPLIES)):
        posts.create_post(author=rng.choice(crowd), text=phrases.reply_text(rng), in_reply_to=post)
        replies += 1
    for post in rng.sample(feed, min(len(feed), REPOSTS)):
        person = rng.choice(crowd)
        if person.pk != post.author_id:
            posts.repost(user=person, post=post)
            reposts += 1

    # What waits for demo: notifications of each kind.
    for person in rng.sample(crowd, min(len(crowd), DEMO_NEW_FOLLOWERS)):
        follows += relations.follow(follower=person, followee=demo)
    for post in own:
        for person in rng.sample(crowd, min(len(crowd), DEMO_LIKERS)):
            likes += posts.like(user=person, post=post)
    for post in own[:DEMO_REPLIES]:
        posts.create_post(author=rng.choice(crowd), text=phrases.reply_text(rng), in_reply_to=post)
        replies += 1
    for post in own[:DEMO_REPOSTS]:
        posts.repost(user=rng.choice(crowd), post=post)
        reposts += 1
    for _ in range(DEMO_MENTIONS):
        posts.create_post(author=rng.choice(crowd), text=f"@demo {phrases.post_text(rng)}")
    for post in feed[:DEMO_LIKES]:
        likes += posts.like(user=demo, post=post)

    for _ in range(TAGGED_POSTS):
        text = f"{phrases.post_text(rng)} #{rng.choice(TAGS)}"
        posts.create_post(author=rng.choice(crowd), text=text)
    tags.compute_trending()

    make_moderator(username=MOD_USERNAME, password=MOD_PASSWORD)
    reports = 0
    for reason, post in zip(REPORTS, rng.sample(feed, min(len(feed), len(REPORTS))), strict=False):
        moderation.report(reporter=rng.choice(crowd), user=post.author, post=post, reason=reason)
        reports += 1
    # Who to follow, ranked now for demo rather than at beat's next refresh: the
    # reactions above have raised the contact degrees it weighs.
    suggestions = len(ranking.refresh(demo_id))
    return Life(
        likes=likes,
        replies=replies,
        reposts=reposts,
        follows=follows,
        reports=reports,
        suggestions=suggestions,
    )


def _sample(rng: random.Random, items: list[int], k: int) -> list[int]:
    return rng.sample(items, min(k, len(items)))
