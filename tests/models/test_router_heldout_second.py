"""The offline router on the second held-out set (tests/data/router_heldout_2026-12.jsonl):
320 messages written by someone who never opened the repository, while the router of issue
39's second round was tuned without it, then read once at the end (docs/router.md). The
figure read then is a floor. Issue 39's third round used it as a *tune* set (its misses named
the voices the training data lacked; none of its lines was trained on): what it scores now is
a tune figure, kept as a floor too, and the issue's 95 % is measured on a third set."""

from __future__ import annotations

from tests.models.heldout_sets import DATA, accuracy, assert_eval_format, trained_lines

HELDOUT = DATA / "router_heldout_2026-12.jsonl"
READ_ONCE = 296 / 320  # 92.5 % when the set was read, the one time it was held out
# Short everyday lines ("ok cool", "👍", "Bonjour !") that both sets' writers wrote apart:
# 23 when the set was read. Training must not take in any more of its lines.
SHARED_WHEN_READ = 23
# After the third round, which tuned on it, 311 of 320; after the fourth (14,786 rows from
# new writers), 310: tune figures, not held-out ones.
TUNED = 310 / 320


def test_the_set_is_in_the_eval_format_with_every_route() -> None:
    assert_eval_format(HELDOUT, 320)


def test_training_takes_in_none_of_its_lines() -> None:
    assert len(trained_lines(HELDOUT)) <= SHARED_WHEN_READ


def test_the_router_keeps_the_figure_read_once() -> None:
    assert accuracy(HELDOUT) >= READ_ONCE


def test_the_router_keeps_the_tuned_figure() -> None:
    assert accuracy(HELDOUT) >= TUNED
