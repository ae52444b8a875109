"""``{{ post.text|linkify }}``: the text escaped, then its @mentions made profile links."""

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from posts.mentions import MENTION

register = template.Library()


@register.filter
def linkify(text: str) -> SafeString:
    # Escaped first, whatever it is: the pattern then only ever sees escaped
    # text, and "@" followed by letters, digits and "_" has nothing to escape.
    escaped = escape(text)

    def link(match) -> str:
        url = reverse("posts:profile", args=[match.group(1)])
        return f'<a class="mention" href="{url}">@{match.group(1)}</a>'

    return mark_safe(MENTION.sub(link, escaped))
