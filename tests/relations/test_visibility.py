"""The rules of who may see whom, in every form: the ORM, SQL and a pair check agree.

Hypothesis draws any graph of blocks, follows and mutes among four people
(whatever the services would allow: the rules must hold on any rows) and a
viewer, and each form must pick the same people as the plain model below.
"""

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import User
from feed_project import sharding
from relations import visibility
from relations.models import Block, Followee, Mute
from tests.factories import UserFactory

PEOPLE = 4
pairs = st.sets(
    st.tuples(st.integers(0, PEOPLE - 1), st.integers(0, PEOPLE - 1)).filter(lambda p: p[0] != p[1])
)


@pytest.fixture
def people(db) -> list[int]:
    return [UserFactory().pk for _ in range(PEOPLE)]


def by_sql(fragment: str, viewer_id: int) -> set[int]:
    with connection.cursor() as db:
        db.execute(
            f"SELECT u.id FROM {User._meta.db_table} u WHERE {fragment}", {"viewer": viewer_id}
        )
        return {row[0] for row in db.fetchall()}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(blocks=pairs, follows=pairs, mutes=pairs, viewer=st.integers(0, PEOPLE - 1))
def test_each_rule_picks_the_same_people_in_every_form(people, blocks, follows, mutes, viewer):
    Block.objects.all().delete()
    Followee.objects.all().delete()
    Mute.objects.all().delete()
    Block.objects.bulk_create(
        Block(user_id=people[a], blocked_id=people[b], created_at="2026-01-01T00:00Z")
        for a, b in blocks
    )
    Followee.objects.bulk_create(
        Followee(user_id=people[a], followee_id=people[b], created_at="2026-01-01T00:00Z")
        for a, b in follows
    )
    Mute.objects.bulk_create(
        Mute(user_id=people[a], muted_id=people[b], created_at="2026-01-01T00:00Z")
        for a, b in mutes
    )
    me = people[viewer]
    index = {pk: n for n, pk in enumerate(people)}

    def model(rule) -> set[int]:
        return {pk for pk in people if rule(viewer, index[pk])}

    expected = {
        "blocked": model(lambda v, u: (v, u) in blocks or (u, v) in blocks),
        "followed": model(lambda v, u: v == u or (v, u) in follows),
        "muted": model(lambda v, u: (v, u) in mutes),
    }
    users = User.objects.filter(pk__in=people)
    orm = {
        "blocked": users.filter(visibility.blocked_either_way(me, "pk")),
        "followed": users.filter(visibility.followed_or_self(me, "pk")),
        "muted": users.filter(visibility.muted(me, "pk")),
    }
    # The SQL fragments serve the entries statement, which a cluster does not run.
    sql = (
        {}
        if sharding.on_citus(connection)
        else {
            "blocked": by_sql(visibility.sql_blocked_either_way("u.id"), me),
            "followed": by_sql(visibility.sql_followed_or_self("u.id"), me),
            "muted": by_sql(visibility.sql_muted("u.id"), me),
        }
    )
    for rule, want in expected.items():
        assert set(orm[rule].values_list("pk", flat=True)) == want, rule
        if sql:
            assert sql[rule] & set(people) == want, rule
    assert {pk for pk in people if visibility.is_blocked_either_way(me, pk)} == expected["blocked"]
    for pk in people:
        stands = visibility.where_viewer_stands(me, pk)
        assert stands["viewer_follows"] == ((viewer, index[pk]) in follows)
        assert stands["viewer_blocks"] == ((viewer, index[pk]) in blocks)
        assert stands["blocks_viewer"] == ((index[pk], viewer) in blocks)
        assert stands["viewer_mutes"] == ((viewer, index[pk]) in mutes)
    assert visibility.blocked_among(me, people) == expected["blocked"] - {me}
