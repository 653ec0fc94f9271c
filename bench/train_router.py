"""Train the offline router's weights (``bot/models/router_weights.json``) from the labelled set.

Usage:
    .venv/bin/python bench/train_router.py            # retrain as shipped; compare, write nothing
    .venv/bin/python bench/train_router.py --write    # choose C on the tune rows, write the weights

Multinomial logistic regression (scikit-learn, a dev/bench dependency only: the bot reads the
weights in plain Python, ``bot.models.router``) on the hashed features of
``bot.models.router.features``. The regularisation strength and the class weighting are chosen
by fits to the ``train`` split, scored on the ``tune`` split together with the spent held-out
sets and the eval sample (``TUNE_SETS``, never trained on), by the route accuracy over all
their rows (then the worst route's; the first of equals); the shipped model is then fitted
with them on the ``train`` and ``tune`` splits together. The ``test`` split is never read
here. The fit is deterministic (L-BFGS from zero), so the same set and settings
give the same weights.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The repository instead of bench/, whose telegram.py and email.py would shadow
# python-telegram-bot and the standard library's email (which SciPy's imports reach).
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from bot.models.router import (  # noqa: E402
    INTENTS,
    WEIGHTS_FILE,
    RouterWeights,
    bucket,
    choose_intent,
    features,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SET = ROOT / "tests" / "data" / "triage_set.jsonl"
DEFAULT_OUT = ROOT / "bot" / "models" / WEIGHTS_FILE
# Spent held-out sets and the eval sample, in the eval format ("route"): since the third round
# of issue 39 they help choose C with the tune split (never trained on; docs/router.md).
TUNE_SETS = (ROOT / "tests" / "data" / "router_heldout.jsonl",
             ROOT / "tests" / "data" / "router_heldout_2026-12.jsonl",
             ROOT / "bot" / "evaluation" / "sample.jsonl")
BUCKETS = 2**18  # 67,000 distinct features in training: 2**16 slots made 40 % of them collide
# The grid, narrowed by earlier runs on the tune split: weaker regularisation (C ≥ 10) and
# no class weighting (balanced never did better there).
GRID_C = (10.0, 30.0, 100.0, 300.0)
GRID_CLASS_WEIGHT: tuple[str | None, ...] = (None,)
ROUTE_OF = {"social": "quick_reply", "question": "full_agent", "task": "full_agent",
            "urgent": "notify_now"}
Row = dict[str, str]


def read_rows(path: Path) -> list[Row]:
    """Every row of a JSON Lines set."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def split_rows(path: Path, splits: str) -> list[Row]:
    """The rows of one split (``train``, ``tune`` or ``test``) or of several, joined by ``+``:
    the shipped weights are fitted on ``train+tune`` (since the third round: C is chosen on
    fits to ``train`` alone, then the model is fitted again on both splits with it). Split by
    split, the file read once."""
    rows = read_rows(path)
    return [row for split in splits.split("+") for row in rows if row["split"] == split]


def load_tune_sets() -> list[Row]:
    """The rows of the spent sets (``text`` and ``route``), which help choose C."""
    return [row for path in TUNE_SETS for row in read_rows(path)]


def matrix(texts: Sequence[str], buckets: int) -> csr_matrix:
    """One row of hashed feature values per text (colliding features add up, as at run time)."""
    data: list[float] = []
    columns: list[int] = []
    pointers = [0]
    for text in texts:
        slots: dict[int, float] = {}
        for name, value in features(text).items():
            slot = bucket(name, buckets)
            slots[slot] = slots.get(slot, 0.0) + value
        columns += slots.keys()
        data += slots.values()
        pointers.append(len(data))
    return csr_matrix((data, columns, pointers), shape=(len(texts), buckets))


def fit(rows: Sequence[Row], c: float, class_weight: str | None,
        buckets: int = BUCKETS, splits: str = "train") -> RouterWeights:
    """A fitted model, quantised to the shipped format."""
    model = LogisticRegression(C=c, class_weight=class_weight, max_iter=2000, tol=1e-4)
    # one thread: on a shared machine BLAS threads fight each other (seconds become minutes)
    with threadpool_limits(limits=1):
        model.fit(matrix([row["text"] for row in rows], buckets),
                  [row["intent"] for row in rows])
    order = [list(model.classes_).index(intent) for intent in INTENTS]
    coef = model.coef_[order]  # intents × buckets
    scale = float(np.abs(coef).max()) / 32767 or 1.0
    quantised = np.round(coef.T / scale).astype("<i2")  # bucket-major
    weights = array("h")
    weights.frombytes(quantised.tobytes())
    training = {"C": c, "class_weight": class_weight, "splits": splits, "train_rows": len(rows),
                "scikit_learn": _sklearn_version()}
    return RouterWeights(intents=INTENTS, buckets=buckets, scale=scale,
                         bias=tuple(float(model.intercept_[i]) for i in order),
                         weights=weights, training=training)


def _sklearn_version() -> str:
    import sklearn

    return str(sklearn.__version__)


def route_accuracy(weights: RouterWeights, rows: Sequence[Row]) -> dict[str, float]:
    """Accuracy per route (and ``all``) of the weights' chosen intents on ``rows``."""
    hits: dict[str, list[bool]] = {}
    for row in rows:
        guess = choose_intent(weights.predict(row["text"]))
        route = row.get("route") or ROUTE_OF[row["intent"]]
        ok = ROUTE_OF[guess] == route
        hits.setdefault(route, []).append(ok)
        hits.setdefault("all", []).append(ok)
    return {route: sum(ok) / len(ok) for route, ok in sorted(hits.items())}


def tune(train: Sequence[Row], tune_rows: Sequence[Row]) -> tuple[RouterWeights, dict[str, Any]]:
    """The grid's best on the tune rows (the tune split and the spent sets): all routes first,
    then the worst route.

    (Worst route first, as the second round did, picked a C that lost more than it gained
    on every tune set once the split grew in the third round: docs/router.md.)"""
    best: tuple[tuple[float, float], RouterWeights, dict[str, Any]] | None = None
    for c, class_weight in itertools.product(GRID_C, GRID_CLASS_WEIGHT):
        weights = fit(train, c, class_weight)
        accuracy = route_accuracy(weights, tune_rows)
        key = (accuracy["all"], min(accuracy.values()))
        print(f"  C={c:<6g} class_weight={class_weight!s:<9} tune: " +
              ", ".join(f"{route} {value:.1%}" for route, value in accuracy.items()))
        if best is None or key > best[0]:
            best = (key, weights, {"C": c, "class_weight": class_weight, "tune": accuracy})
    assert best is not None
    return best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--write", action="store_true",
                        help="tune, then write the weights (default: retrain as shipped and "
                             "compare with the shipped weights, writing nothing)")
    args = parser.parse_args()
    train = split_rows(args.set, "train")
    tune_rows = split_rows(args.set, "tune") + load_tune_sets()
    if not args.write:
        shipped = RouterWeights.from_json(args.out.read_text(encoding="utf-8"))
        splits = str(shipped.training.get("splits", "train"))
        again = fit(split_rows(args.set, splits), shipped.training["C"],
                    shipped.training["class_weight"], shipped.buckets, splits)
        weight_gap, bias_gap = compare(shipped, again)
        print(f"retrained as shipped (C={shipped.training['C']:g}): largest weight change "
              f"{weight_gap:.2e}, largest bias change {bias_gap:.2e}")
        if weight_gap > 1e-3 or bias_gap > 1e-3:
            sys.exit("the shipped weights are not what the script trains: retrain with --write")
        return
    print(f"train {len(train)} rows, tune {len(tune_rows)} rows; grid:")
    _, chosen = tune(train, tune_rows)
    print(f"chosen: C={chosen['C']:g}, class_weight={chosen['class_weight']}; fitted again on "
          "the train and tune splits together")
    # More rows beat a split kept apart once C is chosen: the spent sets gained (docs/router.md)
    weights = fit(split_rows(args.set, "train+tune"), chosen["C"], chosen["class_weight"],
                  splits="train+tune")
    args.out.write_text(weights.to_json(), encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")


def compare(shipped: RouterWeights, again: RouterWeights) -> tuple[float, float]:
    """How far retrained weights are from the shipped ones: largest weight and bias change."""
    old = np.frombuffer(shipped.weights.tobytes(), dtype="<i2") * shipped.scale
    new = np.frombuffer(again.weights.tobytes(), dtype="<i2") * again.scale
    weight_gap = float(np.abs(old - new).max())
    bias_gap = max(abs(a - b) for a, b in zip(shipped.bias, again.bias, strict=True))
    return weight_gap, bias_gap


if __name__ == "__main__":
    main()
