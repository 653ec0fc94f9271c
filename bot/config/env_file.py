"""Write settings into a ``.env`` file: replace the given variables, keep every other line.

``frontdesk setup`` ends here. The file is created with mode 0600 (it holds tokens and keys)
and an existing one is narrowed to 0600 too; its comments, order and other variables stay as
they are, a variable given anew replaces its line in place (a commented-out ``# NAME=`` line
too), and the rest is appended. python-dotenv reads it back (``dotenv_values``); values are
quoted only when they need it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_ASSIGNMENT = re.compile(r"^\s*(?:#\s*)?(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_PLAIN = re.compile(r"[A-Za-z0-9_./:@,+\-~]*")


def quoted(value: str) -> str:
    """A value as python-dotenv reads it back unchanged."""
    if _PLAIN.fullmatch(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def update_env_file(path: Path, values: Mapping[str, str]) -> None:
    """Set ``values`` in the file at ``path`` (made if missing), mode 0600."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    pending = dict(values)
    for commented in (False, True):  # a live line first; a commented-out one only if none
        for number, line in enumerate(lines):
            match = _ASSIGNMENT.match(line)
            if match and match.group(1) in pending and line.lstrip().startswith("#") == commented:
                name = match.group(1)
                lines[number] = f"{name}={quoted(pending.pop(name))}"
    if pending and lines and lines[-1].strip():
        lines.append("")
    lines += [f"{name}={quoted(value)}" for name, value in pending.items()]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT: narrow it
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
