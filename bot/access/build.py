"""The access concern, built: who may write (the allowlist, the people let in) and strangers.

``build`` is what the assembler (``bot.app``) calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.access.allowlist import Access
from bot.access.pairing import Strangers
from bot.access.people import People
from bot.config.settings import Settings
from bot.delivery.build import Delivery
from sqlitedb.database import Database


@dataclass(frozen=True)
class Admission:
    """Who may write, the people pairing let in, and what a stranger gets."""

    access: Access
    people: People
    strangers: Strangers


def build(settings: Settings, db: Database, delivery: Delivery, *,
          clock: Callable[[], float] = time.time,
          sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> Admission:
    """The allowlist over the people's table; ``clock``/``sleep`` pace pairing's prompts."""
    people = People(db)
    access = Access(settings, people)
    strangers = Strangers(settings, delivery.inbox, delivery.buttons, delivery.outbox, people,
                          delivery.notifier.owner_chat, clock=clock, sleep=sleep)
    return Admission(access, people, strangers)
