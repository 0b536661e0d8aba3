"""The episode tracker (monitor/events/episodes.py): a repeating failure begins one episode."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.events.episodes import Episode

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def test_an_episode_begins_at_its_first_failure_only() -> None:
    first, began = Episode().fail(NOON)
    again, began_again = first.fail(NOON + timedelta(seconds=5))
    assert (began, began_again) == (True, False)
    assert again == first == Episode(NOON)
    assert again.active


def test_an_episode_ends_with_a_success_and_says_how_long_it_lasted() -> None:
    ended, lasted = Episode(NOON).recover(NOON + timedelta(seconds=12))
    assert (ended, lasted) == (Episode(), 12.0)
    assert ended.recover(NOON + timedelta(seconds=13)) == (Episode(), None)


def test_a_failure_after_recovery_begins_a_new_episode() -> None:
    episode = Episode()
    began = []
    for at, ok in [(0, False), (1, False), (2, True), (3, True), (4, False), (5, False)]:
        moment = NOON + timedelta(seconds=at)
        if ok:
            episode, _ = episode.recover(moment)
        else:
            episode, new = episode.fail(moment)
            began.append(new)
    assert began == [True, False, True, False]
