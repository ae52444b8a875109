"""bench_sizing measures rows it writes and leaves none behind."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from posts.models import Post


# Transactional: on Citus the command commits its rows (a size cannot be read in
# a transaction that wrote), then deletes them.
@pytest.mark.django_db(transaction=True)
def test_bench_sizing_prints_bytes_per_row_and_leaves_nothing_behind():
    out = StringIO()
    call_command("bench_sizing", "--sample", "300", stdout=out)
    output = out.getvalue()
    sizes = dict(re.findall(r"^\| `(\w+)` \| ([\d,]+) \|$", output, re.MULTILINE))
    assert set(sizes) >= {"accounts_user", "posts_post", "timelines_inboxentry", "posts_like"}
    assert all(int(size.replace(",", "")) > 0 for size in sizes.values()), sizes
    assert re.search(
        r"A cached inbox of 800 keys: [\d,]+ bytes of Redis \((quicklist|listpack)\)", output
    )
    assert "| 100,000,000 |" in output
    assert not User.objects.exists() and not Post.objects.exists()


@pytest.mark.django_db
def test_bench_sizing_refuses_a_share_that_is_not_a_fraction():
    with pytest.raises(CommandError, match="active-share"):
        call_command("bench_sizing", "--active-share", "1.5", stdout=StringIO())
