"""/healthz for load balancers and ``manage.py doctor`` for operators (feed_project.health).

Failures are real: a cache Redis at a closed port, a broker that is a
private redis-server frozen with SIGSTOP, a database at a closed port (in a
subprocess, since this process's database must keep working).
"""

import copy
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, override_settings

from accounts.models import User
from tests.private_redis import broker_at, private_redis

ROOT = Path(__file__).resolve().parents[2]
CLOSED_PORT = "redis://127.0.0.1:1/0"


def cache_at_closed_port():
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = CLOSED_PORT
    return override_settings(REDIS_URL=CLOSED_PORT, CACHES=caches)


@pytest.mark.embedded
@pytest.mark.django_db
def test_healthz_answers_200_with_every_configured_service_ok():
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    expected = {"database"} | ({"redis", "broker"} if settings.REDIS_URL else set())
    assert response.json() == dict.fromkeys(expected, "ok")
    assert "no-store" in response["Cache-Control"]


@pytest.mark.django_db
def test_healthz_says_503_and_names_redis_when_the_cache_is_down():
    with cache_at_closed_port():
        response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json() == {"database": "ok", "redis": "failed", "broker": "ok"}
    assert "127.0.0.1" not in response.content.decode()  # errors are for the operator only


@pytest.mark.django_db
def test_healthz_says_503_and_names_the_broker_when_it_is_frozen():
    with private_redis() as server, broker_at(server.url()), server.frozen_for_a_while():
        response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json()["broker"] == "failed"
    assert response.json()["database"] == "ok"


@pytest.mark.django_db
def test_healthz_needs_no_login_and_does_not_touch_a_signed_in_readers_last_active(alice):
    client = Client()
    client.force_login(alice)
    User.objects.filter(pk=alice.pk).update(last_active_at=None)

    assert client.get("/healthz").status_code == 200
    assert User.objects.get(pk=alice.pk).last_active_at is None
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_doctor_prints_each_check_with_its_latency_and_succeeds_when_all_answer():
    out = StringIO()
    call_command("doctor", stdout=out)

    lines = out.getvalue().splitlines()
    for name in ("database", "redis", "broker"):
        assert any(
            line.startswith(name) and " ok " in line and line.endswith(" ms") for line in lines
        )
    assert lines[-1] == "All configured services answer."


@pytest.mark.django_db
def test_doctor_fails_naming_the_service_that_is_down():
    out = StringIO()
    with cache_at_closed_port(), pytest.raises(CommandError, match="failed: redis") as failed:
        call_command("doctor", stdout=out)

    assert failed.value.returncode == 1
    redis_line = next(line for line in out.getvalue().splitlines() if line.startswith("redis"))
    assert "FAILED" in redis_line and "ConnectionError" in redis_line


def _doctor(**environment: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    env.update(DJANGO_SETTINGS_MODULE="feed_project.settings", **environment)
    return subprocess.run(
        [sys.executable, "manage.py", "doctor"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_doctor_exits_1_when_the_database_is_down():
    finished = _doctor(DATABASE_URL="postgres://postgres@127.0.0.1:1/feed")

    assert finished.returncode == 1
    database_line = next(line for line in finished.stdout.splitlines() if "database" in line)
    assert "FAILED" in database_line and "OperationalError" in database_line
    assert "failed: database" in finished.stderr


@pytest.mark.embedded
def test_doctor_skips_the_services_that_are_not_configured(tmp_path):
    finished = _doctor(DATABASE_URL=f"sqlite:///{tmp_path / 'doctor.sqlite3'}")

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "redis     not configured" in finished.stdout
    assert "broker    not configured" in finished.stdout
