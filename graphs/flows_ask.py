"""``ask``: the owner decides, durably — a question parks the run on a ``run_waits`` row.

The question is written exactly as ``human_node`` writes it (an open row with its key,
question and options, the run marked ``waiting``), so the gateway's buttons, typed answers and
``graphs.durable.resume`` work unchanged. Each round is a step with a fingerprint; picking the
revise option asks what should change, revises, and asks again under the next round's key.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from graphs.flows_codec import canonical, fingerprint, from_json, schema, to_json
from graphs.flows_runtime import FlowError, FlowRun, Suspended, _scope, current, scoped

T = TypeVar("T")


@dataclass
class Decision(Generic[T]):
    """The owner's decision on ``value`` (as revised): the option picked, who, the feedback."""

    choice: str
    value: T
    approved: bool
    by: str | None = None
    feedback: list[str] = field(default_factory=list)
    expired: bool = False


async def ask(question: str | Callable[[Any], str], *, key: str, input: Any = None,
              returns: Any = None, options: Sequence[str] | None = None,
              revise: Callable[[Any, str], Awaitable[Any]] | None = None,
              revise_option: str = "Revise", feedback_question: str = "What should change?",
              expires_after: float | None = None, max_rounds: int = 10) -> Decision[Any]:
    """Ask the owner about ``input`` and wait (durably) for the decision.

    Options default to Approve / Revise / Discard (without ``revise``: Approve / Discard);
    ``approved`` means the first option was picked. Picking ``revise_option`` asks what should
    change, calls ``revise(value, feedback)`` (its steps are keyed under this round) and asks
    again with the new value. An expired wait gives ``expired=True``.
    """
    run = current()
    kind = returns if returns is not None else Any
    picks = list(options) if options is not None else (
        ["Approve", revise_option, "Discard"] if revise else ["Approve", "Discard"])
    value, notes = from_json(kind, to_json(input)), list[str]()
    for round_no in range(1, max_rounds + 1):
        text = question(value) if callable(question) else question
        answer = await _wait(run, f"{key}#{round_no}", text, picks, value, kind, expires_after)
        if not answer["expired"] and revise is not None and answer["choice"] == revise_option:
            answer = await _wait(run, f"{key}#{round_no}/feedback", feedback_question, [], value,
                                 kind, expires_after)
            if not answer["expired"]:
                notes.append(str(answer["choice"]))
                token = _scope.set(scoped(f"{key}#{round_no}/"))
                try:
                    value = from_json(kind, to_json(await revise(value, notes[-1])))
                finally:
                    _scope.reset(token)
                continue
        if answer["expired"]:
            return Decision("expired", value, False, None, notes, expired=True)
        choice = str(answer["choice"])
        return Decision(choice, value, bool(picks) and choice == picks[0], answer["by"], notes)
    raise FlowError(f"ask {key!r}: still revising after {max_rounds} rounds")


async def _wait(run: FlowRun, key: str, question: str, options: list[str], value: Any,
                kind: Any, expires_after: float | None) -> dict[str, Any]:
    """One question: its saved answer, the answer that came in, or park the run on it."""
    full = scoped(key)
    fp, hashes = fingerprint({"question": question, "input": to_json(value),
                              "returns": schema(kind), "options": options})
    done, saved = run.check(full, fp, hashes)
    if done:
        return dict(saved)
    wait_key = f"{full}:{fp[:8]}"  # a changed question is a new wait, never the old answer
    wait = next((w for w in run.store.waits(None, run.run_id) if w.key == wait_key), None)
    if wait is not None and wait.status in ("answered", "expired"):
        answer = {"choice": wait.answer, "by": wait.answered_by,
                  "expired": wait.status == "expired"}
        asked = run.steps.get(run.run_id, full)
        if asked is None or asked.fingerprint != fp:  # keep when it was asked, if recorded
            run.steps.start(run.run_id, full, "ask", fp, hashes)
        run.steps.finish(run.run_id, full, canonical(answer))
        waited = (time.time() - asked.started_at if asked is not None
                  and asked.fingerprint == fp else 0.0)
        run.emit("node_end", node=full, step="ask", duration_s=waited, wrote=[full])
        return answer
    info = {"run_id": run.run_id, "node": full, "key": wait_key, "question": question,
            "options": options, "expires_at": None if wait is None else wait.expires_at}
    if wait is not None and wait.status == "open":
        raise Suspended(info)
    if wait is not None:
        raise FlowError(f"the question {full!r} was {wait.status}")
    run.store.conn.execute("UPDATE run_waits SET status = 'cancelled', answered_at = ? WHERE"
                           " run_id = ? AND node = ? AND status = 'open'",
                           (time.time(), run.run_id, full))  # the same question, now outdated
    info["expires_at"] = None if expires_after is None else time.time() + expires_after
    run.steps.start(run.run_id, full, "ask", fp, hashes, status="waiting")
    run.emit("wait", node=full, key=wait_key, question=question, options=options,
             expires_at=info["expires_at"], delta={},
             frontier={"ready": [], "waiting": {full: wait_key}})
    raise Suspended(info)
