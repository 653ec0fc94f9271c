"""The labelled messages an evaluation reads: a JSON Lines file, or the sample that ships.

One message a line: ``{"text": "…", "route": "quick_reply"|"full_agent"|"notify_now",
"sender": "owner"|"guest"}``; ``sender`` is optional (a guest by default) and any other key is
ignored, so a set may carry notes of its own. Blank lines are skipped. A line that is not such
an object stops the whole reading with one ``LabelError`` naming the file and the line:
nothing runs on a set that is half read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

ROUTES = ("quick_reply", "full_agent", "notify_now")  # the triage graph's three endings
SENDERS = ("owner", "guest")
# Shipped inside the package (package data): `frontdesk eval --sample` on any install.
SAMPLE: Traversable = files("bot.evaluation") / "sample.jsonl"


class LabelError(ValueError):
    """A line of the set is not a labelled message; the text names the file and the line."""


@dataclass(frozen=True)
class Labelled:
    """One message of the set: where it is, what it says, who wrote it, where it should go."""

    line: int  # 1-based, as an editor shows it
    text: str
    route: str  # the expected route
    sender: str = "guest"

    @property
    def is_owner(self) -> bool:
        return self.sender == "owner"


def read_labelled(path: Path | Traversable, name: str | None = None) -> list[Labelled]:
    """Every message of the file at ``path`` (``name``: how to call it in an error)."""
    where = name or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelError(f"{where}: cannot read it ({exc})") from None
    return parse_labelled(text, where)


def parse_labelled(text: str, where: str) -> list[Labelled]:
    """The messages of a JSON Lines text; LabelError on the first line that is not one."""
    messages = [parse_line(line, number, where)
                for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not messages:
        raise LabelError(f"{where}: no messages in it (one JSON object a line)")
    return messages


def parse_line(line: str, number: int, where: str) -> Labelled:
    """One line as a labelled message, or LabelError saying what is wrong with it."""
    def wrong(what: str) -> LabelError:
        return LabelError(f"{where}, line {number}: {what}")

    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise wrong(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise wrong("not a JSON object ({\"text\": …, \"route\": …})")
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        raise wrong("\"text\" must be a non-empty string")
    route = data.get("route")
    if route not in ROUTES:
        raise wrong(f"\"route\" must be one of {', '.join(ROUTES)} (got {route!r})")
    sender = data.get("sender", "guest")
    if sender not in SENDERS:
        raise wrong(f"\"sender\" must be owner or guest (got {sender!r})")
    return Labelled(number, text, str(route), str(sender))


def sample() -> list[Labelled]:
    """The labelled sample that ships with the package."""
    return read_labelled(SAMPLE, "the shipped sample")
