"""``manage.py soak`` on a tiny world for a few seconds: a behavioural check, never a timing one.

It starts its own redis-servers, gunicorn and Celery worker against the test
database, runs two clients through the three faults, and must print a report
that finds nothing lost and no feed differing from the pull reference.
"""

import re
from io import StringIO

import pytest
from django.core.management import call_command

from bench.soak import Fault, Report, Request, database_is_for_soak

pytestmark = pytest.mark.worker


@pytest.mark.parametrize(
    ("name", "allowed"),
    [("feed", False), ("feed_production", False), ("feed_soak", True), ("test_feed", True)],
)
def test_soak_runs_only_on_a_database_named_for_it_or_made_by_the_test_runner(name, allowed):
    assert database_is_for_soak(name) is allowed


@pytest.mark.django_db(transaction=True)
def test_a_short_soak_with_every_fault_reports_nothing_lost_and_no_feed_differing():
    out = StringIO()

    call_command("soak", "--clients", "2", "--seconds", "8", stdout=out)

    report = out.getvalue()
    assert "Soak report" in report
    assert re.search(r"posts accepted\s+[1-9]", report), report
    assert re.search(r"lost posts\s+0\b", report), report
    assert re.search(r"feeds differing\s+0 of 2\b", report), report
    assert re.search(r"0 outside\)", report), report
    for fault in ("worker", "cache", "gunicorn"):
        assert re.search(rf"fault {fault}\s+recovered in", report), report


def test_a_request_cut_while_a_worker_was_being_killed_counts_as_in_flight_at_the_kill():
    # The kill lands between the fault's start (10.0) and its action's return (10.1).
    report = Report(faults=[Fault("gunicorn", at=10.0, wall=0.0, done=10.1)])
    during = Request(1, started=10.05, ended=10.06, method="GET", path="/", status=0)
    before = Request(1, started=9.0, ended=9.5, method="GET", path="/", status=0)
    after = Request(1, started=10.2, ended=10.3, method="GET", path="/", status=0)

    assert report.in_flight_at_a_kill(during)
    assert not report.in_flight_at_a_kill(before)
    assert not report.in_flight_at_a_kill(after)
