"""The figures of an evaluation: accuracy, per-route precision and recall, the confusion
matrix, calls, tokens, cost and time per message, and the messages routed wrong.

``Figures.of(outcomes)`` computes them from what ``running`` measured (the part measured before
a Ctrl-C as well as a whole set); ``as_json`` is the ``--json`` contract: ``{"n", "accuracy",
"per_route": {route: {"n", "correct", "precision", "recall"}}, "confusion": {expected: {got:
count}}, "calls", "cost_usd", "p50_ms", "p99_ms", "wrong": [{"line", "text", "expected",
"got"}]}``, plus what the run was (``model``, ``of``, ``complete``, ``tokens``,
``classified_by_rules``). A ratio with nothing to divide by (no message predicted a route) is
``None``: ``null`` in JSON, ``-`` on the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.evaluation.labelled import ROUTES
from bot.evaluation.running import Outcome


@dataclass(frozen=True)
class RouteFigures:
    """One route: how many messages expected it, got it, and got it rightly."""

    n: int  # expected this route
    predicted: int  # were routed here
    correct: int  # expected it and got it

    @property
    def precision(self) -> float | None:
        return ratio(self.correct, self.predicted)

    @property
    def recall(self) -> float | None:
        return ratio(self.correct, self.n)


@dataclass(frozen=True)
class Figures:
    """Everything the terminal, ``--json`` and the report show."""

    model: str  # what routed: "openai/gpt-4.1-mini", "the offline router"
    of: int  # messages in the set (more than ``n`` when stopped early)
    outcomes: tuple[Outcome, ...]  # in the set's order

    @classmethod
    def of_outcomes(cls, outcomes: Sequence[Outcome], *, model: str, of: int) -> Figures:
        return cls(model, of, tuple(sorted(outcomes, key=lambda outcome: outcome.item.line)))

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def complete(self) -> bool:
        return self.n == self.of

    @property
    def correct(self) -> int:
        return sum(outcome.right for outcome in self.outcomes)

    @property
    def accuracy(self) -> float | None:
        return ratio(self.correct, self.n)

    @property
    def per_route(self) -> dict[str, RouteFigures]:
        return {route: RouteFigures(
            n=sum(o.item.route == route for o in self.outcomes),
            predicted=sum(o.got == route for o in self.outcomes),
            correct=sum(o.right and o.got == route for o in self.outcomes)) for route in ROUTES}

    @property
    def confusion(self) -> dict[str, dict[str, int]]:
        """expected -> got -> how many: every pair of routes, zeros included."""
        matrix = {expected: dict.fromkeys(ROUTES, 0) for expected in ROUTES}
        for outcome in self.outcomes:
            matrix[outcome.item.route][outcome.got] += 1
        return matrix

    @property
    def calls(self) -> int:
        return sum(outcome.tally.calls for outcome in self.outcomes)

    @property
    def input_tokens(self) -> int:
        return sum(outcome.tally.input_tokens for outcome in self.outcomes)

    @property
    def output_tokens(self) -> int:
        return sum(outcome.tally.output_tokens for outcome in self.outcomes)

    @property
    def cost_usd(self) -> float:
        return sum(outcome.tally.cost_usd for outcome in self.outcomes)

    @property
    def by_rules(self) -> int:
        """Messages the offline rules classified for the model: its reply was unreadable, the
        daily budget refused the call, or the provider was down."""
        return sum(outcome.classified_by == "rules" for outcome in self.outcomes)

    def percentile_ms(self, percent: float) -> float:
        """The time per message under which ``percent`` % of them took (nearest rank)."""
        times = sorted(outcome.took_s * 1000 for outcome in self.outcomes)
        if not times:
            return 0.0
        return times[max(0, math.ceil(percent / 100 * len(times)) - 1)]

    @property
    def wrong(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if not outcome.right]

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object (its key names are a contract)."""
        return {
            "n": self.n,
            "accuracy": rounded(self.accuracy),
            "per_route": {route: {"n": f.n, "correct": f.correct,
                                  "precision": rounded(f.precision),
                                  "recall": rounded(f.recall)}
                          for route, f in self.per_route.items()},
            "confusion": self.confusion,
            "calls": self.calls,
            "cost_usd": round(self.cost_usd, 6),
            "p50_ms": round(self.percentile_ms(50), 3),
            "p99_ms": round(self.percentile_ms(99), 3),
            "wrong": [{"line": o.item.line, "text": o.item.text, "expected": o.item.route,
                       "got": o.got} for o in self.wrong],
            "model": self.model,
            "of": self.of,
            "complete": self.complete,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "classified_by_rules": self.by_rules,
        }


def ratio(part: int, whole: int) -> float | None:
    """``part / whole``; None when there is no whole."""
    return part / whole if whole else None


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def percent(value: float | None) -> str:
    """``91.3%``, or ``-`` for a ratio with nothing to divide by."""
    return "-" if value is None else f"{value:.1%}"
