"""A viral post on the home page: bench_reader's cached page 1 when its newest post
has been reposted by N accounts the reader does not follow.

    DATABASE_URL=<a bench_timelines world> REDIS_URL=... python -m bench.viral [reposts] [samples]

Prints p50, p99 and CPU a page, in turn, without the reposts and with them, each
way the entries step can look reposts up: scanned (every repost of the
original, the plain form, forced with FEED_REPOSTS_SCANNED_PER_FOLLOWEE) and as
the engine chooses (probed per person followed, past its threshold). The
reposts are written in a transaction that is rolled back; the two repost
indexes are rebuilt after, so the world's plans are as before the run.
"""

import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")

REPOST_INDEXES = ("post_reposts_idx", "one_live_repost_per_author")
ROUNDS = 2


def main(reposts: int, samples: int) -> None:
    import django

    django.setup()
    from django.db import connection, transaction
    from django.test.utils import override_settings
    from django.utils import timezone

    from accounts.models import User
    from bench.timelines.report import format_ms, measure
    from feed_project.pagination import Cursor
    from posts import ids
    from posts.models import Post
    from relations.selectors import followee_ids
    from timelines.home._page import home_feed

    reader = User.objects.filter(username="bench_reader").first()
    if reader is None:
        raise SystemExit("no bench_timelines world here (no bench_reader): run it first")

    def page() -> None:
        home_feed(reader=reader, cursor=Cursor())

    def timed(label: str) -> None:
        warmup = samples // 10
        started = time.process_time()
        timing = measure(page, samples=samples, warmup=warmup)
        cpu = (time.process_time() - started) / (warmup + samples)
        print(
            f"  {label:44s} p50 {format_ms(timing.p50):>9}  p99 {format_ms(timing.p99):>9}"
            f"  cpu {cpu * 1000:5.2f} ms",
            flush=True,
        )

    original = home_feed(reader=reader, cursor=Cursor()).items[0].post
    seen = {reader.pk, original.author_id, *followee_ids(reader.pk)}
    strangers = list(
        User.objects.exclude(pk__in=seen).order_by("pk").values_list("pk", flat=True)[:reposts]
    )
    now = timezone.now()
    print(
        f"bench.viral: bench_reader follows {reader.following_count:,}; page 1's newest post "
        f"{original.pk} reposted by {len(strangers):,} accounts it does not follow; "
        f"load average {' '.join(f'{n:.2f}' for n in os.getloadavg())}",
        flush=True,
    )
    for _ in range(ROUNDS):
        timed("no reposts")
    with transaction.atomic():
        rows = []
        for author_id in strangers:
            post_id = ids.next_post_id(author_id=author_id, now=now, last_post_id=None)
            key = ids.post_id_to_timeline_key(post_id)
            rows.append(Post(id=post_id, timeline_key=key, author_id=author_id, repost_of=original))
        Post.objects.bulk_create(rows, batch_size=2000)
        Post.objects.with_id(original.pk).update(repost_count=len(rows))
        with connection.cursor() as db:
            db.execute(f"ANALYZE {Post._meta.db_table}")
        for _ in range(ROUNDS):
            with override_settings(FEED_REPOSTS_SCANNED_PER_FOLLOWEE=10**9):
                timed("viral, every repost scanned (plain form)")
            timed("viral, as the engine chooses (probed)")
        transaction.set_rollback(True)
    with connection.cursor() as db:
        for index in REPOST_INDEXES:
            db.execute(f"REINDEX INDEX {index}")
        db.execute(f"ANALYZE {Post._meta.db_table}")
    print(f"  rolled back; {', '.join(REPOST_INDEXES)} rebuilt", flush=True)


if __name__ == "__main__":
    args = [int(arg) for arg in sys.argv[1:3]]
    main(*args, *[50_000, 300][len(args) :])
