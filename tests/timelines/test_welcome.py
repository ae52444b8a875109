"""The signed-out landing page: sign-up, the trending tags and a preview of posts."""

from posts.services import create_post
from posts.tags import compute_trending


def test_visitors_see_posts_of_the_top_trending_tag_beside_sign_up(client, alice, bob):
    tagged = [create_post(author=person, text="Morning run #running") for person in (alice, bob)]
    create_post(author=alice, text="Untagged thoughts")
    compute_trending()

    html = client.get("/").content.decode()

    assert 'href="/accounts/signup/"' in html
    assert "#running" in html
    for post in tagged:
        assert f'data-post-id="{post.pk}"' in html
    assert "Untagged thoughts" not in html
    assert "csrfmiddlewaretoken" not in html.split('class="feed welcome-preview"')[1]


def test_with_nothing_trending_the_landing_page_still_invites_to_sign_up(client, db):
    html = client.get("/").content.decode()

    assert 'href="/accounts/signup/"' in html
    assert "<article" not in html
