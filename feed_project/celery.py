"""The Celery app: JSON only, configured from Django settings (CELERY_*)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")

app = Celery("feed_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
