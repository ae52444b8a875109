"""``bench_http --api``: the client API's home timeline beside the HTML home page.

The same gunicorn, world and reader as ``bench_http`` (``bench.http``): wrk
drives ``GET /`` signed in by session cookie and
``GET /api/v1/timelines/home?limit=20`` with a bearer token of the same
reader, in turn, round after round, so both meet the same load on the
machine. The API answers the same twenty entries as JSON instead of HTML, so
it should cost no more than the page: the target is at least 0.80x the page's
requests per second. Beside it, the CPU one status costs to shape in process
(``api.entities.statuses`` over the page, its queries included, and the
response schema's validation and JSON after it), which is what grows with
``limit``.
"""

import json
import statistics
import time
from dataclasses import dataclass
from datetime import timedelta

from django.test import RequestFactory
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from oauthlib.common import generate_token
from pydantic import TypeAdapter

from accounts.models import User
from api import entities, schemas
from bench.http import Figures, RunOptions, Target, World
from feed_project.pagination import Cursor
from timelines.home import home_feed

API_HOME = "/api/v1/timelines/home?limit=20"
TARGET = 0.80
APP_NAME = "bench_http --api"
# In-process timing: enough pages that a run takes a second or so on an idle machine.
ITERATIONS = 200


def bearer_token(username: str) -> str:
    """A new read token of ``username`` for this command's app, as a signed-in app holds."""
    app, _ = get_application_model().objects.get_or_create(
        name=APP_NAME,
        defaults={
            "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
            "client_type": "confidential",
            "authorization_grant_type": "authorization-code",
            "scopes": "read",
        },
    )
    value = generate_token()
    get_access_token_model().objects.create(
        user=User.objects.get(username=username),
        application=app,
        token=value,
        scope="read",
        expires=timezone.now() + timedelta(days=1),
    )
    return value


def targets(world: World) -> list[Target]:
    token = bearer_token(world.reader)
    return [
        Target("home page 1 (HTML)", "/", 20),
        Target("home timeline (API)", API_HOME, 20, header=f"Authorization: Bearer {token}"),
    ]


@dataclass(frozen=True)
class StatusCost:
    statuses: int  # on the page
    pages: int  # timed, each way
    shape_us: float  # CPU µs a status in api.entities.statuses (hydration's queries included)
    schema_us: float  # CPU µs a status in the response schema's validation and JSON


def status_cost(world: World, *, iterations: int | None = None) -> StatusCost:
    """CPU a status costs to answer, in this process (``time.process_time``): the reader's
    first page as ``api.timelines.home`` turns it into statuses, then as django-ninja
    validates them against ``schemas.Status`` and writes JSON. The database's own CPU is
    not in it (gunicorn's and PostgreSQL's are in the HTTP figures)."""
    iterations = iterations or ITERATIONS
    reader = User.objects.get(username=world.reader)
    request = RequestFactory().get(API_HOME, headers={"host": "127.0.0.1"})
    request.user = reader
    page = home_feed(reader=reader, cursor=Cursor(), limit=20)
    entries = [(item.key, item.post) for item in page.items]
    validator = TypeAdapter(list[schemas.Status])
    answer = entities.statuses(request, entries)
    started = time.process_time()
    for _ in range(iterations):
        answer = entities.statuses(request, entries)
    shaped = time.process_time() - started
    started = time.process_time()
    for _ in range(iterations):
        json.dumps(validator.dump_python(validator.validate_python(answer), mode="json"))
    validated = time.process_time() - started
    count = iterations * len(answer)
    return StatusCost(
        statuses=len(answer),
        pages=iterations,
        shape_us=shaped / count * 1e6,
        schema_us=validated / count * 1e6,
    )


def report(figures: list[Figures], options: RunOptions, cost: StatusCost) -> list[str]:
    """Medians over rounds of req/s, CPU a request over all rounds, the API's ratio to the
    page (the median of each round's), and a status's in-process cost."""
    html, api = figures

    def cpu_ms(figure: Figures) -> tuple[float, float]:
        requests = sum(s.requests for s in figure.samples)
        return (
            sum(s.gunicorn_cpu for s in figure.samples) / requests * 1000,
            sum(s.postgres_cpu for s in figure.samples) / requests * 1000,
        )

    lines = []
    for figure in figures:
        gunicorn, postgres = cpu_ms(figure)
        lines.append(
            f"{figure.target.name:<22} {figure.target.path:<34} "
            f"req/s {statistics.median(s.rps for s in figure.samples):>7,.0f} "
            f"(rounds: {', '.join(f'{s.rps:,.0f}' for s in figure.samples)}); "
            f"CPU a request: gunicorn {gunicorn:.2f} ms, postgres {postgres:.2f} ms"
        )
    ratio = statistics.median(a.rps / h.rps for a, h in zip(api.samples, html.samples, strict=True))
    html_cpu, api_cpu = sum(cpu_ms(html)), sum(cpu_ms(api))
    lines += [
        f"  * {options.rounds} rounds of {options.seconds:g} s a target, alternating; "
        f"wrk -t1 -c{options.connections}; req/s is the median over rounds; CPU a "
        "request: user+system of the gunicorn workers and of this database's PostgreSQL "
        "backends over all rounds",
        f"API over HTML: req/s {ratio:.2f}x (median of the rounds' ratios); "
        f"CPU a request {api_cpu / html_cpu:.2f}x",
        f"A status in process ({cost.statuses} on the page, {cost.pages} pages): "
        f"api.entities.statuses {cost.shape_us:.0f} CPU-us, schema and JSON "
        f"{cost.schema_us:.0f} CPU-us",
        f"Target: the API's home timeline at least {TARGET:.2f}x the HTML home page's "
        f"req/s: {ratio:.2f}x, " + ("met" if ratio >= TARGET else "not met"),
    ]
    return lines
