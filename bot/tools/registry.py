"""The tool registry: plain functions become model tools, and a policy says who may call which.

A tool is a function with type hints and a docstring; its JSON schema is derived from them. A
parameter named ``caller`` receives the ``Caller`` and stays out of the schema, so a tool can
keep each person in their own scope. The policy: the owner may use every tool; anyone
else only the tools not marked ``owner_only``. Refusals, unknown tools, bad arguments and a
tool's own exceptions all come back as text (an observation for the model), never as a raise.

Tools from MCP servers (``bot.tools.mcp_client``) join with ``add_remote``: a spec the server gave,
a coroutine that calls it, its server, and whether each call ``needs_approval`` (which the
agent loop asks the owner for, ``bot.tools.approval``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import types
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args, get_origin, get_type_hints

from bot.models.base import ToolSpec

MAX_RESULT_CHARS = 8000
MAX_ARGUMENT_CHARS = 200
JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Caller:
    """Who a tool runs for: their scope (``owner`` or ``<platform>:<id>``), chat and message."""

    scope: str
    is_owner: bool
    platform: str
    chat_id: str
    name: str = ""  # how they call themselves, for notices to the owner
    message_id: str = ""  # the message being answered ("" for a run no message started)
    effect_key: str = ""  # the one tool call this is (run, node visit, call id), for effects


def caller_from_sender(sender: dict[str, Any]) -> Caller:
    """The tool caller for a workflow's plain-dict sender."""
    return Caller(scope=str(sender["scope"]), is_owner=bool(sender["is_owner"]),
                  platform=str(sender["platform"]), chat_id=str(sender["chat_id"]),
                  name=str(sender.get("name") or ""),
                  message_id=str(sender.get("message_id") or ""))


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer as text, whether the tool ran and succeeded, and whether the call was
    a valid action at all (a known tool, allowed, with arguments that fit)."""

    text: str
    ok: bool
    valid: bool = True


@dataclass(frozen=True)
class Tool:
    """A registered function with its spec."""

    fn: Callable[..., Any]
    spec: ToolSpec
    owner_only: bool
    wants_caller: bool
    needs_approval: bool = False
    server: str | None = None  # the MCP server it comes from (None: built in); its ``fn``
    # then takes the arguments as given, as one dict, and gives a ToolResult
    remote_name: str = ""  # the tool's own name on its server

    @property
    def own_name(self) -> str:
        """Its name where it lives: on its MCP server, or as offered (a built-in)."""
        return self.remote_name or self.spec.name


RemoteCall = Callable[[dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolInfo:
    """One line of ``frontdesk tools``: who may use a tool and whether it asks first."""

    name: str
    server: str | None
    tool: str
    users: str  # "owner" or "owner+guests"
    needs_approval: bool


class ToolRegistry:
    """Named tools, the specs a given caller may see, and the policy-checked way to call them."""

    def __init__(self, *, secrets: Sequence[str] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._secrets = [s for s in secrets if s]

    def register(self, fn: Callable[..., Any], *, name: str | None = None,
                 owner_only: bool = False) -> Callable[..., Any]:
        """Add ``fn`` as a tool (returns it, so this also works as a decorator)."""
        spec = spec_from_function(fn, name=name)
        if spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is registered twice")
        wants_caller = "caller" in inspect.signature(fn).parameters
        self._tools[spec.name] = Tool(fn, spec, owner_only, wants_caller)
        return fn

    def add_remote(self, spec: ToolSpec, call: RemoteCall, *, server: str, remote_name: str,
                   guests: bool, needs_approval: bool) -> None:
        """Add a tool of an MCP server under ``spec.name`` (``<server>__<tool>``)."""
        if spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is registered twice")
        self._tools[spec.name] = Tool(call, spec, not guests, False, needs_approval, server,
                                      remote_name)

    def needs_approval(self, name: str, caller: Caller) -> bool:
        """Whether this call waits for the owner's approval (a known tool the caller may use)."""
        tool = self._tools.get(name)
        return tool is not None and tool.needs_approval and self.allowed(name, caller)

    def tool(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def listing(self) -> list[ToolInfo]:
        """Every tool with its server, who may use it and whether it asks first."""
        return [ToolInfo(name, t.server, t.own_name,
                         "owner" if t.owner_only else "owner+guests", t.needs_approval)
                for name, t in self._tools.items()]

    def names(self) -> list[str]:
        """Every registered tool name, in registration order."""
        return list(self._tools)

    def allowed(self, name: str, caller: Caller) -> bool:
        """The policy: owners may call anything; others only tools not marked owner-only."""
        tool = self._tools.get(name)
        return tool is not None and (caller.is_owner or not tool.owner_only)

    def specs_for(self, caller: Caller) -> list[ToolSpec]:
        """The tools offered to the model when it works for ``caller``."""
        return [t.spec for name, t in self._tools.items() if self.allowed(name, caller)]

    async def call(self, name: str, arguments: dict[str, Any], caller: Caller) -> str:
        """Run one tool for ``caller``; every outcome is text."""
        return (await self.invoke(name, arguments, caller)).text

    async def invoke(self, name: str, arguments: dict[str, Any], caller: Caller) -> ToolResult:
        """Like ``call``, also saying whether the tool ran and succeeded."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(f"error: there is no tool named {name!r} (tools: {known}).", False,
                              valid=False)
        if not self.allowed(name, caller):
            return ToolResult(f"not allowed: {name} is only available to the owner.", False,
                              valid=False)
        if tool.server is not None:
            try:
                outcome: ToolResult = await tool.fn(dict(arguments))
            except Exception as exc:  # the remote call reports its own failures; this is a bug
                return ToolResult(self.scrub(f"error: {name} failed: {type(exc).__name__}"),
                                  False)
            # its own cap (with the server's note) is McpTools.call's: only hide secrets here
            return replace(outcome, text=self._hide(outcome.text))
        kwargs = dict(arguments)
        kwargs.pop("caller", None)  # a model may not choose who it acts for
        if tool.wants_caller:
            kwargs["caller"] = caller
        try:
            inspect.signature(tool.fn).bind(**kwargs)
        except TypeError as exc:
            return ToolResult(f"error: bad arguments for {name}: {exc}.", False, valid=False)
        try:
            if inspect.iscoroutinefunction(tool.fn):
                value = await tool.fn(**kwargs)
            else:  # sync tools (SQLite, files) run in a worker thread, like sync graph nodes
                value = await asyncio.to_thread(tool.fn, **kwargs)
        except Exception as exc:
            return ToolResult(self.scrub(f"error: {name} failed: {type(exc).__name__}: {exc}"),
                              False)
        return ToolResult(self.scrub(as_text(value)), True)

    def _hide(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def scrub(self, text: str) -> str:
        """Hide configured secrets and cap the length of what goes back to the model."""
        text = self._hide(text)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + " …(truncated)"
        return text

    def describe_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Arguments for a trace event: secrets hidden, long values cut to a string."""
        described: dict[str, Any] = {}
        for key, value in arguments.items():
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            cleaned = self._hide(text)
            if len(cleaned) > MAX_ARGUMENT_CHARS:
                cleaned = cleaned[:MAX_ARGUMENT_CHARS] + "…"
            described[key] = value if cleaned == text else cleaned
        return described


def as_text(value: Any) -> str:
    """A tool's return value as the text the model reads."""
    if value is None:
        return "done"
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def spec_from_function(fn: Callable[..., Any], *, name: str | None = None) -> ToolSpec:
    """A ToolSpec from a function's name, docstring and type hints."""
    hints = get_type_hints(fn)
    doc = inspect.getdoc(fn) or ""
    summary, arg_docs = _parse_docstring(doc)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.name == "caller" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema, optional = _schema(hints.get(param.name, str))
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        properties[param.name] = schema
        if param.default is inspect.Parameter.empty and not optional:
            required.append(param.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return ToolSpec(name=name or fn.__name__, description=summary or (name or fn.__name__),
                    parameters=parameters)


def _schema(hint: Any) -> tuple[dict[str, Any], bool]:
    """JSON schema of one type hint, and whether it allows None."""
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(hint) if a is not type(None)]
        schema, _ = _schema(members[0]) if len(members) == 1 else ({}, False)
        return schema, len(members) < len(get_args(hint))
    if origin is Literal:
        values = list(get_args(hint))
        return {"type": JSON_TYPES.get(type(values[0]), "string"), "enum": values}, False
    if origin in (list, Sequence, tuple, set, frozenset) or hint in (list, tuple):
        args = get_args(hint)
        items = _schema(args[0])[0] if args else {}
        return {"type": "array", "items": items}, False
    if origin is dict or hint is dict:
        return {"type": "object"}, False
    return {"type": JSON_TYPES.get(hint, "string")}, False


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before ``Args:``) and per-argument lines from a Google docstring."""
    sections = doc.partition("\nArgs:")  # (description, "\nArgs:", the arguments)
    head = sections[0]
    args_block = sections[2]
    arg_docs: dict[str, str] = {}
    for line in args_block.splitlines():
        match = re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.+)", line)
        if match:
            arg_docs[match.group(1)] = match.group(2).strip()
    return " ".join(head.split()), arg_docs
