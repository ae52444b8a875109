"""Start-up reads the environment: defaults that work, and loud errors that name the variable.

Each case starts a fresh interpreter, since settings are read once per process.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Variables the settings read: removed so that each case sees only what it sets.
READ_BY_SETTINGS = (
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "CELERY_TASK_ALWAYS_EAGER",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "HTTPS",
    "RATELIMIT_ENABLED",
    "FEED_INBOX_CAP",
    "TRUSTED_PROXIES",
)
REPORT = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], "
    "'eager': s.CELERY_TASK_ALWAYS_EAGER, 'cache': s.CACHES['default']['BACKEND'], "
    "'hosts': s.ALLOWED_HOSTS, 'ratelimit': s.RATELIMIT_ENABLED}))"
)


def start(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in READ_BY_SETTINGS}
    env["DJANGO_SETTINGS_MODULE"] = "feed_project.settings"
    env.update(environment)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_with_no_environment_the_site_runs_on_sqlite_with_eager_celery_and_no_redis():
    started = start(REPORT)
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout)
    assert report["engine"] == "django.db.backends.sqlite3"
    assert report["eager"] is True
    assert report["cache"] == "django.core.cache.backends.locmem.LocMemCache"
    assert set(report["hosts"]) >= {"127.0.0.1", "localhost"}
    assert report["ratelimit"] is True


def test_ratelimit_enabled_0_turns_rate_limits_off():
    started = start(REPORT, RATELIMIT_ENABLED="0")
    assert started.returncode == 0, started.stderr
    assert json.loads(started.stdout)["ratelimit"] is False


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DATABASE_URL", "postgres://postgres@127.0.0.1:notaport/feed"),
        ("DATABASE_URL", "not-a-url"),
        ("DATABASE_URL", "nosuchdb://host/name"),
        ("FEED_INBOX_CAP", "abc"),
        ("REDIS_URL", "foo"),
        ("RATELIMIT_ENABLED", "enabled"),
        ("DEBUG", "perhaps"),
        ("TRUSTED_PROXIES", "the load balancer"),
    ],
)
def test_a_malformed_variable_stops_start_up_with_a_message_naming_it(variable, value):
    started = start("import django; django.setup()", **{variable: value})
    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert variable in started.stderr.strip().splitlines()[-1]
