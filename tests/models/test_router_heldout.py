"""The offline router on messages written apart from its training data
(tests/data/router_heldout.jsonl, committed before any tuning and read once as a held-out set;
spent since, it is a tune set: docs/router.md says how it was read and used). No line of it
may enter the training set, and the shipped router's figure on it may not fall."""

from __future__ import annotations

from tests.models.heldout_sets import DATA, ROUTE_OF, accuracy, rows, trained_lines

HELDOUT = DATA / "router_heldout.jsonl"
ROUTES = {"quick_reply", "full_agent", "notify_now"}
# Read once as held out: 229 of 256 (89.5 %). Since then a tune set (the second round of
# issue 39 chose its data and features looking at it): 246 of 256 (96.1 %), a tune figure,
# not a held-out one (docs/router.md); after the third round, which tuned on it too, 250 of
# 256 (97.7 %); after the fourth, trained on 14,786 rows from new writers, 249 (97.3 %).
# A floor, so the figure cannot fall further.
MEASURED = 249 / 256


def test_the_set_is_large_varied_and_in_the_eval_format() -> None:
    held = rows(HELDOUT)
    assert len(held) >= 200
    assert all(row["text"].strip() and row["route"] in ROUTES for row in held)
    assert all(ROUTE_OF[row["intent"]] == row["route"] for row in held)
    assert {row["route"] for row in held} == ROUTES
    assert len({row["language"] for row in held}) >= 7
    assert sum(row["text"].startswith("Fwd:") for row in held) >= 5
    assert sum(len(row["text"]) > 150 for row in held) >= 5


def test_no_held_out_message_is_in_the_training_set() -> None:
    assert not trained_lines(HELDOUT)


def test_the_shipped_router_keeps_its_measured_figure() -> None:
    assert accuracy(HELDOUT) >= MEASURED
