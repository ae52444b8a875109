"""``{% compose_fields form %}``: the compose box's fields (``posts/_compose_fields.html``).

A blank box, as every home page shows, is the same HTML every time, and
Django's form rendering is costly, so it is rendered once per process. A
bound form (errors, the text sent back) or one with initial values (a reply)
is rendered each time. With ``DEBUG`` nothing is kept, so template edits show
at once.
"""

from functools import cache

from django import forms, template
from django.conf import settings
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_TEMPLATE = "posts/_compose_fields.html"


def _render(form: forms.Form) -> SafeString:
    return mark_safe(render_to_string(_TEMPLATE, {"form": form}))


@cache
def _blank(form_class: type[forms.Form]) -> SafeString:
    return _render(form_class())


@register.simple_tag
def compose_fields(form: forms.Form) -> SafeString:
    if form.is_bound or form.initial or settings.DEBUG:
        return _render(form)
    return _blank(type(form))
