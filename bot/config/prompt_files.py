"""The prompts: the shipped ``*.txt`` files, each replaceable by one in ``FRONTDESK_HOME/prompts``.

Shipped inside the package (package data), so a wheel installed by pip, pipx or uv has them.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

PROMPTS_DIR: Traversable = files("bot.config") / "prompts"


def load_prompts(overrides: Path | None = None, *,
                 shipped: Traversable = PROMPTS_DIR) -> dict[str, str]:
    """Every shipped ``*.txt`` prompt by its stem; a file of the same name in ``overrides``
    (``FRONTDESK_HOME/prompts``) replaces the shipped one, and a new name there adds a prompt."""
    texts = {entry.name.removesuffix(".txt"): entry.read_text(encoding="utf-8").strip()
             for entry in shipped.iterdir() if entry.name.endswith(".txt")}
    if overrides is not None and overrides.is_dir():
        texts.update({path.stem: path.read_text(encoding="utf-8").strip()
                      for path in sorted(overrides.glob("*.txt"))})
    return texts
