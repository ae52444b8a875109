"""Mastodon's paging parameters as the site's cursors, without a database."""

import pytest

from api.paging import MAX_LIMIT, PageQuery
from feed_project.pagination import Cursor
from feed_project.refusals import Invalid
from posts import ids

pytestmark = pytest.mark.embedded

KEYS = [ids.make_timeline_key(ids.KeyParts(time=t, author=7, seq=0)) for t in (10, 20, 30)]
LOW, MID, HIGH = KEYS
NUMBER = {key: ids.decimal_of_key(key) for key in KEYS}


@pytest.mark.parametrize(("asked", "size"), [(10000, MAX_LIMIT), (40, 40), (0, 1), (-5, 1)])
def test_limit_is_cut_to_what_mastodon_allows(asked, size):
    assert PageQuery(limit=asked).size == size


def test_each_parameter_is_the_cursor_mastodon_means():
    assert PageQuery().cursor() == Cursor()
    assert PageQuery(max_id=NUMBER[HIGH]).cursor() == Cursor(before=HIGH)
    # since_id: the newest above it, so the scan runs down from the top (or max_id).
    assert PageQuery(since_id=NUMBER[LOW]).cursor() == Cursor(before=ids.HIGHEST_KEY, after=LOW)
    assert PageQuery(since_id=NUMBER[LOW], max_id=NUMBER[HIGH]).cursor() == Cursor(
        before=HIGH, after=LOW
    )
    # min_id: the ones just above it, so the scan runs up from it; max_id then cuts.
    both = PageQuery(min_id=NUMBER[LOW], max_id=NUMBER[HIGH])
    assert both.cursor() == Cursor(after=LOW)
    assert both.keep([HIGH, MID], lambda key: key) == [MID]


def test_a_paging_id_that_is_no_number_is_refused():
    with pytest.raises(Invalid):
        PageQuery(max_id="abc").cursor()
