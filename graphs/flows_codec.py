"""Typed values as plain JSON for code workflows: encode, rebuild as a type, describe, hash.

A step's output is stored as JSON and rebuilt on replay as the type the author asked for
(``returns=Dataclass``, ``list[Dataclass]``, ``str``...), so nothing is ever pickled. The same
JSON feeds the step's fingerprint: a short hash per part (prompt, input, return schema, model
options), so a mismatch can say which part changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from typing import Any

_canonical = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


class NotJson(TypeError):
    """A value that cannot be stored as plain JSON."""


def to_json(value: Any) -> Any:
    """``value`` as plain JSON data: dataclasses become dicts, tuples become lists."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    raise NotJson(f"a {type(value).__name__} is not plain JSON (use str, numbers, bools, None, "
                  "lists, dicts or dataclasses of them)")


def from_json(kind: Any, data: Any) -> Any:
    """Rebuild ``data`` (plain JSON) as ``kind``: a dataclass, a list/dict of them, a scalar."""
    if kind is Any or kind is None or data is None:
        return data
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: from_json(hints.get(f.name, Any), data[f.name])
                       for f in dataclasses.fields(kind) if f.name in data})
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (list, typing.Sequence, tuple) or kind in (list, tuple):
        item = args[0] if args else Any
        items = [from_json(item, value) for value in data]
        return tuple(items) if origin is tuple or kind is tuple else items
    if origin is dict:
        return {key: from_json(args[1], value) for key, value in data.items()}
    if origin in (typing.Union, types.UnionType):
        for option in args:  # the first dataclass a dict fits, else the data as it is
            if isinstance(option, type) and dataclasses.is_dataclass(option) \
                    and isinstance(data, dict):
                return from_json(option, data)
        return data
    if kind is float and isinstance(data, int):
        return float(data)
    return data


def schema(kind: Any) -> Any:
    """A JSON description of a return type, for the fingerprint (field names and types)."""
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return {"dataclass": kind.__qualname__,
                "fields": {f.name: schema(hints.get(f.name, Any))
                           for f in dataclasses.fields(kind)}}
    if args := typing.get_args(kind):
        origin = typing.get_origin(kind)
        return {"type": getattr(origin, "__name__", str(origin)), "of": [schema(a) for a in args]}
    return getattr(kind, "__name__", str(kind))


def canonical(value: Any) -> str:
    """One JSON text per value: sorted keys, no spaces (what hashes and comparisons read)."""
    return str(_canonical(to_json(value)))


def short_hash(text: str, size: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


def fingerprint(parts: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The step's fingerprint and the hash of each part (to name what changed)."""
    hashes = {name: short_hash(canonical(value)) for name, value in sorted(parts.items())}
    return short_hash(canonical(hashes), 24), hashes


def label(value: Any) -> str:
    """A stable, readable key part for ``key_by``: short text as it is, else a hash."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return short_hash(canonical(value), 12)
    text = str(value)
    if len(text) > 48 or "/" in text or "\n" in text:  # '/' separates scopes in a key
        return short_hash(text, 12)
    return text


def parse_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model's reply (bare, or inside prose or a code fence)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None


def json_instruction(kind: Any) -> str:
    """What the prompt adds when an agent step must return a dataclass."""
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        return ""
    fields = ", ".join(f'"{name}": {json.dumps(spec) if not isinstance(spec, str) else spec}'
                       for name, spec in schema(kind)["fields"].items())
    return f"\n\nReply with one JSON object and nothing else: {{{fields}}}"
