"""The owner's approval of one tool call, asked and waited for durably inside the agent loop.

A call that needs approval (``ToolRegistry.needs_approval``) parks the run with a question
naming the tool, its server and its arguments and the options ``Approve`` / ``Deny``; the
gateway shows them as buttons (console: the word or number), ``/cancel`` and expiry work as
for any wait. The loop's node runs again when the answer comes; its earlier model turns and
tool calls replay from their steps (``graphs.checkpoints``), and the decision is saved as a
step of its own, so it is read once. An approved call is recorded as started before it runs
(``run_once``); found started but not done (a crash in the middle), it is not run again
silently: the owner is asked again, told that it may have run. Each question is its own wait
(its key names the call and the round), so one visit can ask several in turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.config.text import one_name, shown, shown_json
from bot.models.base import ToolCall
from bot.tools.registry import Caller, ToolRegistry, ToolResult
from graphs.checkpoints import NodeSteps
from graphs.graph import Suspend

APPROVE, DENY = "Approve", "Deny"
OPTIONS = [APPROVE, DENY]
EXPIRES_AFTER_S = 24 * 3600.0  # the owner's time to answer
VALUE_CHARS = 300  # an argument value longer than this is cut in the question
ARGUMENTS_CHARS = 2500  # and the whole arguments block

RunOnce = Callable[[str], Awaitable[ToolResult]]  # run the call under this step key, once


async def approved_call(tools: ToolRegistry, call: ToolCall, caller: Caller,
                        steps: NodeSteps | None, key: str, run_once: RunOnce) -> ToolResult:
    """Ask the owner (parking the run), then run the call once if they approve."""
    if steps is None or not caller.message_id:
        # No durable run to wait in, or no message to answer (a scheduled task: nobody would
        # see the question in time): never run it unasked.
        return ToolResult(f"not run: {call.name} needs the owner's approval, which cannot be "
                          "asked here (only while answering a message).", False)
    attempt = 1
    while True:
        decision = _decision(tools, call, caller, steps, f"{key}/approval:{attempt}", attempt)
        if decision == "expired":
            return ToolResult(f"not run: the owner did not answer in time, so {call.name} did "
                              "not run.", False)
        if decision != APPROVE:
            return ToolResult(f"not run: the owner declined {call.name}; it did not run.", False)
        run_key = f"{key}#{attempt}"
        saved = steps.saved(run_key)
        if saved is not None and saved.status == "running":  # in flight at a crash
            attempt += 1
            continue
        return await run_once(run_key)


def _decision(tools: ToolRegistry, call: ToolCall, caller: Caller, steps: NodeSteps,
              key: str, attempt: int) -> str:
    """The owner's saved decision, the answer the node was woken with, or a new question."""
    saved = steps.saved(key)
    if saved is not None and saved.status == "done":
        return str(saved.output["decision"])
    wait_key = steps.prefix + key
    answer = steps.resume_value(None)
    if isinstance(answer, dict) and answer.get("key") == wait_key:
        decision = "expired" if answer.get("expired") else str(answer.get("answer"))
        steps.save(key, "approval", {"decision": decision, "by": answer.get("by")})
        return decision
    raise Suspend(key=wait_key, question=question(tools, call, caller, attempt > 1),
                  options=OPTIONS, expires_at=time.time() + EXPIRES_AFTER_S)


def question(tools: ToolRegistry, call: ToolCall, caller: Caller, again: bool) -> str:
    """The message the owner gets: the tool, its server, who asked, the arguments."""
    tool = tools.tool(call.name)
    server = tool.server if tool is not None else None
    name = tool.own_name if tool is not None else call.name
    # The tool's and the server's names are a server's text and the guest's name is theirs:
    # each shown as typed in a code span (``shown``'s "markdown-code"), never as markup and
    # never as a link: Telegram and Discord make no link of a bare URL in code, and a name
    # cannot close its span and plant one.
    where = f" from the MCP server {shown(server, 'markdown-code')}" if server else ""
    label = shown(name, "markdown-code")
    lines = [f"A call of {label}{where} that you approved was interrupted by a restart; it "
             "may already have run. Run it again?" if again
             else f"May I run the tool {label}{where}?"]
    if not caller.is_owner:
        guest = shown(one_name(caller.name or caller.scope), "markdown-code")
        lines.append(f"Asked for by {guest} (not you).")
    # In a code block the arguments (the model's text, maybe a guest's words) are shown as
    # typed and never linked: JSON keeps every newline escaped, and ``shown_json`` every
    # backtick, so nothing in it can close the fence.
    lines += ["Arguments:", "```json", shown_json(arguments_text(call.arguments)), "```"]
    return "\n".join(lines)


def arguments_text(arguments: dict[str, Any]) -> str:
    """The arguments pretty-printed, long values cut."""
    shown = {key: _cut(value) for key, value in arguments.items()}
    text = json.dumps(shown, indent=2, ensure_ascii=False, default=str) if shown else "(none)"
    return text if len(text) <= ARGUMENTS_CHARS else text[:ARGUMENTS_CHARS] + "\n…(cut)"


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > VALUE_CHARS:
        return value[:VALUE_CHARS] + f"…(+{len(value) - VALUE_CHARS:,} characters)"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    return value
