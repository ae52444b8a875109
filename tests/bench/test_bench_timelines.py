"""The benchmark command runs end to end on a small world (its figures are not judged here)."""

import os
import subprocess
import sys
from io import StringIO

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from accounts.models import User
from bench import home_loop, viral
from bench.management.commands.bench_timelines import split_database_url
from bench.processes import database_url
from bench.timelines.report import measure_together
from posts.models import Post
from relations.selectors import followee_ids
from timelines.home._models import InboxEntry
from timelines.models import PullAuthor


@pytest.mark.django_db(transaction=True)
def test_bench_timelines_quick_prints_every_figure(capsys):
    out = StringIO()
    # --no-worker: the fan-out runs in process through the task functions;
    # the worker path is exercised by the benchmark itself (docs/BENCHMARKS.md).
    call_command("bench_timelines", "--quick", "--no-worker", stdout=out)
    output = out.getvalue()
    for label in (
        "PostgreSQL: checkpoint_timeout",
        "1. Fan-out of one post to",
        "raw limit: one INSERT ... SELECT",
        "raw limit: one Lua call per chunk",
        "CPU per post (median)",
        "live Redis caches before the post",
        "2. Home feed of bench_reader",
        "CPU/call: app + PostgreSQL + Redis",
        "page 1: home_feed, cache warm",
        "page 1: home_feed, cache dropped",
        "page 5: home_feed, cache warm, one followee pulled",
        "page 5: pull_keys + hydrate",
        "page 5: plain query + hydrate",
        "page 5: plain query, follows as a subquery + hydrate",
        "page 5: its round trips alone",
        "page 1: its cache read alone",
        "page 5: its statements alone",
        "its cache read and its statements alone",
        "page 1: 10x the best plain query asks for a page in",
        "faster than the engine's per-author pull",
        "best plain query",
        "a trim sweep alone:",
        "3. Rebuild of an inactive reader",
        "Inbox.rebuild",
        "Summary",
        "Fan-out lag",
        "Home page 1, cached, p50",
        "Home page 5, cached, p99",
        "Rebuild, p50",
        "4. First page of bench_wide (follows 300 accounts, no inbox)",
        "plain query: author IN followees",
        "plain query, follows as a subquery + hydrate",
        "First page, 300 followees, no inbox, p50",
    ):
        assert label in output
    # The set-based rebuild (one UNION ALL leg per author) writes what Inbox.rebuild does.
    assert "the raw limit wrote the same inbox as Inbox.rebuild: yes" in output
    assert output.count("the two plain forms return the same keys: yes") == 2
    # The measured reader's inbox holds only posts of those it follows, as the
    # engine keeps it (the fan-out figure's filler of inboxes spares it).
    reader = User.objects.get(username="bench_reader")
    authors = InboxEntry.objects.filter(reader_id=reader.pk).values_list("author_id", flat=True)
    assert set(authors) <= {*followee_ids(reader.pk), reader.pk}
    # The fan-out's posts are gone with their inbox rows: the next run measures the
    # world as built, not one whose readers' pages fill up with bench_author's posts.
    author = User.objects.get(username="bench_author")
    assert not Post.objects.filter(author_id=author.pk).exists()
    assert not InboxEntry.objects.filter(author_id=author.pk).exists()
    assert author.posts_count == 0
    # The followee pulled for its figure is pushed again after it.
    assert not PullAuthor.objects.filter(author_id__in=followee_ids(reader.pk)).exists()

    # bench.viral on the same world: its reposts are rolled back.
    reposts = Post.objects.filter(repost_of__isnull=False).count()
    viral.main(reposts=300, samples=10)
    output = capsys.readouterr().out
    assert "reposted by 300 accounts it does not follow" in output
    for label in ("no reposts", "every repost scanned", "as the engine chooses", "rolled back"):
        assert label in output
    assert Post.objects.filter(repost_of__isnull=False).count() == reposts
    assert not Post.objects.filter(repost_count__gt=0, repost_of__isnull=True).exclude(
        pk__in=Post.objects.filter(repost_of__isnull=False).values("repost_of_id")
    )

    # bench.home_loop on the same world, with and without a followee pulled.
    home_loop.main("smoke")
    output = capsys.readouterr().out
    for label in ("page 1", "page 5", "page 1, one followee pulled", "page 5, one followee pulled"):
        assert f"'{label}': 'p50 " in output
    assert not PullAuthor.objects.exists()


def test_database_url_is_taken_off_the_command_line_it_runs_again_with():
    argv = ["manage.py", "bench_timelines", "--quick", "--database-url", "postgres://c:5/x", "-v2"]

    url, rest = split_database_url(argv)

    assert url == "postgres://c:5/x"
    assert rest == ["manage.py", "bench_timelines", "--quick", "-v2"]
    assert split_database_url(["manage.py", "bench_timelines"]) == (
        None,
        ["manage.py", "bench_timelines"],
    )


def test_a_database_url_other_than_the_running_one_is_refused_in_process():
    with pytest.raises(CommandError, match="read when the process starts"):
        call_command("bench_timelines", "--quick", "--database-url", "postgres://elsewhere/x")


def test_a_database_without_tables_gets_a_message_not_a_traceback():
    db = settings.DATABASES["default"]
    server = f"host={db['HOST']} port={db['PORT']} user={db['USER']} dbname=postgres"
    name = f"feed_bench_empty_{os.getpid()}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{name}"
        ran = subprocess.run(
            [sys.executable, "manage.py", "bench_timelines", "--quick", "--database-url", url],
            cwd=settings.BASE_DIR,
            env={**os.environ, "SECRET_KEY": "test-bench-" + "x" * 40, "DEBUG": "0"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
    assert ran.returncode == 1
    assert "has no tables: run manage.py migrate on it first" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.django_db(transaction=True)
def test_redis_instructions_counts_the_servers_work_for_each_cache_operation():
    env = {**os.environ, "DATABASE_URL": database_url(), "SECRET_KEY": "bench-test"}
    run = subprocess.run(
        [sys.executable, "-m", "bench.redis_instructions", "100", "5"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "push of one key to 100 readers (half cached, 100 keys)",
        "removal of that key",
        "page 1 (older, 63 keys)",
        "page 5 (older below the 84th key)",
        "older below a key not cached",
        "newer (21 above the 11th key)",
        "count_newer (the new-posts poll)",
    ]
    counts = [int(line.rsplit(": ", 1)[1].split()[0].replace(",", "")) for line in lines]
    assert all(count > 1000 for count in counts), lines


def test_measured_calls_take_turns_and_keep_their_own_samples():
    """A figure and its baseline are timed in turn, round by round, each with its setup."""
    calls = []

    def call(name):
        return lambda: calls.append(name)

    figure, baseline = measure_together(
        [(call("figure"), call("setup")), (call("baseline"), None)],
        samples=5,
        warmup=1,
        rounds=2,
    )
    warmups, timed = calls[:3], [name for name in calls[3:] if name != "setup"]
    assert warmups == ["setup", "figure", "baseline"]
    assert timed == ["figure"] * 3 + ["baseline"] * 3 + ["figure"] * 2 + ["baseline"] * 2
    assert calls.count("setup") == 1 + 5
    assert len(figure.ms) == len(baseline.ms) == 5
    assert figure.cpu is not None and baseline.cpu is not None
