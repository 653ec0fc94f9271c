"""The figures of a set of outcomes: accuracy, precision and recall, the confusion matrix,
calls and cost, percentiles, the wrong ones; and the terminal's table of them."""

from __future__ import annotations

from bot.evaluation.figures import Figures
from bot.evaluation.labelled import Labelled
from bot.evaluation.running import CallTally, Outcome
from bot.evaluation.table import as_text

CONTRACT = {"n", "accuracy", "per_route", "confusion", "calls", "cost_usd", "p50_ms", "p99_ms",
            "wrong"}


def outcome(line: int, expected: str, got: str, ms: float, cost: float = 0.0,
            text: str = "") -> Outcome:
    tally = CallTally(calls=1, input_tokens=100, output_tokens=10, cost_usd=cost)
    return Outcome(Labelled(line, text or f"message {line}", expected), got, "model",
                   ms / 1000, tally)


def four() -> Figures:
    outcomes = [outcome(4, "notify_now", "full_agent", 40.0, 0.004, "fire\x1b[31m!\nnow"),
                outcome(1, "quick_reply", "quick_reply", 10.0, 0.001),
                outcome(2, "full_agent", "full_agent", 20.0, 0.002),
                outcome(3, "full_agent", "quick_reply", 30.0, 0.003)]
    return Figures.of_outcomes(outcomes, model="openai/gpt-4.1-mini", of=5)


def test_the_figures_of_four_messages() -> None:
    figures = four()
    data = figures.as_json()
    assert set(data) >= CONTRACT
    assert (data["n"], data["accuracy"], data["calls"]) == (4, 0.5, 4)
    assert data["cost_usd"] == 0.01
    assert data["per_route"] == {
        "quick_reply": {"n": 1, "correct": 1, "precision": 0.5, "recall": 1.0},
        "full_agent": {"n": 2, "correct": 1, "precision": 0.5, "recall": 0.5},
        "notify_now": {"n": 1, "correct": 0, "precision": None, "recall": 0.0}}
    assert data["confusion"] == {
        "quick_reply": {"quick_reply": 1, "full_agent": 0, "notify_now": 0},
        "full_agent": {"quick_reply": 1, "full_agent": 1, "notify_now": 0},
        "notify_now": {"quick_reply": 0, "full_agent": 1, "notify_now": 0}}
    assert (data["p50_ms"], data["p99_ms"]) == (20.0, 40.0)  # nearest rank
    assert data["wrong"] == [
        {"line": 3, "text": "message 3", "expected": "full_agent", "got": "quick_reply"},
        {"line": 4, "text": "fire\x1b[31m!\nnow", "expected": "notify_now",
         "got": "full_agent"}]
    assert (data["complete"], data["of"], data["tokens"]) == (
        False, 5, {"input": 400, "output": 40})


def test_no_outcome_at_all_has_no_ratio_and_no_time() -> None:
    data = Figures.of_outcomes([], model="the offline router", of=3).as_json()
    assert (data["n"], data["accuracy"], data["p50_ms"], data["wrong"]) == (0, None, 0.0, [])


def test_the_terminal_table_shows_the_figures_and_the_wrong_ones_cleaned() -> None:
    text = as_text(four())
    assert "openai/gpt-4.1-mini: 4 messages of 5 (stopped early)" in text
    assert "accuracy 50.0% (2/4)" in text
    assert "notify_now      1        0          -     0.0%" in text
    assert "full_agent              1            1            0" in text
    assert "model calls 4, tokens 400 in / 40 out, cost $0.01" in text
    assert "p50 20.0 ms, p99 40.0 ms" in text
    wrong = [line for line in text.splitlines() if line.startswith("    4  ")]
    assert wrong == ["    4  notify_now   full_agent   guest  fire[31m! now"]  # no ESC
