"""Tasks that only the tests' workers load (``celery worker -I tests.worker_tasks``)."""

import time
from pathlib import Path

from feed_project.celery import app

HOLD_SECONDS = 60


@app.task(name="tests.hold_until")
def hold_until(path: str) -> None:
    """Run until the file ``path`` exists: a task the test ends when it wants."""
    deadline = time.monotonic() + HOLD_SECONDS
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
