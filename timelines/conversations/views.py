"""``/messages/``: private messages, conversations built from direct posts."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from feed_project.pagination import Cursor
from posts import ids
from posts.forms import PostForm
from posts.selectors import viewer_marks
from timelines.conversations import selectors, services


@require_safe
@login_required
def conversations(request: HttpRequest) -> HttpResponse:
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    page = selectors.conversations_page(user=request.user, cursor=cursor)
    return render(request, "timelines/conversations.html", {"page": page})


@require_safe
@login_required
def conversation(request: HttpRequest, key: str) -> HttpResponse:
    """One conversation, oldest to newest, with a reply box; opening it marks it read."""
    found = selectors.conversation_of(user=request.user, key=key)
    cursor = Cursor.from_request(request, ids.is_timeline_key)
    page = selectors.messages_page(user=request.user, conversation=found, cursor=cursor)
    services.mark_read(user=request.user, key=key)
    newest = page.items[-1] if page.items else None
    form = PostForm(initial={"in_reply_to": newest.pk if newest else "", "visibility": "direct"})
    context = {
        "conversation": found,
        "page": page,
        "form": form,
        "next_path": reverse("timelines:conversation", args=[key]),
        **viewer_marks(request.user, page.items),
    }
    return render(request, "timelines/conversation.html", context)
