"""Settings, read from the environment through django-environ.

With no environment at all the site runs on SQLite, without Redis, with Celery
tasks executed eagerly in process. Each optional service is switched on by its
URL being set. A malformed value stops start-up with ImproperlyConfigured
naming the variable.
"""

import ipaddress
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

from feed_project.redis_cluster import CACHE_OPTIONS as CLUSTER_CACHE_OPTIONS
from feed_project.redis_cluster import is_cluster_url, startup_nodes

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


_BOOLEANS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


def _read(name: str, reader: str, default: Any, **kwargs: Any) -> Any:
    """Read one variable with django-environ; a bad value names the variable."""
    raw = env.str(name, default="")
    if reader == "bool" and raw and raw.strip().lower() not in _BOOLEANS:
        # environ's bool() takes any unknown word for False: "enabled" would
        # silently switch a feature off.
        raise ImproperlyConfigured(f"Environment variable {name} must be a boolean, not {raw!r}")
    try:
        value = getattr(env, reader)(name, default=default, **kwargs)
    except ImproperlyConfigured:
        raise
    except Exception as exc:
        raise ImproperlyConfigured(
            f"Environment variable {name} has an invalid value: {exc}"
        ) from exc
    if reader == "db" and (
        raw and (urlsplit(raw).scheme not in environ.Env.DB_SCHEMES or not value.get("ENGINE"))
    ):
        raise ImproperlyConfigured(
            f"Environment variable {name} is not a database URL such as "
            "postgres://user@host:5432/name or sqlite:///path/db.sqlite3"
        )
    return value


DEBUG: bool = _read("DEBUG", "bool", False)
SECRET_KEY: str = _read("SECRET_KEY", "str", "")
if not SECRET_KEY.strip():
    if not DEBUG:
        # A key everyone can read signs everyone's sessions: never run on one
        # by accident. `make run` passes a development key; tests/settings.py too.
        raise ImproperlyConfigured(
            "Environment variable SECRET_KEY must be set when DEBUG is off: a long random "
            "string, e.g. the output of "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'. "
            "For local development set DEBUG=1 (or use `make run`)."
        )
    SECRET_KEY = "django-insecure-local-development-key-not-for-production-use-0123456789"

ALLOWED_HOSTS: list[str] = _read("ALLOWED_HOSTS", "list", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS: list[str] = _read("CSRF_TRUSTED_ORIGINS", "list", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts.apps.AccountsConfig",
    "relations.apps.RelationsConfig",
    "posts.apps.PostsConfig",
    "timelines.apps.TimelinesConfig",
    # The Mastodon client API (api/): OAuth 2 by django-oauth-toolkit, whose tables
    # api.models swaps in (OAUTH2_PROVIDER_*_MODEL below), and CORS for browser apps.
    "oauth2_provider",
    "corsheaders",
    "api.apps.ApiConfig",
    # Dev tools last: they import the product, never the reverse.
    "bench.apps.BenchConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before anything that may answer: browser apps read the API from other origins.
    "corsheaders.middleware.CorsMiddleware",
    "api.middleware.ApiPaths",
    # Django reads form bodies of POST only; Mastodon's clients send PUT and PATCH forms.
    "api.form_bodies.FormBodies",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.LastActiveMiddleware",
    "accounts.middleware.TimeZoneMiddleware",
    "accounts.middleware.PrivateCacheMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "feed_project.urls"
WSGI_APPLICATION = "feed_project.wsgi.application"
ASGI_APPLICATION = "feed_project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
DATABASES = {
    "default": _read("DATABASE_URL", "db", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"].setdefault("CONN_MAX_AGE", _read("CONN_MAX_AGE", "int", 60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Server-side binding lets psycopg prepare a statement once it has run five
    # times on a connection: the feed's statements cost more to plan than to run
    # (docs/BENCHMARKS.md).
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 5)  # Django sets None
    # No JIT: it compiles any statement the planner thinks costly, and the feed's
    # set statements over 5,000-reader lists are: a trim spent nearly all its time
    # compiling (docs/BENCHMARKS.md). OLTP statements never win it back.
    DATABASES["default"]["OPTIONS"].setdefault("options", "-c jit=off")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets page reads go on while a fan-out task writes.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault(
        "init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Timeouts of every client of Redis and the broker -------------------------
# A service that accepts connections but never answers (a paused VM, a
# black-holed network) must cost a request seconds, not gunicorn's 30 s kill:
# the broker's client gives up after SERVICE_TIMEOUT_SECONDS, connecting or
# waiting for a reply, and the task runs in process (timelines.tasks.enqueue).
# The cache is read on page views, several times a page, and a miss is served
# from PostgreSQL: its client waits a third of that.
SERVICE_TIMEOUT_SECONDS: float = _read("SERVICE_TIMEOUT_SECONDS", "float", 1.5)
if not 0 < SERVICE_TIMEOUT_SECONDS <= 60:
    raise ImproperlyConfigured(
        "Environment variable SERVICE_TIMEOUT_SECONDS must be a number of seconds "
        f"above 0 and at most 60, not {SERVICE_TIMEOUT_SECONDS!r}"
    )

# --- Redis: the feed cache, switched on by REDIS_URL ----------------------------
# A cache: it may lose everything (run it without persistence, README) and the
# site never serves what it missed (timelines.home._cache). Also the broker, unless
# CELERY_BROKER_URL names another.
# A Redis Cluster is named by redis+cluster:// (rediss+cluster:// with TLS) and
# one or more of its nodes, comma-separated: feed_project.redis_cluster.
REDIS_URL: str = _read("REDIS_URL", "str", "")
REDIS_CLUSTER: bool = is_cluster_url(REDIS_URL)
if REDIS_URL:
    if REDIS_CLUSTER:
        try:
            startup_nodes(REDIS_URL)
        except ValueError as exc:
            raise ImproperlyConfigured(f"Environment variable REDIS_URL: {exc}") from exc
    elif not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(
            "Environment variable REDIS_URL must start with redis://, rediss://, unix:// "
            "or, for a Redis Cluster, redis+cluster:// or rediss+cluster://"
        )
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            # A list: django-redis would split a cluster's comma-separated nodes.
            "LOCATION": [REDIS_URL] if REDIS_CLUSTER else REDIS_URL,
            "KEY_PREFIX": "feed",
            "OPTIONS": {
                # A Redis that is down or hung must cost a page milliseconds,
                # not seconds (0.25 and 0.5 s by default).
                "SOCKET_CONNECT_TIMEOUT": SERVICE_TIMEOUT_SECONDS / 6,
                "SOCKET_TIMEOUT": SERVICE_TIMEOUT_SECONDS / 3,
                "IGNORE_EXCEPTIONS": True,
                # One wait, then a pause of a few seconds in which every call fails
                # at once (feed_project.cache_breaker; a cluster's factory builds
                # the cluster's guarded client).
                "REDIS_CLIENT_CLASS": "feed_project.cache_breaker.GuardedRedis",
            },
        }
    }
    if REDIS_CLUSTER:
        CACHES["default"]["OPTIONS"] |= CLUSTER_CACHE_OPTIONS
    DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Celery -------------------------------------------------------------------
# The broker keeps queued work, so in production it is a service of its own that
# keeps messages: RabbitMQ (amqp://, amqps://: durable queues, persistent
# messages, publisher confirms) or a Redis with persistence (redis://, rediss://).
# Unset, it is the cache's Redis (REDIS_URL): fine for development, where losing
# the queue with the cache costs nothing (the sweeper redelivers posts).
_BROKER_SCHEMES = ("amqp", "amqps", "redis", "rediss")
CELERY_BROKER_URL: str = _read("CELERY_BROKER_URL", "str", REDIS_URL)
_broker_scheme = urlsplit(CELERY_BROKER_URL).scheme if CELERY_BROKER_URL else ""
if CELERY_BROKER_URL and _broker_scheme not in _BROKER_SCHEMES:
    where = "CELERY_BROKER_URL" if env.str("CELERY_BROKER_URL", default="") else "REDIS_URL"
    raise ImproperlyConfigured(
        f"Environment variable {where} is the Celery broker, so it must start with "
        "amqp://, amqps:// (RabbitMQ), redis:// or rediss:// (Redis), not "
        f"{CELERY_BROKER_URL.split(':', 1)[0]!r}; set CELERY_BROKER_URL to one"
    )
CELERY_TASK_ALWAYS_EAGER: bool = _read("CELERY_TASK_ALWAYS_EAGER", "bool", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
# A worker killed mid-task leaves its message unacknowledged, so it runs again.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Each worker process holds up to this many messages beside the one it runs: with
# one, the consumer's fetch and acknowledgement of each message left the processes
# idle most of the time after a fault, and backlogs drained slowly (docs/BENCHMARKS.md,
# "Soak"). Held messages of a killed worker come back like its running one.
CELERY_WORKER_PREFETCH_MULTIPLIER: int = _read("CELERY_WORKER_PREFETCH_MULTIPLIER", "int", 4)
# Celery's Django fix-up closes the database connection before and after every
# task unless DB_REUSE_MAX is set (then every 2 x DB_REUSE_MAX tasks): a new
# connection per task and psycopg's prepared statements lost (a 100,000-follower
# fan-out is 10 chunk tasks). With it set, feed_project.celery applies Django's
# request rules around each task instead: CONN_MAX_AGE, and CONN_HEALTH_CHECKS
# (on, above) so a connection the server dropped is replaced, never used.
CELERY_DB_REUSE_MAX = 1000
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker reconnects within a second of the broker's return (feed_project.broker).
CELERY_WORKER_CONSUMER = "feed_project.broker:Consumer"
# Written to disk by RabbitMQ (delivery_mode 2) in durable queues (Celery's
# default queue is durable): a broker restart keeps queued tasks.
CELERY_TASK_DEFAULT_DELIVERY_MODE = "persistent"
# Publishing to a broker that is down or hung must fail fast so the post
# still lands: one retry of the connection (max_retries), socket timeouts on
# every read and write, no retry of the publish itself. After a failure the
# process stops trying the broker for a few seconds (feed_project.celery).
# An unacknowledged task (its worker died) is handed out again after the
# visibility timeout: fan-out tasks take seconds, so minutes is plenty.
# One set of transport options serves both transports (each reads its own
# names; py-amqp takes the others as unused keyword arguments), so a process
# can be pointed at either broker (the tests do).
CELERY_BROKER_CONNECTION_TIMEOUT = SERVICE_TIMEOUT_SECONDS  # py-amqp's connect_timeout
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "visibility_timeout": _read("CELERY_VISIBILITY_TIMEOUT", "int", 300),
    # Redis as broker (kombu's redis transport hands these to redis-py).
    "socket_connect_timeout": SERVICE_TIMEOUT_SECONDS,
    "socket_timeout": SERVICE_TIMEOUT_SECONDS,
    # A worker's BRPOP waits this long for a message: it must answer before
    # the socket timeout does (kombu's default is 1 s).
    "brpop_timeout": min(1.0, SERVICE_TIMEOUT_SECONDS / 2),
    # RabbitMQ (py-amqp's Connection takes these). connect_timeout also bounds
    # the AMQP handshake; read_timeout bounds the wait for a publisher confirm.
    "read_timeout": SERVICE_TIMEOUT_SECONDS,
    "write_timeout": SERVICE_TIMEOUT_SECONDS,
    # A publish returns once RabbitMQ has taken the message (written it, for a
    # persistent message in a durable queue); a refusal (Basic.Nack) is an
    # error the caller sees, and timelines.tasks.enqueue runs the task in process.
    "confirm_publish": True,
}
CELERY_TASK_PUBLISH_RETRY = False
# Every change to an inbox is recorded in an outbox with the change; what its
# task has not done FEED_SWEEP_AFTER_SECONDS later (a lost message, a dead
# worker) is queued again. A shorter delay recovers sooner and queues again
# more tasks that were merely waiting in a long queue (they are idempotent).
# The sweep is two index scans of small tables: every 15 seconds costs nothing.
FEED_SWEEP_AFTER_SECONDS: int = _read("FEED_SWEEP_AFTER_SECONDS", "int", 60)
if FEED_SWEEP_AFTER_SECONDS < 1:
    raise ImproperlyConfigured(
        "Environment variable FEED_SWEEP_AFTER_SECONDS must be a number of seconds, at least 1, "
        f"not {FEED_SWEEP_AFTER_SECONDS!r}"
    )
FEED_SWEEP_EVERY_SECONDS = 15.0
CELERY_BEAT_SCHEDULE = {
    "sweep-undelivered-posts": {
        "task": "timelines.sweep_undelivered",
        "schedule": FEED_SWEEP_EVERY_SECONDS,
    },
}
# Files of deleted posts whose deletion task was lost (posts.tasks).
CELERY_BEAT_SCHEDULE["sweep-discarded-media"] = {
    "task": "posts.sweep_discarded_media",
    "schedule": 600.0,
}

# --- Timelines: the knobs of delivery (docs/ARCHITECTURE.md) ------------------
FEED_PAGE_SIZE: int = _read("FEED_PAGE_SIZE", "int", 20)
FEED_MAX_PAGE_SIZE: int = 100
FEED_INBOX_CAP: int = _read("FEED_INBOX_CAP", "int", 800)
FEED_FANOUT_CHUNK: int = _read("FEED_FANOUT_CHUNK", "int", 10_000)
FEED_INACTIVE_DAYS: int = _read("FEED_INACTIVE_DAYS", "int", 7)
FEED_BIG_ACCOUNT_FOLLOWERS: int = _read("FEED_BIG_ACCOUNT_FOLLOWERS", "int", 10_000)
FEED_REBUILD_PER_AUTHOR: int = _read("FEED_REBUILD_PER_AUTHOR", "int", 50)
# A first visit (or a return after missing pushes) rebuilds the inbox before the
# page when the reader follows at most this many accounts; above it the rebuild
# is queued and the pages are pulled until it is done (timelines.home._state.open_built).
FEED_REBUILD_INLINE_FOLLOWING: int = _read("FEED_REBUILD_INLINE_FOLLOWING", "int", 2000)
FEED_CACHE_TTL_DAYS: int = _read("FEED_CACHE_TTL_DAYS", "int", 3)
# The home feed's entries (timelines.home._items) and the pull (timelines.home._pull) in
# their Citus forms:
# None finds out (on for a Citus coordinator), True/False force it (tests).
FEED_ROUTED_READS: bool | None = None
FEED_PULL_TIMEOUT_MS: int = _read("FEED_PULL_TIMEOUT_MS", "int", 200)
# A post's reposts are scanned (the feed's collapse, "reposted by") up to this
# many per person the reader follows; past that (a viral post), the reader and
# each person they follow are probed instead: one probe costs about as much as
# scanning 5 reposts (docs/BENCHMARKS.md has the figures).
FEED_REPOSTS_SCANNED_PER_FOLLOWEE = 5
# A pull of thousands of authors first walks the posts newest first, at most
# this many rows per author, before it probes each author (timelines.home._pull.merged;
# plain PostgreSQL only): 20 walked rows cost about as much as one probe
# (docs/BENCHMARKS.md has the figures); 0 never walks.
FEED_PULL_WALK_ROWS_PER_AUTHOR = 20
# Posts a process holds under their row versions for the feed (timelines.home._held_posts;
# PostgreSQL only), about 1.5-2.5 KB each (~40 MB a process at 20,000); 0 reads
# them with every page, in the entries statement (timelines.home._items).
FEED_HELD_POSTS: int = _read("FEED_HELD_POSTS", "int", 20_000)
# Trimming an inbox reads its keys, so no write trims the table: a sweep trims
# every kept inbox once per this many seconds, FEED_TRIM_BATCH inboxes a task
# (timelines.tasks.trim_inboxes). An inbox overshoots the cap by that
# interval's posts; caches never do (they trim themselves at every push).
FEED_TRIM_EVERY_SECONDS: int = _read("FEED_TRIM_EVERY_SECONDS", "int", 300)
FEED_TRIM_BATCH: int = _read("FEED_TRIM_BATCH", "int", 2000)
CELERY_BEAT_SCHEDULE["trim-inboxes"] = {
    "task": "timelines.trim_inboxes",
    "schedule": float(FEED_TRIM_EVERY_SECONDS),
}
# The self-check (timelines.tasks.verify_inboxes): this often, this many kept
# inboxes are held to the pull model, and repaired where they differ.
FEED_VERIFY_EVERY_SECONDS: int = _read("FEED_VERIFY_EVERY_SECONDS", "int", 600)
FEED_VERIFY_SAMPLE: int = _read("FEED_VERIFY_SAMPLE", "int", 100)
CELERY_BEAT_SCHEDULE["verify-inboxes"] = {
    "task": "timelines.verify_inboxes",
    "schedule": float(FEED_VERIFY_EVERY_SECONDS),
}
# Who to follow (timelines.suggestions): every active user's suggestions are ranked
# again once per this many seconds; the sidebar reads the rows a run wrote.
FEED_SUGGEST_EVERY_SECONDS: int = _read("FEED_SUGGEST_EVERY_SECONDS", "int", 3600)
CELERY_BEAT_SCHEDULE["refresh-suggestions"] = {
    "task": "timelines.refresh_suggestions",
    "schedule": float(FEED_SUGGEST_EVERY_SECONDS),
}

# --- Auth ---------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "timelines:home"
LOGOUT_REDIRECT_URL = "timelines:home"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# --- The client API's OAuth 2 (api/, docs/API.md) ------------------------------
# Mastodon's tokens do not expire and its clients never refresh one: a token
# that expired would sign its user out of their app without a word. Ten years,
# then; a token ends when revoked (/oauth/revoke), or when its account asks for
# deletion (api.signal_handlers).
OAUTH2_PROVIDER_APPLICATION_MODEL = "api.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "api.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "api.RefreshToken"
OAUTH2_PROVIDER_GRANT_MODEL = "api.Grant"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "api.IDToken"
OAUTH2_PROVIDER_DEVICE_GRANT_MODEL = "api.DeviceGrant"
OAUTH2_PROVIDER = {
    "ACCESS_TOKEN_EXPIRE_SECONDS": 10 * 365 * 24 * 3600,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 600,
    "SCOPES_BACKEND_CLASS": "api.scopes.RegisteredScopes",
    "OAUTH2_VALIDATOR_CLASS": "api.oauth.Validator",
    "OAUTH2_BACKEND_CLASS": "api.oauth.FormOrJsonCore",
    # Optional, as Mastodon's: Mastodon.py and older apps send no challenge. A
    # challenge sent is checked, and only S256 is taken (plain is refused).
    "PKCE_REQUIRED": False,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    # RFC 9700's other advice, taken: no implicit grant, tokens never read from a
    # query string, the issuer in every authorization response, tokens kept as
    # checksums only, a replayed refresh token ends its family, and https for
    # redirects the app did not register itself (api.models.Application allows
    # the schemes of its own registered URIs).
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
    # The consent page asks every time (Mastodon's force_login aside).
    "REQUEST_APPROVAL_PROMPT": "force",
}
# Codes never exchanged and ended tokens are purged hourly (api.tasks): a few
# rows an hour at most, deleted in batches by the toolkit.
CELERY_BEAT_SCHEDULE["clear-expired-oauth-tokens"] = {
    "task": "api.clear_expired_tokens",
    "schedule": 3600.0,
}
# The API answers browser apps of any origin (Elk, Phanpy): tokens only, no
# cookies, so no origin gains anything a token would not give it.
CORS_URLS_REGEX = r"^/(api/|oauth/token/?$|oauth/revoke/?$|\.well-known/)"
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_CREDENTIALS = False
# What browser apps read of an answer: paging, and the rate limit (api.middleware).
CORS_EXPOSE_HEADERS = [
    "Link",
    "Retry-After",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
]
# An open stream (api.streaming) sends a heartbeat comment this often when idle, as
# Mastodon's does every 15 s, so proxies and clients keep the connection open.
STREAMING_HEARTBEAT_SECONDS: float = _read("STREAMING_HEARTBEAT_SECONDS", "float", 15.0)

# Last-active is written at most this often per user (it drives online push).
ACCOUNTS_LAST_ACTIVE_INTERVAL_SECONDS: int = 3600

# --- Security -----------------------------------------------------------------
HTTPS: bool = _read("HTTPS", "bool", False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = 31536000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
RATELIMIT_ENABLED: bool = _read("RATELIMIT_ENABLED", "bool", True)

# --- i18n, static -------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Post images (posts.media) go to the "default" storage: files under MEDIA_ROOT
# unless MEDIA_STORAGE_BACKEND names another backend (any django-storages one,
# e.g. storages.backends.s3.S3Storage) with MEDIA_STORAGE_OPTIONS, a JSON object
# of its options. Pages never link to the storage: every image goes through
# posts.media_views, which checks the reader may see the post (README).
MEDIA_ROOT = Path(_read("MEDIA_ROOT", "str", str(BASE_DIR / "media")))
MEDIA_URL = "/media-files/"  # never routed: FileSystemStorage wants one
MEDIA_STORAGE_BACKEND: str = _read(
    "MEDIA_STORAGE_BACKEND", "str", "django.core.files.storage.FileSystemStorage"
)
MEDIA_STORAGE_OPTIONS: dict[str, Any] = _read("MEDIA_STORAGE_OPTIONS", "json", {})
if not isinstance(MEDIA_STORAGE_OPTIONS, dict):
    raise ImproperlyConfigured(
        "Environment variable MEDIA_STORAGE_OPTIONS must be a JSON object such as "
        '{"bucket_name": "feed-media"}'
    )
STORAGES = {
    "default": {"BACKEND": MEDIA_STORAGE_BACKEND, "OPTIONS": MEDIA_STORAGE_OPTIONS},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Uploads above this are spooled to a temporary file, not held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# A post takes 4 images: a request with more files than this is refused (400)
# before any is read.
DATA_UPLOAD_MAX_NUMBER_FILES = 10
WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Calls the cache's breaker skipped are not logged one by one: the failure
    # that paused the server is (feed_project.cache_breaker).
    "filters": {"cache_skips": {"()": "feed_project.cache_breaker.QuietSkips"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": _read("LOG_LEVEL", "str", "WARNING")},
    "loggers": {
        "timelines": {"level": _read("LOG_LEVEL", "str", "INFO")},
        "django_redis.cache": {"filters": ["cache_skips"]},
    },
}
# SQLite cannot make Notification's NULLS NOT DISTINCT constraint; there
# timelines.notifications checks for a duplicate itself (PostgreSQL enforces it).
# The client API's two departures from RFC 9700, both for Mastodon's apps: the
# password grant (refused for accounts with two-factor, rate-limited as a log-in;
# api.oauth), and PKCE optional (Mastodon.py and older apps send no challenge).
SILENCED_SYSTEM_CHECKS = ["models.W047", "oauth2_provider.W002", "oauth2_provider.W010"]


# --- Rate limits and Content-Security-Policy (feed_project/ratelimits.py) -----
# Each limited action has a per-user and a per-IP rate, "COUNT/PERIOD" with
# PERIOD one of s, m, h, d (django-ratelimit's syntax: "20/m", "100/h",
# "5/10m"), each overridable by the environment variable of the same name; an
# empty value switches that one limit off. Only POSTs count. Sign-up has no
# user yet: its "user" rate is off. Log-in's "user" rate is per username
# typed, so one account cannot be guessed at from many addresses.
# "follow" covers every change to the graph: (un)follow, (un)block, (un)mute;
# "like" covers like, unlike, repost and unrepost; "post" covers posts and replies.
# RATELIMIT_ENABLED=0 (read above) switches every limit off. The counters live
# in the default cache: Redis when REDIS_URL is set (shared by all workers; a
# Redis outage fails open), else per-process memory.
def _rate(name: str, default: str) -> str:
    """A rate such as "20/m" (or "" for no limit); anything else stops start-up."""
    value: str = _read(name, "str", default).strip()
    if value and not re.fullmatch(r"[1-9][0-9]*/[0-9]*[smhd]", value):
        raise ImproperlyConfigured(
            f"Environment variable {name} must be a rate such as 20/m or 100/h, not {value!r}"
        )
    return value


RATELIMIT_RATES: dict[str, tuple[str, str]] = {
    # action: (per-user rate, per-IP rate)
    # The client API, every request (Mastodon's budget): per token, and per IP for
    # requests without one.
    "api": (_rate("RATELIMIT_API", "300/5m"), _rate("RATELIMIT_API_IP", "300/5m")),
    "post": (_rate("RATELIMIT_POST", "30/m"), _rate("RATELIMIT_POST_IP", "120/m")),
    "follow": (_rate("RATELIMIT_FOLLOW", "60/m"), _rate("RATELIMIT_FOLLOW_IP", "240/m")),
    "like": (_rate("RATELIMIT_LIKE", "120/m"), _rate("RATELIMIT_LIKE_IP", "480/m")),
    "signup": ("", _rate("RATELIMIT_SIGNUP_IP", "10/h")),
    "login": (_rate("RATELIMIT_LOGIN", "10/m"), _rate("RATELIMIT_LOGIN_IP", "30/m")),
    # Per address typed, whoever types it: one inbox cannot be flooded with resets.
    "password_reset": (
        _rate("RATELIMIT_PASSWORD_RESET", "5/h"),
        _rate("RATELIMIT_PASSWORD_RESET_IP", "20/h"),
    ),
    # The log-in's second step: per account waiting for its code, and per IP.
    # Six digits are a million codes: 10 guesses a minute take months.
    "twofactor": (_rate("RATELIMIT_TWOFACTOR", "10/m"), _rate("RATELIMIT_TWOFACTOR_IP", "30/m")),
    # Asking for a verification mail again, changing the e-mail, making invites.
    "account_mail": (
        _rate("RATELIMIT_ACCOUNT_MAIL", "10/h"),
        _rate("RATELIMIT_ACCOUNT_MAIL_IP", "30/h"),
    ),
    # Asking for a data export (each one reads everything the person has).
    "export": (_rate("RATELIMIT_EXPORT", "5/h"), _rate("RATELIMIT_EXPORT_IP", "20/h")),
    # Importing a CSV of follows (each file follows up to IMPORT_FOLLOWS_MAX_ROWS people).
    "import_follows": (
        _rate("RATELIMIT_IMPORT_FOLLOWS", "5/h"),
        _rate("RATELIMIT_IMPORT_FOLLOWS_IP", "20/h"),
    ),
}


# Behind reverse proxies REMOTE_ADDR is the nearest proxy, and each proxy
# appends the address it got the request from to X-Forwarded-For. Only the
# hops added by our own proxies can be believed (a client may send any
# X-Forwarded-For it likes), so per-IP limits take the rightmost address that
# is not one of ours (feed_project.ratelimits.client_ip). TRUSTED_PROXIES is
# either how many proxies stand in front of the site ("1": a load balancer)
# or a comma list of their addresses and networks ("10.0.0.0/8,192.0.2.7").
# Unset or "0": none, the client is REMOTE_ADDR and X-Forwarded-For is ignored.
def _trusted_proxies(name: str) -> int | tuple[IPNetwork, ...]:
    raw: str = _read(name, "str", "").strip()
    if re.fullmatch(r"[0-9]+", raw) or not raw:
        return int(raw or 0)
    try:
        return tuple(ipaddress.ip_network(part.strip()) for part in raw.split(","))
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"Environment variable {name} must be a number of proxies such as 1 or a "
            f"comma list of addresses or networks such as 10.0.0.0/8,192.0.2.7: {exc}"
        ) from exc


TRUSTED_PROXIES: int | tuple[IPNetwork, ...] = _trusted_proxies("TRUSTED_PROXIES")
RATELIMIT_FAIL_OPEN = True

# django-csp 4: no inline script or style anywhere, so no 'unsafe-inline'.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "csp.middleware.CSPMiddleware",
)
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'none'"],
    }
}


# --- Accounts: e-mail, two-factor, sessions, registration ---------------------
# Mail goes through Django's email framework, configured by one URL
# (django-environ's email_url): smtp://user:pass@host:587 (smtp+tls://,
# smtp+ssl:// for TLS), consolemail:// to print mails (the default, so
# `make run` needs no mail server), dummymail:// to drop them.
EMAIL_URL: str = _read("EMAIL_URL", "str", "consolemail://")
try:
    _email_config = environ.Env.email_url_config(EMAIL_URL)
except Exception as exc:  # environ raises bare errors on junk
    raise ImproperlyConfigured(f"Environment variable EMAIL_URL is not valid: {exc}") from exc
if not _email_config.get("EMAIL_BACKEND"):
    raise ImproperlyConfigured(
        "Environment variable EMAIL_URL must be a mail URL such as smtp://127.0.0.1:1025 "
        "or consolemail://"
    )
EMAIL_BACKEND: str = _email_config["EMAIL_BACKEND"]
EMAIL_HOST: str = _email_config["EMAIL_HOST"] or "localhost"
EMAIL_PORT: int = _email_config["EMAIL_PORT"] or 25
EMAIL_HOST_USER: str = _email_config["EMAIL_HOST_USER"] or ""
EMAIL_HOST_PASSWORD: str = _email_config["EMAIL_HOST_PASSWORD"] or ""
EMAIL_USE_TLS: bool = bool(_email_config.get("EMAIL_USE_TLS"))
EMAIL_USE_SSL: bool = bool(_email_config.get("EMAIL_USE_SSL"))
# A mail server that hangs must not hold a worker for ever.
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL: str = _read("DEFAULT_FROM_EMAIL", "str", "Feed <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# When on, an account whose e-mail is not verified may read but not post.
# Off by default: the demo world of `make run` has no mailbox behind it.
REQUIRE_EMAIL_VERIFICATION: bool = _read("REQUIRE_EMAIL_VERIFICATION", "bool", False)
# How long a verification link works; reset links use PASSWORD_RESET_TIMEOUT.
EMAIL_VERIFICATION_MAX_AGE_SECONDS: int = _read(
    "EMAIL_VERIFICATION_MAX_AGE_SECONDS", "int", 3 * 24 * 3600
)
PASSWORD_RESET_TIMEOUT: int = _read("PASSWORD_RESET_TIMEOUT", "int", 3 * 3600)
# Staff must set up two-factor before the admin lets them in.
REQUIRE_2FA_FOR_MODERATORS: bool = _read("REQUIRE_2FA_FOR_MODERATORS", "bool", False)
# The sessions page's "last seen" is written at most this often per session.
ACCOUNTS_SESSION_TOUCH_SECONDS: int = 300
# open | approval (a moderator approves each account in the admin) |
# invite (a valid invite link is needed) | closed.
REGISTRATION_MODES = ("open", "approval", "invite", "closed")
REGISTRATION_MODE: str = _read("REGISTRATION_MODE", "str", "open").strip().lower()
if REGISTRATION_MODE not in REGISTRATION_MODES:
    raise ImproperlyConfigured(
        f"Environment variable REGISTRATION_MODE must be one of {', '.join(REGISTRATION_MODES)}, "
        f"not {REGISTRATION_MODE!r}"
    )
# Days between "delete my account" and its erasure; logging in before cancels.
# 0 erases at once (through the task).
ACCOUNT_DELETION_GRACE_DAYS: int = _read("ACCOUNT_DELETION_GRACE_DAYS", "int", 30)
if ACCOUNT_DELETION_GRACE_DAYS < 0:
    raise ImproperlyConfigured(
        "Environment variable ACCOUNT_DELETION_GRACE_DAYS must be 0 or more days, "
        f"not {ACCOUNT_DELETION_GRACE_DAYS!r}"
    )
# Accounts whose grace is over are erased by this sweep (an index-free scan of
# the few rows with deletion_due_at set; hourly is plenty for a 30-day grace).
CELERY_BEAT_SCHEDULE["erase-due-accounts"] = {
    "task": "accounts.erase_due_accounts",
    "schedule": 3600.0,
}
# Data exports (accounts/exports.py): an archive is kept this many days, and
# the link the export page gives works this many seconds (a fresh one at each
# visit). The hourly sweep deletes archives past their days.
EXPORT_RETENTION_DAYS: int = _read("EXPORT_RETENTION_DAYS", "int", 7)
EXPORT_LINK_MAX_AGE_SECONDS: int = _read("EXPORT_LINK_MAX_AGE_SECONDS", "int", 3600)
for _name in ("EXPORT_RETENTION_DAYS", "EXPORT_LINK_MAX_AGE_SECONDS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"Environment variable {_name} must be 1 or more")
CELERY_BEAT_SCHEDULE["delete-expired-exports"] = {
    "task": "accounts.delete_expired_exports",
    "schedule": 3600.0,
}
# Trending tags (posts/tags.py): the last 24 hours' tags by distinct authors,
# computed into a ten-row table; pages only read it. Every 5 minutes: one
# GROUP BY over a day of tag rows (every shard), cheap, and fresh enough.
CELERY_BEAT_SCHEDULE["compute-trending-tags"] = {
    "task": "posts.compute_trending",
    "schedule": 300.0,
}
# Staff without a second factor are kept out of the admin when that is required.
# After the messages middleware: it tells them why.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.messages.middleware.MessageMiddleware") + 1,
    "accounts.middleware.ModeratorTwoFactorMiddleware",
)
