"""Who to follow (timelines.suggestions): friends of friends weighted by contact degree
(seed 003), popular accounts for an empty graph, what is left out, the task, the pages."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape

from accounts.deletion import erase
from accounts.models import User
from posts import post_html
from posts.services import create_post, like, repost, unlike
from relations.models import Followee, FollowRequest
from relations.services import block, follow, mute
from tests.factories import UserFactory
from timelines.suggestions import contacts, ranking
from timelines.suggestions.models import Contact, Suggestion
from timelines.suggestions.tasks import refresh_suggestions


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    def run():
        return django_capture_on_commit_callbacks(execute=True)

    return run


def person(name: str, *, followers: int = 0, active_days_ago: float = 0, **fields) -> User:
    return UserFactory(
        username=name,
        display_name=name.title(),
        followers_count=followers,
        last_active_at=timezone.now() - timedelta(days=active_days_ago),
        **fields,
    )


def suggested(user: User) -> list[str]:
    rows = Suggestion.objects.filter(user_id=user.pk).order_by("rank")
    return list(rows.values_list("username", flat=True))


def follows(*pairs) -> None:
    for follower, followee in pairs:
        follow(follower=follower, followee=followee)


@pytest.fixture
def world(db, on_commit):
    """Uma follows Fay and Gil; Fay follows Xen, Gil follows Yul. Xen has more followers."""
    uma, fay, gil = person("uma"), person("fay"), person("gil")
    xen, yul = person("xen", followers=50), person("yul", followers=5)
    with on_commit():
        follows((uma, fay), (uma, gil), (fay, xen), (gil, yul))
    for user in (xen, yul):  # follow() counted one follower each: set the counts back
        User.objects.filter(pk=user.pk).update(followers_count=user.followers_count)
    return {u.username: u for u in (uma, fay, gil, xen, yul)}


def test_friends_of_friends_come_first_the_more_followed_first_when_tied(world):
    ranking.refresh(world["uma"].pk)
    assert suggested(world["uma"])[:2] == ["xen", "yul"]


def test_an_interaction_raises_a_friend_of_a_friend_above_one_without(world, on_commit):
    """Uma likes Gil's post and replies to it: Gil's friend Yul passes Fay's friend Xen."""
    uma, gil = world["uma"], world["gil"]
    with on_commit():
        post = create_post(author=gil, text="hello")
        like(user=uma, post=post)
        create_post(author=uma, text="hi back", in_reply_to=post)
    ranking.refresh(uma.pk)
    assert suggested(uma)[:2] == ["yul", "xen"]


def test_an_interaction_between_the_friend_and_the_candidate_counts_too(world, on_commit):
    fay, xen, gil, yul, uma = (world[n] for n in ("fay", "xen", "gil", "yul", "uma"))
    User.objects.filter(pk=yul.pk).update(followers_count=1)
    User.objects.filter(pk=xen.pk).update(followers_count=1)
    with on_commit():
        repost(user=gil, post=create_post(author=yul, text="a post worth sharing"))
    ranking.refresh(uma.pk)
    assert suggested(uma)[:2] == ["yul", "xen"]
    # Fay and Xen, more so: Xen comes back first.
    with on_commit():
        for n in range(3):
            create_post(author=xen, text="a", in_reply_to=create_post(author=fay, text=f"q{n}"))
    ranking.refresh(uma.pk)
    assert suggested(uma)[:2] == ["xen", "yul"]


def test_the_degree_is_raised_both_ways_once_per_event_and_halves_with_time(world, on_commit):
    uma, gil = world["uma"], world["gil"]
    post = create_post(author=gil, text="hello")
    with on_commit():
        like(user=uma, post=post)
    with on_commit():
        unlike(user=uma, post=post)
    with on_commit():
        like(user=uma, post=post)  # the same like again: notified once, raised once
    rows = {(c.user_id, c.other_id): c.degree for c in Contact.objects.all()}
    assert rows == {(uma.pk, gil.pk): 1.0, (gil.pk, uma.pk): 1.0}
    later = timezone.now() + contacts.HALF_LIFE
    assert contacts.degrees([uma.pk], now=later)[(uma.pk, gil.pk)] == pytest.approx(0.5, 0.01)
    contacts.raise_degree(uma.pk, gil.pk, 3.0, now=later)
    assert contacts.degrees([gil.pk], now=later)[(gil.pk, uma.pk)] == pytest.approx(3.5, 0.01)


def test_an_empty_graph_gets_popular_active_accounts(db):
    new = person("new")
    person("star", followers=900)
    person("known", followers=40)
    person("quiet", followers=5000, active_days_ago=90)  # not active lately
    person("gone", followers=800, is_active=False)  # suspended
    person("leaving", followers=700, deletion_due_at=timezone.now())
    ranking.refresh(new.pk)
    assert suggested(new) == ["star", "known"]


def test_left_out_self_followed_blocked_muted_either_way_requested_and_suspended(db, on_commit):
    me = person("me", followers=10_000)
    friend = person("friend")
    names = ["fine", "followed", "iblock", "blocksme", "imute", "mutesme", "locked", "suspended"]
    people = {name: person(name, followers=100 - n) for n, name in enumerate(names)}
    User.objects.filter(pk=people["locked"].pk).update(locked=True)
    people["locked"].refresh_from_db()
    with on_commit():
        follow(follower=me, followee=friend)
        for other in people.values():
            follow(follower=friend, followee=other)
        follow(follower=friend, followee=me)
        follow(follower=me, followee=people["followed"])
        block(user=me, target=people["iblock"])
        block(user=people["blocksme"], target=me)
        mute(user=me, target=people["imute"])
        mute(user=people["mutesme"], target=me)
        follow(follower=me, followee=people["locked"])  # a request, not a follow
    User.objects.filter(pk=people["suspended"].pk).update(is_active=False)
    assert FollowRequest.objects.filter(requester_id=me.pk).exists()
    # The same people are popular too: they must stay out of the fallback as well.
    User.objects.update(last_active_at=timezone.now())
    ranking.refresh(me.pk)
    assert suggested(me) == ["fine"]


def test_the_refresh_task_ranks_every_active_user_and_skips_the_rest(world, monkeypatch):
    User.objects.filter(username="gil").update(last_active_at=timezone.now() - timedelta(days=60))
    monkeypatch.setattr("timelines.suggestions.tasks.REFRESH_BATCH", 2)  # several batches

    refresh_suggestions()

    ranked = set(Suggestion.objects.values_list("user__username", flat=True))
    assert ranked == {"uma", "fay", "xen", "yul"}
    assert suggested(world["uma"])[:2] == ["xen", "yul"]


def test_a_first_visit_ranks_the_newcomers_suggestions(client, db, on_commit):
    star = person("star", followers=10)
    newcomer = UserFactory(username="newcomer")
    client.force_login(newcomer)
    with on_commit():  # the task is queued once the visit's last-active commits
        client.get("/")
    assert suggested(newcomer) == ["star"]
    assert f'action="/@{star.username}/follow/"' in client.get("/").content.decode()


def test_the_sidebar_and_the_page_offer_a_follow_form_each(client, world):
    ranking.refresh(world["uma"].pk)
    client.force_login(world["uma"])
    home = client.get("/").content.decode()
    sidebar = home[home.index('class="who-to-follow"') :]
    assert sidebar.count('class="suggestion"') == 2
    assert 'action="/@xen/follow/"' in sidebar and 'name="next" value="/"' in sidebar
    assert 'href="/suggestions/"' in home
    page = client.get("/suggestions/").content.decode()
    assert 'action="/@yul/follow/"' in page and 'value="/suggestions/"' in page
    client.logout()
    assert client.get("/suggestions/").status_code == 302  # to the log-in


def test_the_sidebar_is_rendered_once_and_each_request_gets_its_own_token(world):
    """{% kept %}: the parts are kept by their rows, the forms' inputs are the request's."""
    ranking.refresh(world["uma"].pk)
    post_html.PARTS.clear()
    for path in ("/", "/?before=" + "Z" * 16):
        reader = Client()
        reader.force_login(world["uma"])
        response = reader.get(path)
        html = response.content.decode()
        sidebar = html[html.index('class="who-to-follow"') : html.index("</aside>")]
        token = str(response.context["csrf_token"])
        assert sidebar.count(f'name="csrfmiddlewaretoken" value="{token}"') == 2
        assert sidebar.count(f'name="next" value="{escape(path)}"') == 2
        assert "<!--" not in sidebar
    assert len(post_html.PARTS._kept) == 2  # who to follow, trending: once each


def test_following_from_a_suggestion_takes_it_out_at_once(client, world):
    uma = world["uma"]
    ranking.refresh(uma.pk)
    client.force_login(uma)

    response = client.post("/@xen/follow/", {"next": "/"})

    assert response.status_code == 302 and response["Location"] == "/"
    assert Followee.objects.filter(user_id=uma.pk, followee_id=world["xen"].pk).exists()
    assert suggested(uma)[:1] == ["yul"]
    assert 'action="/@xen/follow/"' not in client.get("/").content.decode()


def test_a_locked_suggestion_asks_through_the_same_route(client, world):
    uma, xen = world["uma"], world["xen"]
    User.objects.filter(pk=xen.pk).update(locked=True)
    ranking.refresh(uma.pk)
    client.force_login(uma)
    assert "Request<span" in client.get("/suggestions/").content.decode()

    client.post("/@xen/follow/", {"next": "/suggestions/"})

    assert FollowRequest.objects.filter(user_id=xen.pk, requester_id=uma.pk).exists()
    assert "xen" not in suggested(uma)


def test_a_block_or_a_mute_takes_the_suggestion_out_at_once(world, on_commit):
    uma = world["uma"]
    ranking.refresh(uma.pk)
    with on_commit():
        block(user=world["xen"], target=uma)
        mute(user=uma, target=world["yul"])
    assert "xen" not in suggested(uma) and "yul" not in suggested(uma)


def test_home_costs_the_same_queries_with_suggestions_or_none(client, world):
    uma = world["uma"]
    client.force_login(uma)
    client.get("/")  # the first visit records last-active, builds the inbox, ranks
    counts = []
    for present in (False, True):
        if present:
            ranking.refresh(uma.pk)
        else:
            Suggestion.objects.filter(user_id=uma.pk).delete()
        with CaptureQueriesContext(connection) as queries:
            html = client.get("/").content.decode()
        assert ('action="/@xen/follow/"' in html) == present
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_erasing_an_account_takes_its_degrees_and_suggestions_everywhere(world, on_commit):
    uma, gil, xen = world["uma"], world["gil"], world["xen"]
    with on_commit():
        like(user=uma, post=create_post(author=gil, text="hello"))
    ranking.refresh(uma.pk)
    ranking.refresh(gil.pk)
    assert Contact.objects.filter(other_id=uma.pk).exists()
    assert Suggestion.objects.filter(suggested_id=xen.pk).exists()
    User.objects.filter(pk__in=[uma.pk, xen.pk]).update(deletion_due_at=timezone.now())

    with on_commit():
        erase(user_id=uma.pk)
    with on_commit():
        erase(user_id=xen.pk)

    assert not Contact.objects.filter(user_id=uma.pk).exists()
    assert not Contact.objects.filter(other_id=uma.pk).exists()
    assert not Suggestion.objects.filter(user_id=uma.pk).exists()
    assert not Suggestion.objects.filter(suggested_id=xen.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_interactions_of_one_pair_both_ways_at_once_never_deadlock():
    """A reply from a to b and a like from b to a raise the same two rows: each task
    locks them lower user first, so two at once queue rather than deadlock."""
    import threading

    from django.db import close_old_connections

    a, b = UserFactory(), UserFactory()
    contacts.raise_degree(a.pk, b.pk, 1.0)  # both rows exist: each run locks, then updates
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def interact(one: int, other: int) -> None:
        try:
            start.wait()
            for _ in range(40):
                contacts.raise_degree(one, other, 1.0)
        except BaseException as exc:  # a deadlock is psycopg's DeadlockDetected
            failures.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [
        threading.Thread(target=interact, args=pair) for pair in ((a.pk, b.pk), (b.pk, a.pk))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert Contact.objects.filter(user_id__in=[a.pk, b.pk]).count() == 2
