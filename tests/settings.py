"""The site's settings for the test run, with a test-only SECRET_KEY when none is set.

The product refuses to start without SECRET_KEY when DEBUG is off
(feed_project/settings.py). pytest-django reads the settings before any
conftest runs, so the key is given here; os.environ carries it to the
processes tests start (a Celery worker, ``manage.py`` subprocesses).
"""

import os

if not os.environ.get("SECRET_KEY", "").strip():
    os.environ["SECRET_KEY"] = "django-insecure-test-suite-key-not-for-production-use"

from feed_project.settings import *  # noqa: F403
