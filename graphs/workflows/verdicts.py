"""How a workflow tells a model's answer from a non-answer: a refused call, a missing verdict.

A refused call (the daily budget) comes back as a reply whose ``refused`` says why; its text is
the offline assistant's and is never content. ``StopOnRefusal`` wraps a model so such a reply
raises ``Refused`` instead, through the tool loop and code-workflow ``agent`` steps alike; the
workflow catches it, says so and stops. ``NeedsVerdict`` wraps a checking model so a reply that
gives no verdict (none in it, the offline assistant's, a failed call) raises ``NoVerdict``: the
check is then *not checked*, never a pass.

Usage::

    big = StopOnRefusal(deps.big)
    try:
        result = await deps.loop(big, messages, tools, caller)
    except Refused as refused:
        return {"stopped": refused.reason}
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from graphs.protocols import chosen_model

NO_VERDICT = "the model gave no verdict"
OFFLINE = "the model was offline"


class Refused(Exception):
    """A model call was refused (the daily budget); ``reason`` is the sentence saying why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NoVerdict(Exception):
    """A check's reply gave no verdict; ``why`` says what happened, for "not checked — why"."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def refusal(reply: Any) -> str | None:
    """Why the call that gave ``reply`` was refused, or None if it was answered."""
    reason = getattr(reply, "refused", None)
    return str(reason) if reason else None


def offline(reply: Any) -> bool:
    """The reply (or every turn of a loop result) came from the offline assistant."""
    providers = getattr(reply, "providers", None)
    if providers:
        return "offline" in providers
    return getattr(reply, "provider", None) == "offline"


class StopOnRefusal:
    """A model whose refused replies raise ``Refused``; every other reply passes through."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:  # name, provider, role: the wrapped model's
        if name == "model":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)

    def model_for(self, platform: str, chat_id: str) -> StopOnRefusal:
        """The same wrapper around the wrapped model as this chat chose it (``/model``)."""
        chosen = copy.copy(self)
        chosen.model = chosen_model(self.model, (platform, chat_id))
        return chosen

    async def complete(self, messages: Any, **options: Any) -> Any:
        """The wrapped model's reply, unless the call was refused."""
        reply = await self.model.complete(messages, **options)
        if (reason := refusal(reply)) is not None:
            raise Refused(reason)
        return reply


class NeedsVerdict(StopOnRefusal):
    """A checking model: a reply without a verdict (``has_verdict`` is false) raises NoVerdict."""

    def __init__(self, model: Any, has_verdict: Callable[[str], bool]) -> None:
        super().__init__(model)
        self.has_verdict = has_verdict

    async def complete(self, messages: Any, **options: Any) -> Any:
        """The reply if it is a verdict from a model; NoVerdict or Refused otherwise."""
        try:
            reply = await super().complete(messages, **options)
        except Refused:
            raise
        except Exception as exc:  # a failed check is a check that did not run
            why = getattr(exc, "user_message", None) or str(exc) or type(exc).__name__
            raise NoVerdict(f"the check failed ({why})") from None
        if offline(reply):
            raise NoVerdict(OFFLINE)
        if not self.has_verdict(str(reply.text)):
            raise NoVerdict(NO_VERDICT)
        return reply
