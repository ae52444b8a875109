"""``{% post_article post reposted_by %}``: a post in a list (posts.post_html, Jinja2);
``{% kept "template" name=rows %}``: a part of a page rendered once for the same rows."""

from collections.abc import Sequence

from django import template
from django.db.models import Model
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe

from accounts.models import User
from posts import post_html
from posts.models import Post
from posts.selectors import reply_names

register = template.Library()

_VIEWER = "posts.post_html.viewer"  # where a render keeps the page's Viewer


def _viewer(context: template.Context) -> post_html.Viewer:
    """The page's viewer from the context (user, liked_ids, reposted_ids, csrf_token, request)."""
    found = context.render_context.get(_VIEWER)
    if found is None:
        user = context.get("user")
        request = context.get("request")
        if user is None or not user.is_authenticated:
            found = post_html.Viewer(user_id=None)
        else:
            found = post_html.viewer(
                user_id=user.pk,
                liked_ids=context.get("liked_ids") or (),
                reposted_ids=context.get("reposted_ids") or (),
                csrf_token=str(context.get("csrf_token", "")),
                # A fragment's forms come back to the page that asked for it.
                next_path=context.get("next_path")
                or (request.get_full_path() if request is not None else ""),
            )
        context.render_context[_VIEWER] = found
    return found


@register.simple_tag(takes_context=True)
def post_article(
    context: template.Context,
    post: Post,
    reposted_by: Sequence[User] | None = None,
    full_media: bool = False,
) -> SafeString:
    # post_media: the page's images by post id (posts.selectors.viewer_marks).
    media = (context.get("post_media") or {}).get(post.pk, ())
    # reply_names: whom the page's replies answer (posts.selectors.viewer_marks); a
    # post rendered without it looks its own parent up, which query-count tests catch.
    replying_to = None
    if post.in_reply_to_id:
        names = context.get("reply_names")
        if names is None or post.in_reply_to_id not in names:
            names = reply_names([post], viewer_id=_viewer(context).user_id)
        replying_to = names[post.in_reply_to_id]
    return post_html.render_post(
        post,
        viewer=_viewer(context),
        reposted_by=reposted_by or (),
        media=media,
        full_media=full_media,
        replying_to=replying_to,
        # quoted_posts: the page's quoted posts (posts.selectors.viewer_marks).
        quoted_posts=context.get("quoted_posts"),
    )


def _key_of(value: object) -> object:
    """What a part is rendered from, hashable: a model's columns, a list's items."""
    if isinstance(value, Model):
        return post_html.row(value)
    if isinstance(value, list | tuple):
        return tuple(_key_of(item) for item in value)
    return value


@register.simple_tag(takes_context=True)
def kept(context: template.Context, template_name: str, **values: object) -> SafeString:
    """``{% kept "posts/_trending.html" trending=trending %}``: the template rendered with
    these values once per process for the same values (``post_html.PARTS``), then
    ``{{ form_inputs }}`` made the request's (its CSRF token and the path to come back
    to): the sidebar's parts, the same for every reader of the same rows."""
    key = (template_name, post_html.urls(), *sorted((k, _key_of(v)) for k, v in values.items()))

    def render() -> SafeString:
        html = get_template(template_name).render({**values, "form_inputs": post_html.FORM_INPUTS})
        return mark_safe(html)

    part = post_html.PARTS.get(key, render)
    return mark_safe(part.replace(post_html.FORM_INPUTS, _viewer(context).form_inputs))
