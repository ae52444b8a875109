"""URLs, @mentions and #tags in a post's text become links (posts/links.py)."""

import re

import pytest

from posts import links, post_html
from posts.services import create_post


def html_of(text: str, mentioned=()) -> str:
    url = post_html.urls()
    return links.text_html(text, mentioned=set(mentioned), profile=url.profile, tag=url.tag)


def test_a_url_becomes_a_link_with_nofollow_noopener_ugc_shown_shortened():
    html = html_of("read https://www.example.com/a/very/long/path/that/goes/on?x=1 now")

    link = re.search(
        r'<a class="link" href="([^"]+)" rel="([^"]+)" title="[^"]+">([^<]+)</a>', html
    )
    assert link is not None, html
    assert link.group(1) == "https://www.example.com/a/very/long/path/that/goes/on?x=1"
    assert link.group(2) == "nofollow noopener ugc"
    assert link.group(3) == "example.com/a/very/long/path/t…"
    assert "target=" not in html
    assert html.startswith("read ") and html.endswith(" now")


def test_a_short_url_is_shown_whole_without_its_scheme():
    assert ">example.org/x</a>" in html_of("see http://example.org/x.")


@pytest.mark.parametrize(
    "text",
    [
        "javascript:alert(1)",
        "click javascript:alert(document.cookie)//https",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:msgbox(1)",
    ],
)
def test_a_javascript_or_data_url_never_becomes_a_link(text):
    html = html_of(text)

    assert "<a " not in html
    assert "href" not in html


def test_text_around_links_is_escaped_and_a_url_cannot_break_out_of_its_attribute():
    html = html_of('<script>x</script> https://example.com/"onmouseover="alert(1) &amp;')

    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert 'onmouseover="' not in html
    assert "&amp;amp;" in html


def test_a_url_stops_where_chinese_text_goes_on():
    html = html_of("看 https://weibo.com/123。好的")

    assert 'href="https://weibo.com/123"' in html
    assert "</a>。好的" in html


def test_only_mentions_of_people_who_exist_are_links():
    html = html_of("hi @alice and @nobody", mentioned={"alice"})

    assert '<a class="mention" href="/@alice/">@alice</a>' in html
    assert "@nobody" in html and 'href="/@nobody/"' not in html


def test_hashtags_link_to_their_lower_cased_url_encoded_page():
    html = html_of("#Django and #话题#今天 and #café")

    assert '<a class="hashtag" href="/tags/django/">#Django</a>' in html
    assert '<a class="hashtag" href="/tags/%E8%AF%9D%E9%A2%98/">#话题#</a>今天' in html
    assert '<a class="hashtag" href="/tags/caf%C3%A9/">#café</a>' in html


def test_a_tag_inside_a_url_stays_part_of_the_url():
    html = html_of("https://example.com/page#section")

    assert html.count("<a ") == 1
    assert 'href="https://example.com/page#section"' in html


@pytest.mark.embedded
def test_a_post_page_links_urls_and_existing_mentions_only(client, alice, carol):
    post = create_post(author=alice, text="@carol @ghost see https://example.com #news")

    html = client.get(f"/posts/{post.pk}/").content.decode()

    assert 'href="/@carol/">@carol</a>' in html
    assert 'href="/@ghost/"' not in html
    assert 'href="https://example.com" rel="nofollow noopener ugc"' in html
    assert 'href="/tags/news/"' in html


def test_a_domain_without_its_scheme_stays_text():
    assert "<a " not in html_of("see example.com or www.example.com, and main.py")
