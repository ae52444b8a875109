"""``{{ person|avatar_url }}``: a person's picture (accounts.avatars)."""

from django import template

from accounts import avatars
from accounts.models import User

register = template.Library()


@register.filter
def avatar_url(user: User) -> str:
    return avatars.avatar_url(user)
