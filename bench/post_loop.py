"""A page's 20 post fragments in a loop: CPU per page, to compare two trees.

    DATABASE_URL=... REDIS_URL=... python -m bench.post_loop [LABEL]

Renders the ``demo`` reader's home page 1 of a ``bench_http`` world through
``posts.post_html.render_post`` (the viewer's marks, images and reply names
read once), 200 pages after 20 warm-up pages, five times: the best and the
median CPU per page. The kept contents are warm, as on a served page.
"""

import os
import sys
import time

import django


def main(label: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")
    django.setup()
    from accounts.models import User
    from feed_project.pagination import Cursor
    from posts import post_html, selectors
    from timelines.home._page import home_feed

    reader = User.objects.get(username="demo")
    items = home_feed(reader=reader, cursor=Cursor()).items
    marks = selectors.viewer_marks(reader, [item.post for item in items])
    viewer = post_html.viewer(
        user_id=reader.pk,
        liked_ids=marks["liked_ids"],
        reposted_ids=marks["reposted_ids"],
        csrf_token="x" * 64,
        next_path="/",
    )

    def page() -> None:
        for item in items:
            post_html.render_post(
                item.post,
                viewer=viewer,
                reposted_by=item.reposted_by,
                media=marks["post_media"].get(item.post.pk, ()),
                replying_to=marks["reply_names"].get(item.post.in_reply_to_id),
            )

    for _ in range(20):
        page()
    runs = []
    for _ in range(5):
        started = time.process_time()
        for _ in range(200):
            page()
        runs.append((time.process_time() - started) * 1000 / 200)
    runs.sort()
    print(label, f"{len(items)} posts: cpu a page best {runs[0]:.3f} ms, median {runs[2]:.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
