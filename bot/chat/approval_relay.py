"""A guest's tool call that needs approval: the question goes to the owner, not to the guest.

The guest's run waits in the guest's chat (where its answer will go), but only the owner may
approve: the owner gets the question with the Approve / Deny buttons in their own chat (on
the platform the guest wrote from when the owner is there, else as ``FRONTDESK_NOTIFY``
says), and the guest is told that the owner was asked. A press then continues the run and
its outcome reaches the guest's chat as any press outcome does. Sent once per wait (the
outbox key), so a message answered again after a crash does not ask twice. The owner may
also type the answer in their chat: ``relayed_wait`` finds the open question asked there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.messages import Button
from graphs.runs import WaitInfo

PREFIX = "approval:"  # + run id + ":" + wait key: the outbox key of a relayed question

ASKED = ("That needs the owner's approval; I've asked them and will answer here once they "
         "decide.")


async def ask_owner(notifier: OwnerNotifier, outbox: Outbox, origin: str, run_id: str,
                    wait: dict[str, Any],
                    buttons: Callable[[str, dict[str, Any]], list[Button]]) -> str:
    """Send the wait's question and buttons to the owner; the text for the guest."""
    platform, chat = await notifier.owner_place(origin)
    await outbox.deliver(platform, chat, f"{PREFIX}{run_id}:{wait['key']}",
                         str(wait.get("question") or "Approve?"), buttons(run_id, wait))
    return ASKED


def relayed_wait(outbox: Outbox, open_waits: list[WaitInfo], platform: str,
                 chat_id: str) -> WaitInfo | None:
    """The oldest of ``open_waits`` relayed to this chat (a guest's run waits on it): only the
    open waits are looked at, so the cost does not grow with past approvals."""
    for wait in open_waits:
        if wait.options and outbox.queued(platform, chat_id, f"{PREFIX}{wait.run_id}:{wait.key}"):
            return wait
    return None
