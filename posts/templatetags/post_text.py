"""``{{ post.text|linkify }}``: the text escaped, then its @mentions made profile links."""

from django import template
from django.utils.safestring import SafeString

from posts import post_html

register = template.Library()


@register.filter
def linkify(text: str) -> SafeString:
    return post_html.linkify(text, post_html.urls())
