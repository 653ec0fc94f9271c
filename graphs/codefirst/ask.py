"""``ask`` and ``approve``: the owner decides, durably — a question parks the run on a wait.

A question is a wait of the run layer (``RunEvents.park`` records it, the store opens its
``run_waits`` row), so the gateway's buttons, typed answers and ``Runs.resume`` work as for a
graph's ``human_node``. Each round is a step with a fingerprint; picking the revise option
asks what should change, revises, and asks again under the next round's key. When the run
continues and finds its wait answered, the answer is saved as the round's step and taken.

``ask`` gives the whole ``Decision``; ``approve`` gives the approved value (as revised), or
None when it was discarded or expired — the form a pipeline stage wants.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Optional, TypeVar

from graphs.codefirst.codec import from_json, schema, to_json
from graphs.codefirst.runtime import FlowCall, FlowError, FlowRun, current, scoped, within
from graphs.events import EventKind

T = TypeVar("T")
Question = str | Callable[[Any], str]


@dataclass
class Decision(Generic[T]):
    """The owner's decision on ``value`` (as revised): the option picked, who, the feedback."""

    choice: str
    value: T
    approved: bool
    by: str | None = None
    feedback: list[str] = field(default_factory=list)
    expired: bool = False


class AskCall(FlowCall[Any]):
    """A question to the owner not asked yet; awaiting it gives the ``Decision``."""

    kind = "ask"
    name = "ask"

    def __init__(self, question: Question, key: str, input: Any, returns: Any,
                 options: Sequence[str] | None,
                 revise: Callable[[Any, str], Awaitable[Any]] | None, revise_option: str,
                 feedback_question: str, expires_after: float | None, max_rounds: int) -> None:
        self.question = question
        self.ask_key = key
        self.input = input
        self.value_type = returns if returns is not None else Any
        self.returns = Decision[self.value_type]  # type: ignore[name-defined]
        self.options = list(options) if options is not None else (
            ["Approve", revise_option, "Discard"] if revise else ["Approve", "Discard"])
        self.revise, self.revise_option = revise, revise_option
        self.feedback_question, self.expires_after = feedback_question, expires_after
        self.max_rounds = max_rounds

    @property
    def key(self) -> str:
        return self.ask_key

    def _text(self, value: Any) -> str:
        return self.question(value) if callable(self.question) else self.question

    def parts(self) -> dict[str, Any]:
        value = from_json(self.value_type, to_json(self.input))
        return {"question": self._text(value), "input": to_json(self.input),
                "returns": schema(self.value_type), "options": self.options}

    async def run(self) -> Any:  # each round is memoised, not the whole question
        return await self.compute(scoped(self.ask_key))

    async def compute(self, key: str) -> Any:
        run, kind = current(), self.value_type
        value, notes = from_json(kind, to_json(self.input)), list[str]()
        for round_no in range(1, self.max_rounds + 1):
            here = f"{self.ask_key}#{round_no}"
            answer = await _wait(run, here, self._text(value), self.options, value, kind,
                                 self.expires_after)
            if not answer["expired"] and self.revise is not None \
                    and answer["choice"] == self.revise_option:
                answer = await _wait(run, f"{here}/feedback", self.feedback_question, [], value,
                                     kind, self.expires_after)
                if not answer["expired"]:
                    notes.append(str(answer["choice"]))
                    with within(scoped(here + "/")):
                        value = from_json(kind, to_json(await self.revise(value, notes[-1])))
                    continue
            if answer["expired"]:
                return Decision("expired", value, False, None, notes, expired=True)
            choice = str(answer["choice"])
            return Decision(choice, value, bool(self.options) and choice == self.options[0],
                            answer["by"], notes)
        raise FlowError(f"ask {self.ask_key!r}: still revising after {self.max_rounds} rounds")


class ApproveCall(AskCall):
    """A question whose answer is the approved value (as revised), or None."""

    name = "approve"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.returns = Optional[self.value_type]  # noqa: UP045 - built at run time

    async def compute(self, key: str) -> Any:
        decision = await super().compute(key)
        return decision.value if decision.approved else None


def ask(question: Question, *, key: str, input: Any = None, returns: Any = None,
        options: Sequence[str] | None = None,
        revise: Callable[[Any, str], Awaitable[Any]] | None = None,
        revise_option: str = "Revise", feedback_question: str = "What should change?",
        expires_after: float | None = None, max_rounds: int = 10) -> AskCall:
    """Ask the owner about ``input`` and wait (durably) for the ``Decision``.

    ``question`` is text, or a function of the value (as revised). Options default to
    Approve / Revise / Discard (without ``revise``: Approve / Discard); ``approved`` means the
    first option was picked. Picking ``revise_option`` asks what should change, calls
    ``revise(value, feedback)`` (its steps are keyed under this round) and asks again with the
    new value. An expired wait gives ``expired=True``.
    """
    return AskCall(question, key, input, returns, options, revise, revise_option,
                   feedback_question, expires_after, max_rounds)


def approve(question: Question, *, key: str, input: Any = None, returns: Any = None,
            options: Sequence[str] | None = None,
            revise: Callable[[Any, str], Awaitable[Any]] | None = None,
            revise_option: str = "Revise", feedback_question: str = "What should change?",
            expires_after: float | None = None, max_rounds: int = 10) -> ApproveCall:
    """Like ``ask``, but gives the approved value (as revised, typed as ``returns``), or None
    when the owner discarded it or the question expired: ``[s for s in sections if s]``."""
    return ApproveCall(question, key, input, returns, options, revise, revise_option,
                       feedback_question, expires_after, max_rounds)


async def _wait(run: FlowRun, key: str, question: str, options: list[str], value: Any,
                kind: Any, expires_after: float | None) -> dict[str, Any]:
    """One question: its saved answer, the answer that came in, or park the run on it."""
    full = scoped(key)
    replay = run.check(full, {"question": question, "input": to_json(value),
                              "returns": schema(kind), "options": options})
    if replay.done:
        return dict(replay.output)
    signed = replay.fingerprint
    wait_key = f"{full}:{signed.value[:8]}"  # a changed question: a new wait, not the old answer
    wait = run.store.wait(run.run_id, wait_key)
    if wait is not None and wait.status in ("answered", "expired"):
        answer = {"choice": wait.answer, "by": wait.answered_by,
                  "expired": wait.status == "expired"}
        asked = run.store.step(run.run_id, full)
        kept = asked is not None and asked.fingerprint == signed.value  # keep when it was asked
        with run.store.transaction():  # saved and taken together: never taken twice
            if not kept:
                run.steps.begin(full, "ask", signed)
            run.steps.done(full, answer)
            run.store.take(run.run_id, wait_key)
        waited = time.time() - asked.started_at if asked is not None and kept else 0.0
        run.events.emit(EventKind.NODE_END, node=full, step="ask", duration_s=waited,
                        wrote=[full])
        run.events.record()
        return answer
    info = {"run_id": run.run_id, "node": full, "key": wait_key, "question": question,
            "options": options, "expires_at": None if wait is None else wait.expires_at}
    if wait is not None and wait.status == "open":
        raise run.park(info, new=False)
    if wait is not None:
        raise FlowError(f"the question {full!r} was {wait.status}")
    run.store.withdraw(run.run_id, full)  # the same question asked before: now outdated
    info["expires_at"] = None if expires_after is None else time.time() + expires_after
    run.steps.begin(full, "ask", signed, status="waiting")
    raise run.park(info, new=True)
