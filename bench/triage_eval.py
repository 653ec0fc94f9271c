"""Bench the offline router on the labelled triage set: accuracy per split and route, speed.

Usage:
    .venv/bin/python bench/triage_eval.py                 # the router (and a model, if set)
    .venv/bin/python bench/triage_eval.py --misses        # also list the test rows it got wrong
    .venv/bin/python bench/triage_eval.py --rules-only    # skip the configured model
    .venv/bin/python bench/triage_eval.py --set my.jsonl  # another set, same format

The set (``tests/data/triage_set.jsonl``) has one JSON object a line: ``text``, ``intent``
(social, question, task, urgent), ``language``, ``split`` (train, tune, test) and, for hard
cases, a ``note``. A message phrased as a question is a *question*, also a polite request
("can you …?"); a model that follows the classify prompt may call those *task* — both go to
the agent, so the route accuracy is the figure that decides what the sender gets. Routes are
taken as for a guest (``choose_route``): urgent → notify_now, social → quick_reply, else
full_agent.

For the offline router (``bot.models.classify_offline``: the never-wrong rules, then the
learned classifier) it prints the route accuracy on each split — train (what it was fitted
on), tune (what chose its settings) and test (never looked at while building it) — next to
the former hand-tuned rules (``bench/legacy_intent_rules.py``) on the same rows, then the
test split in detail, then the time per message (the weights' one-time load apart), as a
ratio to the former rules' time measured in the same run.

When a provider is configured in the environment (``FRONTDESK_MODEL_PROVIDER``,
``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL``, see ``bot/settings.py``), the
small model is asked the classify prompt for every row too (real calls, recorded and priced as
usual); a reply without a readable verdict counts as wrong and is reported as unparsed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.legacy_intent_rules import intent_of as legacy_intent_of  # noqa: E402
from bot.config.prompt_files import load_prompts  # noqa: E402
from bot.config.settings import Settings  # noqa: E402
from bot.models import Model, build_models, classify_offline  # noqa: E402
from bot.models.router import shipped_weights  # noqa: E402
from graphs.workflows.triage import (  # noqa: E402
    CLASSIFY_MAX_TOKENS,
    INTENTS,
    choose_route,
    parse_classification,
)

DEFAULT_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "triage_set.jsonl"
ROUTES = ("quick_reply", "full_agent", "notify_now")
SPLITS = ("train", "tune", "test")
UNPARSED = "unparsed"
TIMING_ROUNDS = 5  # each message is classified this many times for the timing
Row = dict[str, str]


def load_set(path: Path) -> list[Row]:
    """The labelled rows, one JSON object a line (blank lines skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def route_of(intent: str) -> str:
    """The route a guest's message with this intent takes (an unparsed verdict has none)."""
    if intent not in INTENTS:
        return UNPARSED
    return choose_route(intent, 0.9 if intent == "urgent" else 0.3, sender_is_owner=False)


def report(title: str, rows: Sequence[Row], predicted: Sequence[str]) -> float:
    """Print accuracy per intent and route, the confusion matrix, and return overall accuracy."""
    truth = [row["intent"] for row in rows]
    print(f"\n== {title}: {len(rows)} messages")
    _per_label("intent", INTENTS, truth, predicted)
    _per_label("route", ROUTES, [route_of(t) for t in truth], [route_of(p) for p in predicted])
    labels = list(INTENTS) + ([UNPARSED] if UNPARSED in predicted else [])
    print("\nconfusion (rows: label, columns: predicted)")
    print(f"{'':>10}" + "".join(f"{label:>10}" for label in labels))
    pairs = Counter(zip(truth, predicted, strict=True))
    for label in INTENTS:
        print(f"{label:>10}" + "".join(f"{pairs[label, p]:>10}" for p in labels))
    by_language: dict[str, list[bool]] = {}
    for row, guess in zip(rows, predicted, strict=True):
        by_language.setdefault(row["language"], []).append(guess == row["intent"])
    print("\nper language: " + ", ".join(f"{lang} {sum(ok) / len(ok):.0%}"
                                         for lang, ok in sorted(by_language.items())))
    overall = sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(rows)
    print(f"overall intent accuracy: {overall:.1%}")
    return overall


def _per_label(kind: str, labels: Sequence[str], truth: Sequence[str],
               predicted: Sequence[str]) -> None:
    print(f"\naccuracy per {kind} (recall: labelled rows predicted right)")
    for label in labels:
        hits = [p == label for t, p in zip(truth, predicted, strict=True) if t == label]
        if hits:
            print(f"  {label:<12} {sum(hits):>4}/{len(hits):<4} {sum(hits) / len(hits):6.1%}")
    right = sum(t == p for t, p in zip(truth, predicted, strict=True))
    print(f"  {'all':<12} {right:>4}/{len(truth):<4} {right / len(truth):6.1%}")


def print_misses(rows: Sequence[Row], predicted: Sequence[str]) -> None:
    """Every row predicted wrong, with its label, prediction and note."""
    print("\nmisses:")
    for row, guess in zip(rows, predicted, strict=True):
        if guess != row["intent"]:
            note = f"  ({row['note']})" if row.get("note") else ""
            print(f"  [{row['language']}] {row['intent']:>8} -> {guess:<8} {row['text']!r}{note}")


async def classify_with_model(model: Model, prompt: str, rows: Sequence[Row],
                              concurrency: int = 4) -> list[str]:
    """The small model's intent for each row, ``unparsed`` when its reply has no verdict."""
    gate = asyncio.Semaphore(concurrency)

    async def one(text: str) -> str:
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": text}]
        async with gate:
            try:
                reply = await model.complete(messages, max_tokens=CLASSIFY_MAX_TOKENS,
                                             purpose="classify")
            except Exception as error:  # a failed call is a miss, not a crash of the bench
                print(f"  model call failed: {error}", file=sys.stderr)
                return UNPARSED
        parsed = parse_classification(reply.text)
        return parsed[0] if parsed else UNPARSED

    return list(await asyncio.gather(*(one(row["text"]) for row in rows)))


def run_rules(rows: Sequence[Row], classify: Callable[[str], tuple[str, float]]) -> list[str]:
    """The rules' intent for each row."""
    return [classify(row["text"])[0] for row in rows]


def legacy_classify(text: str) -> tuple[str, float]:
    """The former hand-tuned rules, as a classify function."""
    return legacy_intent_of(text), 0.0


def split_table(rows: Sequence[Row],
                classifiers: dict[str, Callable[[str], tuple[str, float]]]) -> None:
    """Route accuracy of each classifier on each split, one line per split and classifier."""
    print(f"\n== route accuracy per split (rows: {len(rows)})")
    print(f"{'split':<6} {'classifier':<14}" + "".join(f"{r:>13}" for r in ROUTES)
          + f"{'all routes':>12}{'intent':>9}")
    for split in SPLITS:
        part = [row for row in rows if row.get("split") == split]
        if not part:
            continue
        for name, classify in classifiers.items():
            truth = [row["intent"] for row in part]
            guess = [classify(row["text"])[0] for row in part]
            cells = []
            for route in ROUTES:
                hits = [route_of(g) == route for t, g in zip(truth, guess, strict=True)
                        if route_of(t) == route]
                cells.append(f"{sum(hits) / len(hits):>8.1%} {len(hits):>4}" if hits else "")
            routes_ok = sum(route_of(t) == route_of(g) for t, g in zip(truth, guess, strict=True))
            intents_ok = sum(t == g for t, g in zip(truth, guess, strict=True))
            print(f"{split:<6} {name:<14}" + "".join(f"{cell:>13}" for cell in cells)
                  + f"{routes_ok / len(part):>12.1%}{intents_ok / len(part):>9.1%}")


def time_per_message(rows: Sequence[Row],
                     classify: Callable[[str], tuple[str, float]]) -> list[float]:
    """Seconds per message, each message timed ``TIMING_ROUNDS`` times (best of them)."""
    times = []
    for row in rows:
        best = float("inf")
        for _ in range(TIMING_ROUNDS):
            start = time.perf_counter()
            classify(row["text"])
            best = min(best, time.perf_counter() - start)
        times.append(best)
    return times


def timing(rows: Sequence[Row]) -> None:
    """The router's time per message, against the former rules' in the same run."""
    start = time.perf_counter()
    shipped_weights.cache_clear()
    shipped_weights()
    load_s = time.perf_counter() - start
    router = time_per_message(rows, classify_offline)
    legacy = time_per_message(rows, legacy_classify)
    longest = max(range(len(rows)), key=lambda i: len(rows[i]["text"]))

    def line(name: str, times: list[float]) -> str:
        ordered = sorted(times)
        return (f"  {name:<14} mean {statistics.fmean(times) * 1e6:7.0f} µs, "
                f"p50 {ordered[len(ordered) // 2] * 1e6:6.0f} µs, "
                f"p99 {ordered[int(len(ordered) * 0.99)] * 1e6:6.0f} µs, "
                f"max {ordered[-1] * 1e6:6.0f} µs")

    print(f"\n== time per message ({len(rows)} messages, best of {TIMING_ROUNDS} each)")
    print(line("router", router))
    print(line("former rules", legacy))
    ratio = statistics.fmean(router) / statistics.fmean(legacy)
    print(f"  router / former rules (mean): {ratio:.2f}")
    print(f"  longest message ({len(rows[longest]['text'])} chars): "
          f"{router[longest] * 1e6:.0f} µs; the weights' one-time load: {load_s * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the labelled JSONL set")
    parser.add_argument("--misses", action="store_true", help="list the test rows missed")
    parser.add_argument("--rules-only", action="store_true", help="skip the configured model")
    args = parser.parse_args()
    rows = load_set(args.set)
    split_table(rows, {"router": classify_offline, "former rules": legacy_classify})
    test = [row for row in rows if row.get("split") == "test"] or rows
    predicted = run_rules(test, classify_offline)
    report("router on the test split (bot.models.classify_offline)", test, predicted)
    if args.misses:
        print_misses(test, predicted)
    timing(rows)
    settings = Settings.from_env(os.environ)
    if args.rules_only or settings.model_provider == "offline":
        print("\n(no model provider configured: only the offline router was measured)")
        return
    small = build_models(settings).small
    answers = asyncio.run(classify_with_model(small, load_prompts()["classify"], test))
    report(f"small model ({settings.model_provider}: {getattr(small, 'name', '?')}), test split",
           test, answers)
    print(f"unparsed replies: {answers.count(UNPARSED)}")
    if args.misses:
        print_misses(test, answers)


if __name__ == "__main__":
    main()
