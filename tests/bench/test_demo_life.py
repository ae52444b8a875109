"""The demo world looks lived in: reactions, Chinese posts that Chinese search finds,
notifications waiting for demo, and a moderator with reports to work."""

from collections import Counter
from io import StringIO

from django.core.management import call_command
from django.test import Client

from bench import demo_life
from posts.models import Like, Post, Report
from relations.models import Followee
from timelines.suggestions.models import Suggestion


# Transactional: the world is committed before the pages read it, as a seeded
# site is. (Read in the seeding transaction, Citus refuses the moderator's
# permission check: rows its parallel writes touched over several connections.)
def test_the_demo_world_has_reactions_chinese_posts_notifications_and_a_moderator(
    transactional_db, django_capture_on_commit_callbacks
):
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo", "--users", "80", "--posts-per-user", "6", stdout=out)
    output = out.getvalue()
    assert "Moderator: mod / mod-password-123" in output

    likes = Counter(Like.objects.values_list("post_id", flat=True))
    assert sum(likes.values()) > 50
    for post_id, count in Post.objects.filter(like_count__gt=0).values_list("id", "like_count"):
        assert likes[post_id] == count  # counters kept by the services
    assert Post.objects.filter(in_reply_to__isnull=False).count() >= demo_life.REPLIES // 2
    assert Post.objects.filter(repost_of__isnull=False).exists()
    assert Report.objects.count() == len(demo_life.REPORTS)

    demo = Client()
    assert demo.login(username="demo", password="demo-password-123")
    notifications = demo.get("/notifications/").content.decode()
    for kind in ("liked", "followed", "replied", "reposted", "mentioned"):
        assert kind in notifications, kind
    chinese = Post.objects.filter(text__regex="[\u4e00-\u9fff]").values_list("text", flat=True)
    assert len(chinese) > 20
    found = demo.get("/search/", {"q": "咖啡"}).content.decode()
    assert found.count("<article") >= 1

    # Who to follow: ranked for demo, none of them followed already (in a world of 80,
    # demo follows most people: what is left is few).
    suggested = set(
        Suggestion.objects.filter(user__username="demo").values_list("suggested_id", flat=True)
    )
    followed = set(
        Followee.objects.filter(user__username="demo").values_list("followee_id", flat=True)
    )
    assert suggested and not followed & suggested
    home = demo.get("/").content.decode()
    sidebar = home[home.index('class="who-to-follow"') :]
    assert sidebar.count('class="suggestion"') == min(3, len(suggested))

    landing = Client().get("/").content.decode()  # signed out: a preview of posts
    assert landing.count("<article") >= 5

    mod = Client()
    assert mod.login(username="mod", password="mod-password-123")
    queue = mod.get("/admin/posts/report/").content.decode()
    assert "spam: Same link posted ten times" in queue
