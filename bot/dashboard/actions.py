"""What the dashboard may change: answer a waiting approval as the owner; and what it reads
besides the runs: today's model spend against the daily budget.

An answer goes through the gateway's own press (``Gateway.press``) with the token of the
chosen option, as the owner of the platform the run came from: the same checks (open, not
already answered), the same outcome in the run's chat, the same buttons settled. Only
``frontdesk run`` can answer (the runs live in its process); the standalone dashboard reads.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from bot.chat.gateway import Gateway
from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.models.costs import SpendLog
from graphs.runs import RunStore
from sqlitedb.database import Database


async def answer_wait(store: RunStore, owners: Mapping[str, str], buttons: Buttons,
                      gateway: Gateway, run_id: str, option: str) -> tuple[bool, str]:
    """Answer the run's open question with ``option`` (as the owner of the run's platform,
    ``owners`` by platform): whether it decided, and one sentence."""
    wait = next((w for w in store.waits("open") if w.run_id == run_id), None)
    run = store.run(run_id)
    if wait is None or run is None:
        return False, "This run is not waiting for an answer (anymore)."
    if option not in wait.options:
        return False, f"Answer with one of: {', '.join(wait.options)}."
    platform = str(run.meta.get("platform") or "console")
    owner = owners.get(platform)
    if owner is None:
        return False, f"No owner is set for {platform}."
    [button] = buttons.for_wait(run_id, {"key": wait.key, "options": [option]})
    # Each answer from the page is a press of its own: a second one is refused.
    result = await gateway.press(platform, owner, button.token, secrets.token_hex(8))
    return result.accepted, result.alert


def spend_reader(settings: Settings, db: Database) -> Callable[[], dict[str, Any]]:
    """A function giving ``{"day", "spent_usd", "budget_usd"}``, read from ``db``."""
    ledger = SpendLog.open(settings, db)

    def spend() -> dict[str, Any]:
        return {"day": ledger.today(), "spent_usd": round(ledger.spent(), 6),
                "budget_usd": settings.daily_budget_usd}

    return spend
