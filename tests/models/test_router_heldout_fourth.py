"""The offline router on the fourth held-out set (tests/data/router_heldout_4.jsonl): 480
messages in 27 languages, written by someone who never opened the repository nor saw any other
set or training row, while the fourth round's fifteen writers wrote its training rows apart
from it; read once, after the router was trained and its rules fixed (docs/router.md). Its
figures then are floors: 456 of 480 as the bot routes (``frontdesk eval --offline``, the
figure named before reading), 450 of 480 by the router alone with every sender taken for a
guest."""

from __future__ import annotations

from tests.models.heldout_sets import (
    DATA,
    accuracy,
    accuracy_as_routed,
    assert_eval_format,
    trained_lines,
)

HELDOUT = DATA / "router_heldout_4.jsonl"
READ_ONCE_AS_ROUTED = 456 / 480  # 95.0 %
READ_ONCE_ALONE = 450 / 480  # 93.75 %
# Lines another writer also wrote ("ok", "hi", "?", "👍", "what's on my calendar tomorrow?",
# "早上好☀️"): 6 when read, all routed right. Training must not take in any more of its lines.
SHARED_WHEN_READ = 6


def test_the_set_is_in_the_eval_format_with_every_route() -> None:
    assert_eval_format(HELDOUT, 480)


def test_training_takes_in_none_of_its_lines() -> None:
    assert len(trained_lines(HELDOUT)) <= SHARED_WHEN_READ


def test_the_router_routes_95_percent_as_the_bot_routes() -> None:
    assert accuracy_as_routed(HELDOUT) >= READ_ONCE_AS_ROUTED >= 0.95


def test_the_router_alone_keeps_the_figure_read_once() -> None:
    assert accuracy(HELDOUT) >= READ_ONCE_ALONE
