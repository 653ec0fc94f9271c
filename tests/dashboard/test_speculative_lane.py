"""The run page shows the agent's speculative first turn in a lane of its own: adopted when
full_agent took it, cancelled when the route went elsewhere."""

from __future__ import annotations

from typing import Any

from bot.dashboard.data import read_bars
from bot.dashboard.timeline import timeline
from graphs.runs.records import RunInfo

RUN = RunInfo("r1", "triage", "completed", None, None, {}, 100.0, 102.0)


def event(kind: str, t: float, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "t": t, "run_id": "r1", **fields}


def early_call(t: float, **fields: Any) -> dict[str, Any]:
    call = {"node": "full_agent", "role": "big", "purpose": "agent", "duration_s": 1.5,
            "input_tokens": 900, "output_tokens": 1024, "cost_usd": 0.01, "speculative": True}
    return event("model_call", t, **{**call, **fields})


def fetches(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [event("graph_start", 100.0), event("node_start", 100.0, node="classify_intent"),
            event("node_start", 100.0, node="check_calendar"),
            event("speculation", 100.01, node="full_agent", outcome="started"),
            event("node_end", 100.01, node="check_calendar", duration_s=0.01),
            event("node_end", 100.3, node="classify_intent", duration_s=0.3), *extra]


def test_an_adopted_turn_has_its_own_lane_starting_before_the_agent() -> None:
    bars, _ = read_bars(fetches(
        event("node_start", 100.3, node="full_agent"), early_call(101.51),
        event("speculation", 101.51, node="full_agent", outcome="adopted"),
        event("node_end", 101.52, node="full_agent", duration_s=1.22)), RUN, 103.0)
    [early] = [b for b in bars if b.speculative]
    assert (early.node, early.status) == ("full_agent (speculative)", "adopted")
    agent = next(b for b in bars if b.node == "full_agent")
    assert early.start < agent.start and early.calls[0]["line"].endswith("· speculative · 1.5 s")
    assert agent.calls == early.calls  # the agent's first call is the one it adopted
    lanes = timeline(bars, [], RUN.started_at)["lanes"]
    assert lanes.index("full_agent (speculative)") < lanes.index("full_agent")


def test_a_cancelled_turn_is_drawn_cancelled_with_what_it_was_counted_at() -> None:
    bars, _ = read_bars(fetches(
        event("node_start", 100.3, node="gather"),
        early_call(100.31, cancelled=True, duration_s=0.3),
        event("speculation", 100.31, node="full_agent", outcome="cancelled"),
        event("node_end", 100.31, node="gather", duration_s=0.01)), RUN, 103.0)
    [early] = [b for b in bars if b.speculative]
    assert early.status == "cancelled" and "full_agent" not in {b.node for b in bars}
    assert "900→1024 tokens" in early.calls[0]["line"]
    assert "speculative, cancelled (counted at most)" in early.calls[0]["line"]
