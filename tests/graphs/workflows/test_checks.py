"""The content workflow's model checks share one way of turning a call into a review."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from graphs.events import RunContext
from graphs.workflows.content import a_check, not_checked
from graphs.workflows.verdicts import Refused

CONTEXT = RunContext.outside("check")


class Failing(Exception):
    user_message = "The OpenAI API had a server error (HTTP 500)."


def check_raising(exc: Exception) -> Any:
    async def ask(state: dict[str, Any], context: RunContext) -> Any:
        raise exc
    return a_check("tone", ask)


async def test_a_check_stopped_refused_failed_or_answered() -> None:
    async def reply(state: dict[str, Any], context: RunContext) -> Any:
        return SimpleNamespace(text='{"score": 0.9, "feedback": "fine"}', error=None)

    assert await a_check("facts", reply)({"stopped": "budget"}, CONTEXT) == {
        "facts": not_checked("stopped")}
    assert await check_raising(Refused("Budget used up."))({}, CONTEXT) == {
        "tone": {**not_checked("refused"), "refused": "Budget used up."}}
    assert await check_raising(Failing())({}, CONTEXT) == {"tone": not_checked(
        "the check failed (The OpenAI API had a server error (HTTP 500).)")}
    assert await check_raising(ValueError("x"))({}, CONTEXT) == {
        "tone": not_checked("the check failed (ValueError)")}
    assert await a_check("facts", reply)({}, CONTEXT) == {
        "facts": {"score": 0.9, "feedback": "fine"}}
