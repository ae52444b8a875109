"""A post's text as HTML: escaped, its URLs, @mentions and #tags made links.

URLs are found by linkify-it-py (the Python port of markdown-it's linkifier,
maintained, Unicode-aware), not by a pattern of our own; only ``http`` and
``https`` links, written with their scheme, are made (a ``javascript:`` or ``data:`` URL is never
found, and one that were would be refused here). A link shows its URL
shortened the way Mastodon does: without the scheme and ``www.``, the first
30 characters, then "…"; the full URL is its ``href`` and ``title``. Links
carry ``rel="nofollow noopener ugc"`` (user-generated, no referrer power).

@mentions are links only for the people who existed when the text was saved
(``Post.mentions``), so a page needs no lookup. Tags link to ``/tags/<tag>/``.
Everything is built from escaped pieces, so no HTML of the author's survives:
no sanitizer is needed on top.
"""

import re
from collections.abc import Callable, Collection

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from linkify_it import LinkifyIt

from posts.mentions import MENTION
from posts.tags import HASHTAG, normalize_tag

# Links need their scheme, as on Mastodon: "example.com" alone stays text (a file
# name, a sentence's "end.it" typed without a space), and a text without "://"
# needs no scan at all, which saves a page of 20 posts twenty scans.
_LINKIFY = LinkifyIt(options={"fuzzy_link": False, "fuzzy_email": False})
_SCHEMES = ("http://", "https://")
SHOWN_URL_LENGTH = 30
REL = "nofollow noopener ugc"
# linkify-it takes CJK characters and full-width punctuation for part of a URL
# ("https://weibo.com/1。好"); Chinese text runs on without a space, so a URL stops there.
_CJK = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
# Group 1: a mention's username; group 2: a tag.
_TOKENS = re.compile(f"(?:{MENTION.pattern})|(?:{HASHTAG.pattern})")


def url_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, url) of each http(s) link in ``text``, in order."""
    if "://" not in text:
        return []
    spans = []
    for match in _LINKIFY.match(text) or []:
        url, end = match.url, match.last_index
        cut = _CJK.search(text, match.index, end)
        if cut is not None:
            url = url[: len(url) - (end - cut.start())]
            end = cut.start()
        if url.lower().startswith(_SCHEMES) and end > match.index:
            spans.append((match.index, end, url))
    return spans


def shorten(url: str) -> str:
    """``https://www.example.com/a/long/path`` as shown: ``example.com/a/long/path…``."""
    shown = re.sub(r"^https?://(www\.)?", "", url, flags=re.IGNORECASE)
    return shown if len(shown) <= SHOWN_URL_LENGTH else shown[:SHOWN_URL_LENGTH] + "…"


def _words_html(
    text: str,
    mentioned: Collection[str] | None,
    profile: Callable[[str], str],
    tag: Callable[[str], str],
) -> str:
    """Escaped text with mentions and tags as links (no URLs in it)."""
    out, at = [], 0
    for match in _TOKENS.finditer(text):
        username, name = match.group(1), match.group(2)
        if username is not None:
            if mentioned is not None and username.lower() not in mentioned:
                continue
            link = f'<a class="mention" href="{profile(username)}">@{username}</a>'
        else:
            normalized = normalize_tag(name)
            if normalized is None:
                continue
            link = (
                f'<a class="hashtag" href="{escape(tag(normalized))}">{escape(match.group(0))}</a>'
            )
        out.append(escape(text[at : match.start()]))
        out.append(link)
        at = match.end()
    out.append(escape(text[at:]))
    return "".join(out)


def text_html(
    text: str,
    *,
    mentioned: Collection[str] | None,
    profile: Callable[[str], str],
    tag: Callable[[str], str],
) -> SafeString:
    """``text`` escaped, with links; ``mentioned`` None links every @mention."""
    out, at = [], 0
    for start, end, url in url_spans(text):
        out.append(_words_html(text[at:start], mentioned, profile, tag))
        out.append(
            f'<a class="link" href="{escape(url)}" rel="{REL}" title="{escape(url)}">'
            f"{escape(shorten(url))}</a>"
        )
        at = end
    out.append(_words_html(text[at:], mentioned, profile, tag))
    return mark_safe("".join(out))
