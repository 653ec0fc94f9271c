"""The big model of each chat: the owner's ``/model`` choice, kept in the database, used per call.

``FRONTDESK_MODEL_PRESETS`` names models of the configured provider (``fast=gpt-4.1-mini,
deep=o3``). The owner picks one for a chat with ``/model NAME``; ``ModelChoices`` keeps it as
a row of ``model_choices`` (this module owns the table), so it survives a restart, and a preset
no longer configured counts as no choice. ``ChatBigModel`` is the one big model every workflow
is built with: a run asks it for its chat's model (``model_for``: the run's context reads the
chat from the run's meta, ``graphs.events.RunContext.model``), made once per model name and
kept, so nothing is rebuilt per message. Each such model is a model of its own: its budget
hold uses its own prices, and the trace's ``model_call`` event names it. Called as it is
(outside a chat's run: a scheduled task), it is the configured default.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot.models.base import Message, Model, Reply
from sqlitedb import Migration
from sqlitedb.database import Database

MIGRATIONS: list[Migration] = [
    ("models_001_chat_choices", """
        CREATE TABLE model_choices (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            preset TEXT NOT NULL,
            set_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id)
        );
    """),
]

class ModelChoices:
    """The preset each chat chose (``model_choices``), read against the configured presets."""

    def __init__(self, db: Database, presets: Sequence[tuple[str, str]]) -> None:
        self.conn = db.writer
        self.presets: dict[str, str] = dict(presets)  # name -> model, in the order configured

    def preset_of(self, platform: str, chat_id: str) -> str | None:
        """The chat's chosen preset, or None (none chosen, or no longer configured)."""
        row = self.conn.execute(
            "SELECT preset FROM model_choices WHERE platform = ? AND chat_id = ?",
            (platform, chat_id)).fetchone()
        return str(row[0]) if row and str(row[0]) in self.presets else None

    def choose(self, platform: str, chat_id: str, preset: str) -> None:
        """Use a configured preset's model as this chat's big model from now on."""
        if preset not in self.presets:
            raise KeyError(preset)
        self.conn.execute(
            "INSERT INTO model_choices (platform, chat_id, preset, set_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(platform, chat_id) DO UPDATE SET preset = excluded.preset,"
            " set_at = excluded.set_at", (platform, chat_id, preset, time.time()))

    def reset(self, platform: str, chat_id: str) -> bool:
        """Back to the default big model; whether the chat had a choice."""
        cur = self.conn.execute("DELETE FROM model_choices WHERE platform = ? AND chat_id = ?",
                                (platform, chat_id))
        return cur.rowcount > 0

    def chosen(self) -> list[tuple[str, str, str]]:
        """Every chat with a configured preset chosen: (platform, chat, preset)."""
        rows = self.conn.execute(
            "SELECT platform, chat_id, preset FROM model_choices ORDER BY platform, chat_id")
        return [(str(p), str(c), str(n)) for p, c, n in rows if str(n) in self.presets]


class ChatBigModel:
    """A ``Model`` in the big role: the default big model, and each chat's (``model_for``)."""

    role = "big"

    def __init__(self, default: Model, choices: ModelChoices,
                 make: Callable[[str, str], Model]) -> None:
        """``default``: the configured big model; ``make(name, role)``: a model of the
        configured provider (``bot.models.model_maker``)."""
        self.default = default
        self.choices = choices
        self._make = make
        self.provider = default.provider
        self._made: dict[str, Model] = {default.name: default}

    @property
    def name(self) -> str:
        """The default model's name (a chat's: ``model_for(...).name``)."""
        return self.default.name

    @name.setter
    def name(self, value: str) -> None:  # the protocol's name is a variable; this one follows
        raise AttributeError("a chat's big model is chosen with /model, not renamed")

    def model_for(self, platform: str, chat_id: str) -> Model:
        """The big model this chat uses now."""
        preset = self.choices.preset_of(platform, chat_id)
        if preset is None:
            return self.default
        name = self.choices.presets[preset]
        if name not in self._made:
            self._made[name] = self._make(name, "big")
        return self._made[name]

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]],
                       **options: Any) -> Reply:
        """The call, by the default model (a chat's run calls ``model_for``'s instead)."""
        return await self.default.complete(messages, **options)

    def __getattr__(self, name: str) -> Any:
        """Anything else a model offers (e.g. ``aclose``), of the default model."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.default, name)
