"""Score the offline router, as ``classify_offline`` routes, on the tune sets at once.

Usage:
    .venv/bin/python bench/router_tune.py                 # the shipped weights
    .venv/bin/python bench/router_tune.py --retrain C     # retrain on the train split first
    .venv/bin/python bench/router_tune.py --misses NAME   # and list one set's misses
    .venv/bin/python bench/router_tune.py --file F.jsonl --misses file   # any labelled set too

The sets: the labelled set's ``tune`` split, the spent held-out sets and the eval sample
(docs/router.md). Each figure is a *tune* figure: these sets chose changes, or have been read
(the fourth set, read once at the end of the fourth round, is spent too). Routes as for a
guest.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.train_router import ROUTE_OF, fit, read_rows, split_rows  # noqa: E402
from bot.models import offline, router  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEW_ROWS = "issue 39 round 3"  # the note on this round's rows
SETS = {
    "tune": ROOT / "tests" / "data" / "triage_set.jsonl",
    "tune-old": ROOT / "tests" / "data" / "triage_set.jsonl",
    "set1": ROOT / "tests" / "data" / "router_heldout.jsonl",
    "set2": ROOT / "tests" / "data" / "router_heldout_2026-12.jsonl",
    "set3": ROOT / "tests" / "data" / "router_heldout_3.jsonl",
    "set4": ROOT / "tests" / "data" / "router_heldout_4.jsonl",
    "sample": ROOT / "bot" / "evaluation" / "sample.jsonl",
}


def labelled(name: str) -> list[tuple[str, str]]:
    """(text, route) of one tune set; of the labelled set, only its tune split (``tune-old``:
    without this round's rows, the split the second round measured)."""
    rows = read_rows(SETS[name])
    if name.startswith("tune"):
        rows = [row for row in rows if row["split"] == "tune"
                and (name == "tune" or row.get("note") != NEW_ROWS)]
    return [(row["text"], row.get("route") or ROUTE_OF[row["intent"]]) for row in rows]


def score(name: str, weights: router.RouterWeights | None = None
          ) -> tuple[dict[str, float], list[tuple[str, str, str]]]:
    """Route accuracy per route and overall, and the misses (text, expected, got), by the
    shipped weights or ``weights``."""
    hits: dict[str, list[bool]] = {}
    misses = []
    for text, route in labelled(name):
        got = ROUTE_OF[offline.classify_offline(text, weights)[0]]
        hits.setdefault(route, []).append(got == route)
        hits.setdefault("all", []).append(got == route)
        if got != route:
            misses.append((text, route, got))
    return {r: sum(v) / len(v) for r, v in sorted(hits.items())}, misses


def report(weights: router.RouterWeights) -> dict[str, float]:
    """Print one line per set; return each set's overall figure."""
    overall = {}
    if "tune" in str(weights.training.get("splits", "train")):
        print("(these weights were fitted on the tune split too: its lines below are no "
              "tune figures; --retrain C fits the train split alone)")
    for name in SETS:
        accuracy, misses = score(name, weights)
        overall[name] = accuracy["all"]
        print(f"{name:7} all {accuracy['all']:6.1%}  " + "  ".join(
            f"{r} {v:6.1%}" for r, v in accuracy.items() if r != "all") +
            f"  ({len(misses)} missed)")
    return overall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrain", type=float, metavar="C")
    parser.add_argument("--file", type=Path,
                        help="also score this JSON Lines file (eval format: text, route)")
    parser.add_argument("--misses", choices=[*SETS, "file"])
    args = parser.parse_args()
    if args.file:
        SETS["file"] = args.file
    weights = (fit(split_rows(SETS["tune"], "train"), args.retrain, None) if args.retrain
               else router.shipped_weights())
    report(weights)
    if args.misses:
        for text, expected, got in score(args.misses, weights)[1]:
            print(f"  {expected:>11} → {got:<11} {text[:150]!r}")


if __name__ == "__main__":
    main()
