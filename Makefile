# make run: install, migrate, seed the demo world, say how to point a Mastodon app at it,
#   serve with uvicorn on 127.0.0.1:$(PORT), 8000 unless set (SQLite, no Redis).
# make test: install, lint, Chromium and npm's dev tools, whole suite on PostgreSQL + Redis,
#   the cache suites on a Redis Cluster (make test-redis-cluster), then a smoke run on SQLite.
# make test-citus: the whole suite on a local Citus cluster (needs the citus extension).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/feed_test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# The Citus run's Redis database: another one, so that it and make test may run
# side by side without clearing each other's caches mid-test.
CITUS_REDIS_URL ?= redis://127.0.0.1:6379/14

.PHONY: install run test test-redis-cluster test-citus lint smoke clean chromium wrk npm-tools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# Local development only: a public key, since the settings refuse to start
# without SECRET_KEY when DEBUG is off. A SECRET_KEY in the environment wins.
DEV_ENV := SECRET_KEY="$${SECRET_KEY:-django-insecure-make-run-local-development-key-0123456789}"

# PORT=8001 make run serves on another port, with uvicorn (the ASGI server: the pages
# run in Django's thread pool, the live streams as async views). WhiteNoise warns at
# start-up when STATIC_ROOT is missing (the files come from the finders here).
PORT ?= 8000

run: install
	@mkdir -p staticfiles
	$(DEV_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEV_ENV) $(BIN)/python manage.py seed_demo
	@printf '%s\n' "" \
		"Mastodon apps: point one at http://127.0.0.1:$(PORT) and sign in as demo / demo-password-123" \
		"(plain http: tests and local use only). With Mastodon.py, in another shell:" \
		"  $(BIN)/python -c \"from mastodon import Mastodon as M; b='http://127.0.0.1:$(PORT)'; a=M.create_app('mine', api_base_url=b, scopes=['read','write']); m=M(client_id=a[0], client_secret=a[1], api_base_url=b); m.log_in('demo', 'demo-password-123', scopes=['read','write'], allow_http=True); print([s['content'] for s in m.timeline_home(limit=3)])\"" \
		"What works, the ids, and the code flow for phone and browser apps: docs/API.md." ""
	$(DEV_ENV) $(BIN)/uvicorn feed_project.asgi:application --host 127.0.0.1 --port $(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# The browser tests drive Debian's chromium (browsers cannot be downloaded here);
# a CJK font lets the screenshots show Chinese posts as text, not boxes.
BROWSER_PACKAGES := chromium fonts-wqy-zenhei

chromium:
	@(command -v chromium >/dev/null && dpkg -s $(BROWSER_PACKAGES) >/dev/null 2>&1) \
		|| (echo "Installing Debian's $(BROWSER_PACKAGES) for the browser tests..." \
		&& apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null) \
		|| { echo "make test: Debian's packages '$(BROWSER_PACKAGES)' are missing and apt-get" \
		"could not install them (run 'apt-get install $(BROWSER_PACKAGES)' as root);" \
		"the browser tests need /usr/bin/chromium." >&2; exit 1; }

# npm's dev tools, pinned by package-lock.json: axe-core, the accessibility check
# of the browser tests (tests/browser/test_accessibility.py) runs in the pages, and
# masto, the masto.js client the API's tests drive with node (tests/api/js/).
# The site loads no npm package.
npm-tools:
	@(test -f node_modules/axe-core/axe.min.js && test -f node_modules/masto/package.json) \
		|| npm ci --no-audit --no-fund --loglevel=error \
		|| { echo "make test: 'npm ci' could not install axe-core and masto (apt-get install npm)." >&2; exit 1; }

# manage.py bench_http drives the pages with Debian's wrk (a dev tool; make test
# does not need it).
wrk:
	@command -v wrk >/dev/null \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) \
		|| { echo "bench_http needs Debian's wrk: run 'apt-get install wrk' as root." >&2; exit 1; }

test: install lint chromium npm-tools
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python scripts/check_services.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) RATELIMIT_ENABLED=0 \
		$(BIN)/pytest -p no:cacheprovider
	$(MAKE) test-redis-cluster
	$(MAKE) smoke

# The suites that use the caches, with the whole site's cache on a Redis Cluster
# of three masters started for the run (tests/private_redis.py); the broker stays
# a single Redis (Celery's Redis transport does not speak Cluster).
REDIS_CLUSTER_SUITE := tests/timelines/test_feed_invariant.py tests/timelines/test_feed_rules.py \
	tests/timelines/test_cache_list.py \
	tests/timelines/test_home_view.py tests/timelines/test_new_posts_endpoint.py \
	tests/timelines/test_trim_sweep.py tests/feed_project/test_ratelimits.py

test-redis-cluster: install
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_REDIS_URL) RATELIMIT_ENABLED=0 \
		$(BIN)/python -m tests.private_redis cluster -- \
		$(BIN)/pytest -p no:cacheprovider $(REDIS_CLUSTER_SUITE)

# The whole suite on a throwaway Citus cluster (a coordinator and two workers on
# loopback ports) when the citus extension is installed; exit 2 when it is not.
# CI does not run it: docs/SCALING.md records its last run. The whole suite
# includes the browser tests and the masto.js ones, hence chromium and npm-tools (run 9
# erred without them).
test-citus: install chromium npm-tools
	REDIS_URL=$(CITUS_REDIS_URL) scripts/citus_cluster.sh test

# The embedded default (no environment): SQLite, no Redis, eager Celery.
smoke: install
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL RATELIMIT_ENABLED=0 \
		$(BIN)/pytest -p no:cacheprovider -m embedded

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
