"""Score the offline router on each writer it never saw: leave one writer's rows out, fit on
the rest, route that writer's rows.

Usage:
    .venv/bin/python bench/router_writers.py                  # C as shipped, every writer
    .venv/bin/python bench/router_writers.py --c 30 --c 100   # compare settings
    .venv/bin/python bench/router_writers.py --writer asia    # one fold

A held-out set can be read once; this is what can be run as often as needed between reads.
The labelled set's fourth-round rows (``note`` starting ``round 4, <writer>``) were written by
separate writers who saw neither each other's rows nor the held-out sets, each for a slice
(a family of languages, short messages, hard cases): leaving one out asks how the router does
on a voice it has not seen, which is what a new held-out set asks. The spent held-out sets
are folds too (they are never trained on). Each fold's model is fitted on the ``train`` and
``tune`` splits (as the shipped one) minus that writer, with ``bench/train_router.py``'s fit,
and routes as ``classify_offline`` does (the rules, then the learned classifier); the
``test`` split is never read. Figures are route accuracy, the sender ignored (guest), as
``tests/models/heldout_sets.py`` measures; a fold takes about a minute on a shared core.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:  # bench/email.py and bench/telegram.py would shadow real packages
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.train_router import ROUTE_OF, fit, read_rows, split_rows  # noqa: E402
from bot.models import offline, router  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "data" / "triage_set.jsonl"
SPENT = {"set1": ROOT / "tests" / "data" / "router_heldout.jsonl",
         "set2": ROOT / "tests" / "data" / "router_heldout_2026-12.jsonl",
         "set3": ROOT / "tests" / "data" / "router_heldout_3.jsonl"}
ROUND = "round 4, "
Row = dict[str, str]


def writer_of(row: Row) -> str:
    """The fourth-round writer a row came from, else ``""`` (earlier rounds: always trained)."""
    note = row.get("note", "")
    return note[len(ROUND):].split(":")[0] if note.startswith(ROUND) else ""


def route_accuracy(weights: router.RouterWeights, rows: Sequence[Row]) -> float:
    """The share of rows ``classify_offline`` would route right with ``weights``."""
    right = sum(ROUTE_OF[offline.classify_offline(row["text"], weights)[0]]
                == (row.get("route") or ROUTE_OF[row["intent"]]) for row in rows)
    return right / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c", type=float, action="append", metavar="C")
    parser.add_argument("--writer", action="append", help="only these folds")
    args = parser.parse_args()
    fitted = split_rows(SET, "train+tune")
    writers = sorted({writer_of(row) for row in fitted} - {""})
    folds = args.writer or [*writers, *SPENT]
    for c in args.c or [float(router.shipped_weights().training["C"])]:
        figures = {}
        for fold in folds:
            rows = [row for row in fitted if writer_of(row) != fold]
            held = read_rows(SPENT[fold]) if fold in SPENT else [
                row for row in fitted if writer_of(row) == fold]
            figures[fold] = route_accuracy(fit(rows, c, None), held)
            print(f"C={c:g} {fold:10} {len(held):5} rows  {figures[fold]:6.1%}", flush=True)
        print(f"C={c:g} mean over {len(figures)} writers: "
              f"{statistics.fmean(figures.values()):.1%}")


if __name__ == "__main__":
    main()
