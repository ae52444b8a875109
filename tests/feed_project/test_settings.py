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
    "SERVICE_TIMEOUT_SECONDS",
)
REPORT = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], "
    "'eager': s.CELERY_TASK_ALWAYS_EAGER, 'cache': s.CACHES['default']['BACKEND'], "
    "'hosts': s.ALLOWED_HOSTS, 'ratelimit': s.RATELIMIT_ENABLED}))"
)


# Start-up refuses to run without SECRET_KEY when DEBUG is off: most cases give one.
A_KEY = "a-secret-key-for-these-start-up-tests-only-0123456789"


def start(code: str, **environment: str | None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter; a variable given as None is left unset."""
    env = {key: value for key, value in os.environ.items() if key not in READ_BY_SETTINGS}
    env["DJANGO_SETTINGS_MODULE"] = "feed_project.settings"
    env.update({"SECRET_KEY": A_KEY, **environment})
    env = {key: value for key, value in env.items() if value is not None}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_with_no_environment_but_a_key_the_site_runs_on_sqlite_with_eager_celery_and_no_redis():
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
        ("REDIS_URL", "redis+cluster://"),
        ("REDIS_URL", "redis+cluster://127.0.0.1"),
        ("REDIS_URL", "redis+cluster://127.0.0.1:7000,127.0.0.1:x"),
        ("REDIS_URL", "redis+cluster://127.0.0.1:7000/3"),
        ("RATELIMIT_ENABLED", "enabled"),
        ("DEBUG", "perhaps"),
        ("TRUSTED_PROXIES", "the load balancer"),
        ("SERVICE_TIMEOUT_SECONDS", "soon"),
        ("SERVICE_TIMEOUT_SECONDS", "0"),
        ("CELERY_BROKER_URL", "http://127.0.0.1:5672/"),
        ("CELERY_BROKER_URL", "rabbitmq"),
    ],
)
def test_a_malformed_variable_stops_start_up_with_a_message_naming_it(variable, value):
    started = start("import django; django.setup()", **{variable: value})
    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert variable in started.stderr.strip().splitlines()[-1]


BROKER_REPORT = (
    "import django; django.setup(); from django.conf import settings as s; "
    "from feed_project.celery import app; "
    "print(s.REDIS_URL, s.CELERY_BROKER_URL, app.conf.broker_url, s.CELERY_TASK_ALWAYS_EAGER)"
)


def test_the_broker_is_the_cache_redis_unless_named_apart():
    started = start(BROKER_REPORT, REDIS_URL="redis://127.0.0.1:6379/3")
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == ["redis://127.0.0.1:6379/3"] * 3 + ["False"]


@pytest.mark.parametrize(
    "broker",
    [
        "amqp://guest:guest@127.0.0.1:5672/feed",
        "amqps://user:secret@rabbitmq.example.org:5671/feed",
        "redis://127.0.0.1:6380/0",
        "rediss://broker.example.org:6380/0",
    ],
)
def test_a_broker_apart_from_the_cache_is_rabbitmq_or_redis(broker):
    started = start(BROKER_REPORT, REDIS_URL="redis://127.0.0.1:6379/3", CELERY_BROKER_URL=broker)
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == ["redis://127.0.0.1:6379/3", broker, broker, "False"]


def test_a_cache_redis_on_a_unix_socket_needs_the_broker_named():
    started = start("import django; django.setup()", REDIS_URL="unix:///run/redis.sock")
    last_line = started.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and "CELERY_BROKER_URL" in last_line
    named = start(
        "import django; django.setup()",
        REDIS_URL="unix:///run/redis.sock",
        CELERY_BROKER_URL="amqp://guest:guest@127.0.0.1:5672//",
    )
    assert named.returncode == 0, named.stderr


def test_a_redis_cluster_is_the_cache_only_and_needs_the_broker_named():
    cluster = "redis+cluster://10.0.0.1:7000,10.0.0.2:7000"
    started = start("import django; django.setup()", REDIS_URL=cluster)
    last_line = started.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and "CELERY_BROKER_URL" in last_line
    report = (
        "import django; django.setup(); from django.conf import settings as s; "
        "o = s.CACHES['default']; "
        "print(s.REDIS_CLUSTER, o['LOCATION'], o['OPTIONS']['CLIENT_CLASS'])"
    )
    named = start(report, REDIS_URL=cluster, CELERY_BROKER_URL="amqp://guest:guest@127.0.0.1//")
    assert named.returncode == 0, named.stderr
    assert named.stdout.split() == [
        "True",
        f"['{cluster}']",
        "feed_project.redis_cluster.ClusterClient",
    ]


def test_rabbitmq_publishes_with_confirms_persistent_messages_and_the_service_timeouts():
    code = (
        "import json, django; django.setup(); from feed_project.celery import app; "
        "c = app.conf; print(json.dumps({'options': c.broker_transport_options, "
        "'connect': c.broker_connection_timeout, 'mode': c.task_default_delivery_mode}))"
    )
    started = start(
        code, CELERY_BROKER_URL="amqp://guest:guest@127.0.0.1:5672//", SERVICE_TIMEOUT_SECONDS="2"
    )
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout)
    assert report["options"]["confirm_publish"] is True
    assert report["options"]["read_timeout"] == report["options"]["write_timeout"] == 2
    assert report["connect"] == 2
    assert report["mode"] == "persistent"


def test_start_up_refuses_a_missing_secret_key_when_debug_is_off():
    for debug in (None, "0"):
        started = start("import django; django.setup()", SECRET_KEY=None, DEBUG=debug)
        assert started.returncode != 0
        last_line = started.stderr.strip().splitlines()[-1]
        assert "ImproperlyConfigured" in last_line
        assert "SECRET_KEY must be set when DEBUG is off" in last_line


def test_start_up_refuses_a_blank_secret_key_when_debug_is_off():
    started = start("import django; django.setup()", SECRET_KEY="   ")
    assert started.returncode != 0
    assert "SECRET_KEY must be set" in started.stderr


def test_debug_on_without_a_secret_key_starts_on_the_development_key():
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    started = start(code, SECRET_KEY=None, DEBUG="1")
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "True"


def test_make_run_starts_with_no_environment():
    """`make run` needs nothing but Python: its commands carry a development key."""
    clean = {key: value for key, value in os.environ.items() if key not in READ_BY_SETTINGS}
    clean.pop("DJANGO_SETTINGS_MODULE", None)
    planned = subprocess.run(
        ["make", "-n", "run"], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )
    assert planned.returncode == 0, planned.stderr
    migrate = next(line for line in planned.stdout.splitlines() if "manage.py migrate" in line)
    # The same command line, checking the project instead of migrating it.
    check = migrate.replace("migrate --noinput", "check")
    checked = subprocess.run(
        ["bash", "-c", check], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr
    assert "no issues" in checked.stdout
