"""Typed values as plain JSON for code workflows: encode, rebuild as a type, describe, hash.

A step's output is stored as JSON and rebuilt on replay as the type the author asked for
(``returns=Dataclass``, a generic one such as ``Decision[SectionDraft]``, ``list``/``dict``/
``Optional`` of them, ``str``...), so nothing is ever pickled. The same JSON feeds the step's
fingerprint: a short hash per part (prompt, input, return schema, model options), so a
mismatch can say which part changed (``graphs.checkpoints.fingerprint``, the step log's).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any, TypeVar

from graphs.checkpoints import canonical_json, short_hash

_UNIONS = (typing.Union, types.UnionType)


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


def _dataclass_of(kind: Any) -> tuple[type | None, dict[Any, Any]]:
    """(the dataclass, its type parameters bound) for ``Card`` or ``Decision[Card]``."""
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return kind, {}
    origin = typing.get_origin(kind)
    if isinstance(origin, type) and dataclasses.is_dataclass(origin):
        params = getattr(origin, "__parameters__", ())
        return origin, dict(zip(params, typing.get_args(kind), strict=False))
    return None, {}


def _bind(hint: Any, bound: dict[Any, Any]) -> Any:
    """``hint`` with type parameters replaced (``list[T]`` with T=Card: ``list[Card]``)."""
    if isinstance(hint, TypeVar):
        return bound.get(hint, Any)
    args = typing.get_args(hint)
    if not bound or not args:
        return hint
    new = tuple(_bind(arg, bound) for arg in args)
    origin = typing.get_origin(hint)
    if origin in _UNIONS:
        return typing.Union[new]  # noqa: UP007 - built from a tuple of types
    try:
        return origin[new] if len(new) > 1 else origin[new[0]]
    except TypeError:  # an origin that can't be subscripted again
        return hint


def _fields(cls: type, bound: dict[Any, Any]) -> dict[str, Any]:
    """A dataclass's field types, with its type parameters bound."""
    try:
        hints = typing.get_type_hints(cls)
    except NameError:  # a class defined where its annotations can't be resolved
        hints = {}
    return {f.name: _bind(hints.get(f.name, Any), bound) for f in dataclasses.fields(cls)}


def from_json(kind: Any, data: Any) -> Any:
    """Rebuild ``data`` (plain JSON) as ``kind``: a dataclass (generic too), a list/dict/
    Optional of them, a scalar."""
    if kind is Any or kind is None or data is None or isinstance(kind, TypeVar):
        return data
    cls, bound = _dataclass_of(kind)
    if cls is not None:
        if not isinstance(data, dict):
            raise TypeError(f"expected a JSON object for {cls.__name__}, got {data!r:.60}")
        return cls(**{name: from_json(hint, data[name])
                      for name, hint in _fields(cls, bound).items() if name in data})
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (list, typing.Sequence, tuple) or kind in (list, tuple):
        item = args[0] if args else Any
        items = [from_json(item, value) for value in data]
        return tuple(items) if origin is tuple or kind is tuple else items
    if origin is dict:
        return {key: from_json(args[1], value) for key, value in data.items()}
    if origin in _UNIONS:
        for option in args:  # the first dataclass a dict fits, else the data as it is
            if _dataclass_of(option)[0] is not None and isinstance(data, dict):
                return from_json(option, data)
        return data
    if kind is float and isinstance(data, int):
        return float(data)
    return data


def schema(kind: Any) -> Any:
    """A JSON description of a return type, for the fingerprint (field names and types)."""
    cls, bound = _dataclass_of(kind)
    if cls is not None:
        return {"dataclass": cls.__qualname__,
                "fields": {name: schema(hint) for name, hint in _fields(cls, bound).items()}}
    if args := typing.get_args(kind):
        origin = typing.get_origin(kind)
        return {"type": getattr(origin, "__name__", str(origin)), "of": [schema(a) for a in args]}
    return getattr(kind, "__name__", str(kind))


def canonical(value: Any) -> str:
    """One JSON text per value: sorted keys, no spaces (what hashes and comparisons read)."""
    return canonical_json(to_json(value))


def label(value: Any) -> str:
    """A stable, readable key part for ``key_by``: short text as it is, else a hash."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return short_hash(canonical(value), 12)
    text = str(value)
    if len(text) > 48 or "/" in text or "\n" in text:  # '/' separates scopes in a key
        return short_hash(text, 12)
    return text


def code_text(fn: Any) -> list[str]:
    """The text constants of a function's code (nested functions too): the prompts written in
    it, so an edit to them changes the fingerprint of the pipeline cells it ran."""
    code = getattr(fn, "__code__", None)
    found: list[str] = []
    todo = [code] if code is not None else []
    while todo:
        for const in todo.pop(0).co_consts:
            if isinstance(const, str):
                found.append(const)
            elif isinstance(const, types.CodeType):
                todo.append(const)
    return found


def json_instruction(kind: Any) -> str:
    """What the prompt adds when an agent step must return a dataclass."""
    if _dataclass_of(kind)[0] is None:
        return ""
    fields = ", ".join(f'"{name}": {json.dumps(spec) if not isinstance(spec, str) else spec}'
                       for name, spec in schema(kind)["fields"].items())
    return f"\n\nReply with one JSON object and nothing else: {{{fields}}}"
