"""The search benchmark: posts.search over a million posts.

Builds (once, then reuses) a world of users and posts in a dedicated
PostgreSQL database, English and Chinese text mixed, and times the search
selector (``posts.search.search_posts``, first page, newest first, with a
signed-in viewer so the block checks run) for English and Chinese queries of
every frequency, beside baselines measured in the same run on the same rows:

- ``icontains``: the plain ``text__icontains`` query Django would write,
  same filters, same order, same limit (what the SQLite fallback does);
- ``trigram`` (``--trigram``): the same ``icontains`` query with a pg_trgm GIN
  index on ``upper(text)``, built inside a transaction that is rolled back.

Figures are milliseconds per call, p50 and p99 over ``samples`` calls after
warm-up, and the CPU a call costs in this process and in its PostgreSQL
backend, with the number of matching rows for scale.
"""

import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from accounts import unique_names
from accounts.models import User
from bench.bulk import Progress, no_progress, write_rows
from bench.timelines import cpu
from bench.words import ENGLISH_WORDS, word_list
from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post
from posts.search import matching_posts, search_people, search_posts

Log = Callable[[str], None]

MARKER = "searchbench_marker"
MARKER_PREFIX = "search world v1"
WINDOW = timedelta(days=60)
# One post in this many is hidden by a moderator, one in this many deleted:
# the index holds them, the query must skip them.
HIDDEN_EVERY = 97
DELETED_EVERY = 89
# One post in this many carries a rare word (English or Chinese): the rare queries.
RARE_EVERY = 20_000
CHINESE_SHARE = 0.4

_CHINESE_WORDS = word_list(
    "今天 天气 微博 系统 咖啡 早上 晚上 朋友 工作 学习 北京 上海 广州 深圳 地铁 公交 "
    "电影 音乐 读书 写字 吃饭 睡觉 跑步 游泳 周末 假期 春天 夏天 秋天 冬天 下雨 下雪 "
    "阳光 月亮 星星 城市 河流 公园 街道 厨房 办公室 想法 计划 梦想 开心 难过 生活 "
    "手机 电脑 代码 程序 发布 修复 问题 新闻 体育 足球 篮球 比赛 老师 学生 大学 "
    "医院 医生 超市 面包 水果 蔬菜 茶叶 小猫 小狗 自行车 火车 飞机 旅行 山 海 湖"
)
_RARE_ENGLISH = "zeppelin"
_RARE_CHINESE = "熊猫"
_CHINESE_PUNCT = ("\uff0c", "\u3002", "\uff01", "", "", "")  # full-width , . !


@dataclass(frozen=True)
class WorldSpec:
    authors: int = 20_000
    posts_per_author: int = 50
    seed: int = 5

    @property
    def posts(self) -> int:
        return self.authors * self.posts_per_author

    @property
    def marker(self) -> str:
        return f"{MARKER_PREFIX} authors={self.authors} posts={self.posts} seed={self.seed}"


FULL = WorldSpec()
QUICK = WorldSpec(authors=200, posts_per_author=10)

ENGLISH_QUERIES = ("coffee", "morning coffee", "running", "release deploy", _RARE_ENGLISH)
CHINESE_QUERIES = ("微博", "咖啡", "北京大学", "今天天气", "猫", _RARE_CHINESE)


def _english(rng: random.Random) -> str:
    text = " ".join(rng.choices(ENGLISH_WORDS, k=rng.randint(4, 16))).capitalize() + "."
    if rng.random() < 0.02:
        text += " Went running today."
    return text


def _chinese(rng: random.Random) -> str:
    # No spaces, as Chinese is written; punctuation now and then.
    parts = []
    for _ in range(rng.randint(4, 14)):
        parts.append(rng.choice(_CHINESE_WORDS))
        parts.append(rng.choice(_CHINESE_PUNCT))
    return "".join(parts) + "。"


def world_exists(spec: WorldSpec) -> bool:
    return User.objects.filter(username=MARKER, bio=spec.marker).exists()


def build_world(spec: WorldSpec, *, log: Log, progress: Progress = no_progress) -> None:
    """Drop any posts and users of an older world and write this one (COPY)."""
    rng = random.Random(spec.seed)
    now = timezone.now()
    first_ms = ids.time_of(now) - WINDOW // timedelta(milliseconds=1)
    window_ms = WINDOW // timedelta(milliseconds=1)
    # Lazy import: the migration module's statements are the indexes to rebuild.
    from importlib import import_module

    search_migration = import_module("posts.migrations.0004_search_document_column")
    with transaction.atomic():
        with connection.cursor() as cursor:
            log("Emptying the bench database's posts and users ...")
            cursor.execute("TRUNCATE posts_post, accounts_user, accounts_usernameclaim CASCADE")
            # Loading into a table without its GIN index, then building it, is
            # several times faster than updating the index row by row.
            cursor.execute("DROP INDEX IF EXISTS post_search_document_idx")
            cursor.execute("DROP INDEX IF EXISTS post_timeline_key_idx")
        users = [
            User(
                username=f"sb_{index}",
                display_name=(
                    f"{rng.choice(_CHINESE_WORDS)}{rng.choice(_CHINESE_WORDS)}"
                    if index % 3 == 0
                    else " ".join(rng.choice(ENGLISH_WORDS).capitalize() for _ in range(2))
                ),
                password="!",
                email="",
                date_joined=now,
                followers_count=rng.randrange(10_000),
                posts_count=spec.posts_per_author,
            )
            for index in range(spec.authors)
        ]
        User.objects.bulk_create(users, batch_size=5000)
        unique_names.claim_bulk((user.pk, user.username, user.email) for user in users)
        author_ids = [user.pk for user in users]

        def rows() -> Iterator[tuple]:
            count = 0
            for author_id in author_ids:
                last_id = None
                times = sorted(
                    first_ms + rng.randrange(window_ms) for _ in range(spec.posts_per_author)
                )
                for ms in times:
                    count += 1
                    last_id = ids.next_post_id(
                        author_id=author_id, now=ids.moment_of(ms), last_post_id=last_id
                    )
                    text = _chinese(rng) if rng.random() < CHINESE_SHARE else _english(rng)
                    if count % RARE_EVERY == 0:
                        text += f" {_RARE_ENGLISH}" if (count // RARE_EVERY) % 2 else _RARE_CHINESE
                    hidden = now if count % HIDDEN_EVERY == 0 else None
                    deleted = now if count % DELETED_EVERY == 0 else None
                    yield (
                        last_id,
                        ids.post_id_to_timeline_key(last_id),
                        author_id,
                        "" if deleted else text,
                        hidden,
                        "moderator" if hidden else "",
                        deleted,
                    )

        fields = (
            *("id", "timeline_key", "author", "text"),
            *("hidden_at", "hidden_reason", "deleted_at"),
        )
        log(f"Writing {spec.posts:,} posts (COPY) ...")
        write_rows(Post, fields, rows(), spec.posts, "posts", progress)
    # After the rows' commit: an index cannot be built on a table with pending
    # (deferred) foreign-key checks, and on Citus each shard has its own.
    # Without the marker, a world left without its indexes is built again.
    log("Building the search indexes ...")
    started = time.monotonic()
    with connection.cursor() as cursor:
        for statement in search_migration.INDEXES:
            cursor.execute(statement)
    log(f"  indexes built in {time.monotonic() - started:.1f} s")
    User.objects.create(username=MARKER, password="!", bio=spec.marker, is_active=False)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE posts_post")
        cursor.execute("VACUUM ANALYZE accounts_user")


@dataclass
class Figure:
    label: str
    query: str
    matches: int
    p50: float
    p99: float
    cpu: float  # ms a call in this process (Django, psycopg, the template)
    db_cpu: float  # ms a call in its PostgreSQL backend


HEADER = f"{'p50 ms':>9} {'p99 ms':>9} {'cpu ms':>8} {'db cpu':>8}"


def row(figure: Figure) -> str:
    """The figure's columns under ``HEADER``."""
    return f"{figure.p50:>9.1f} {figure.p99:>9.1f} {figure.cpu:>8.2f} {figure.db_cpu:>8.2f}"


def _backend_cpu() -> float:
    """CPU seconds so far of this connection's PostgreSQL backend (a local server: /proc)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    return cpu.own_seconds(pid) or 0.0


def timed(label: str, query: str, matches: int, call: Callable[[], object], samples: int) -> Figure:
    """p50 and p99 of ``call`` after 3 warm-up calls, and the CPU a call costs here and in
    PostgreSQL (the machine is shared: CPU holds when the wall clock swings)."""
    for _ in range(3):
        call()
    times = []
    db_before, cpu_before = _backend_cpu(), time.process_time()
    for _ in range(samples):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    own_cpu = (time.process_time() - cpu_before) * 1000 / samples
    db_cpu = (_backend_cpu() - db_before) * 1000 / samples
    times.sort()
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return Figure(label, query, matches, statistics.median(times), p99, own_cpu, db_cpu)


def _icontains_page(query: str) -> list[Post]:
    posts = (
        Post.objects.visible()
        .filter(repost_of__isnull=True, text__icontains=query)
        .select_related("author")
        .order_by("-timeline_key")
    )
    return list(posts[:21])


def run(*, samples: int, trigram: bool, log: Log) -> list[Figure]:
    """Time the selector and the baselines for every query; print as it goes."""
    viewer = User.objects.filter(username="sb_1").first()
    with connection.cursor() as cursor:
        # As production would be: statistics current (autovacuum's job there).
        cursor.execute("ANALYZE posts_post")
        cursor.execute("ANALYZE accounts_user")
    figures: list[Figure] = []

    def measure(label: str, query: str, call: Callable[[], object], matches: int) -> None:
        figure = timed(label, query, matches, call, samples)
        figures.append(figure)
        log(f"  {label:<22} {query:<16} {matches:>9,} {row(figure)}")

    log(f"  {'what':<22} {'query':<16} {'matches':>9} {HEADER}")
    for query in (*ENGLISH_QUERIES, *CHINESE_QUERIES):
        matches = matching_posts(query).count()
        measure(
            "search_posts",
            query,
            lambda q=query: search_posts(query=q, viewer=viewer, cursor=Cursor()),
            matches,
        )
        page = search_posts(query=query, viewer=viewer, cursor=Cursor())
        if page.older:
            measure(
                "search_posts page 2",
                query,
                lambda q=query, c=page.older: search_posts(
                    query=q, viewer=viewer, cursor=Cursor(before=c)
                ),
                matches,
            )
        measure("baseline icontains", query, lambda q=query: _icontains_page(q), matches)
    for query in ("sb_12", "coffee", "微博"):
        measure(
            "search_people",
            query,
            lambda q=query: search_people(query=q, viewer=viewer),
            User.objects.filter(username__icontains=query).count(),
        )
    if trigram:
        log("Building a pg_trgm index on upper(text) (rolled back afterwards) ...")
        with transaction.atomic():
            started = time.monotonic()
            with connection.cursor() as cursor:
                cursor.execute(
                    "CREATE INDEX bench_post_text_trgm_idx ON posts_post "
                    "USING gin (upper(text) gin_trgm_ops)"
                )
                cursor.execute("ANALYZE posts_post")
                cursor.execute("SELECT pg_relation_size('bench_post_text_trgm_idx')")
                trgm_size = cursor.fetchone()[0]
                cursor.execute("SELECT pg_relation_size('post_search_document_idx')")
                fts_size = cursor.fetchone()[0]
            log(
                f"  built in {time.monotonic() - started:.1f} s; trigram index "
                f"{trgm_size / 2**20:.0f} MB, full-text index {fts_size / 2**20:.0f} MB"
            )
            for query in (*ENGLISH_QUERIES, *CHINESE_QUERIES):
                matches = next(f.matches for f in figures if f.query == query)
                measure("trigram icontains", query, lambda q=query: _icontains_page(q), matches)
            transaction.set_rollback(True)
    return figures
