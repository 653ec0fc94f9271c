"""The offline router on the third held-out set (tests/data/router_heldout_3.jsonl): 400
messages in twenty languages, written by someone who never opened the repository nor saw the
other sets, while issue 39's third round was tuned without it, then read once at the end
(docs/router.md). The figure read then is a floor. Spent since: the fourth round chose its
rules with it as one writer left out (it was never trained on), so what it scores now is a
tune figure, a floor too; 95 % is measured on the fourth set."""

from __future__ import annotations

from tests.models.heldout_sets import DATA, accuracy, assert_eval_format, trained_lines

HELDOUT = DATA / "router_heldout_3.jsonl"
READ_ONCE = 359 / 400  # 89.75 % when the set was read, the one time it was held out
# Lines both writers wrote apart ("😂😂😂", "What time do you open on Saturdays?"): 4 when read.
SHARED_WHEN_READ = 4
TUNED = 387 / 400  # 96.75 % after the fourth round: a tune figure, not a held-out one


def test_the_set_is_in_the_eval_format_with_every_route() -> None:
    assert_eval_format(HELDOUT, 400)


def test_training_takes_in_none_of_its_lines() -> None:
    assert len(trained_lines(HELDOUT)) <= SHARED_WHEN_READ


def test_the_router_keeps_the_figure_read_once() -> None:
    assert accuracy(HELDOUT) >= READ_ONCE


def test_the_router_keeps_the_tuned_figure() -> None:
    assert accuracy(HELDOUT) >= TUNED
