"""The cached home page in a loop: p50, p99 and CPU per call, to compare two trees.

    DATABASE_URL=... REDIS_URL=... python -m bench.home_loop [LABEL]

Reads ``bench_reader``'s page 1 and page 5 of a ``bench_timelines`` world,
600 calls each after 50 warm-up calls. Run it from two checkouts in turn
against their own databases to compare them in the same hour.
"""

import os
import statistics
import sys
import time

import django


def main(label: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")
    django.setup()
    from accounts.models import User
    from feed_project.pagination import Cursor
    from timelines.feed import home_feed

    reader = User.objects.get(username="bench_reader")
    deep = Cursor()
    for _ in range(4):
        deep = Cursor(before=home_feed(reader=reader, cursor=deep).older)
    figures = {}
    for name, cursor in (("page 1", Cursor()), ("page 5", deep)):
        for _ in range(50):
            home_feed(reader=reader, cursor=cursor)
        times, started = [], time.process_time()
        for _ in range(600):
            start = time.perf_counter()
            home_feed(reader=reader, cursor=cursor)
            times.append(time.perf_counter() - start)
        cpu = (time.process_time() - started) / 600
        p99 = sorted(times)[round(0.99 * (len(times) - 1))]
        figures[name] = (
            f"p50 {statistics.median(times) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
            f"cpu {cpu * 1000:.2f} ms"
        )
    print(label, figures)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
