"""Fixtures the state machines of the feed share (``test_feed_invariant``, ``test_feed_faults``)."""

import pytest
from hypothesis import HealthCheck, Phase, settings

from timelines.home import _pull as pull


def machine_settings(*, examples: int, steps: int) -> settings:
    """Hypothesis's settings for a feed state machine: no deadline (a step runs real
    services), and no "explain" phase: on Python < 3.12 it traces every line of a
    failing example's replays, minutes for this machine."""
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@pytest.fixture
def feed_limits(settings, monkeypatch):
    """Tiny limits, so every path runs: chunks, caps, pull below the inbox (walked
    first, as for thousands of authors), big accounts."""
    monkeypatch.setattr(pull, "WALK_FROM_AUTHORS", 0)
    settings.FEED_PULL_WALK_ROWS_PER_AUTHOR = 1  # a walk that often falls short
    settings.FEED_BIG_ACCOUNT_FOLLOWERS = 2
    settings.FEED_REPOSTS_SCANNED_PER_FOLLOWEE = 5
    settings.FEED_INBOX_CAP = 4  # each example draws 4 or 12 (world)
    settings.FEED_REBUILD_PER_AUTHOR = 2
    settings.FEED_FANOUT_CHUNK = 1
    settings.FEED_TRIM_BATCH = 2
    return settings
