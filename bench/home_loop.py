"""The cached home page in a loop: p50, p99 and CPU per call, to compare two trees.

    DATABASE_URL=... REDIS_URL=... python -m bench.home_loop [LABEL]

Reads ``bench_reader``'s page 1 and page 5 of a ``bench_timelines`` world,
600 calls each after 50 warm-up calls; then again with one of the accounts
the reader follows pulled at read time, as a big account is (a PullAuthor
row while it runs: bench.timelines.reads.one_followee_pulled). Run it from two
checkouts in turn against their own databases to compare them in the same hour.
"""

import os
import statistics
import sys
import time
from contextlib import nullcontext

import django


def main(label: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")
    django.setup()
    from accounts.models import User
    from bench.timelines.reads import one_followee_pulled
    from feed_project.pagination import Cursor
    from timelines.home._page import home_feed

    reader = User.objects.get(username="bench_reader")
    deep = Cursor()
    for _ in range(4):
        deep = Cursor(before=home_feed(reader=reader, cursor=deep).older)

    figures = {}
    for pulled in (False, True):
        with one_followee_pulled(reader.pk) if pulled else nullcontext():
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
                figures[f"{name}{', one followee pulled' if pulled else ''}"] = (
                    f"p50 {statistics.median(times) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
                    f"cpu {cpu * 1000:.2f} ms"
                )
    print(label, figures)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
