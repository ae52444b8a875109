"""Small helpers shared by the apps' views."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest) -> str | None:
    """The ``next`` field when it is a path on this site, else None.

    A path: "home" or "@alice" would be followed relative to the page that
    posted them (``/@alice/follow/home``).
    """
    target = request.POST.get("next") or request.GET.get("next")
    if (
        target
        and target.startswith("/")
        and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return target
    return None


def redirect_back(request: HttpRequest, fallback: str) -> HttpResponseRedirect:
    """To the ``next`` field when it is on this site, else to ``fallback``.

    Not ``redirect(next)``: that takes a ``next`` such as "home" for the name
    of a view, and a name it cannot reverse is a 500.
    """
    return HttpResponseRedirect(safe_next(request) or fallback)


FRAGMENT_HEADER = "X-Fragment"


def wants_fragment(request: HttpRequest) -> bool:
    """Whether static/js/site.js sent this form in place and wants a fragment back.

    Without the header (no JavaScript) the same view redirects as before.
    """
    return request.headers.get(FRAGMENT_HEADER) == "1"


def answers_json(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark a view whose answers are JSON, so that its error answers are JSON too
    (feed_project.errors), whatever the client's Accept header says."""
    view.answers_json = True  # type: ignore[attr-defined]
    return view
