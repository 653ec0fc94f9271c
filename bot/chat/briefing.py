"""The morning briefing in the owner's chat: on /brief's schedule (FRONTDESK_BRIEF_AT), once a day.

The briefing is a code workflow (``graphs.workflows.brief``) run in the owner's direct chat
under a run id of its day (``brief-YYYY-MM-DD``), so a timer that fires again after a crash
takes that run as it stands and its reply is queued once (the outbox key is the run id).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.chat.chat_runs import AnyWorkflow, ChatRunner
from bot.chat.decisions import Decisions
from bot.chat.locks import ChatLocks
from bot.chat.workflow_commands import briefing_input
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.messages import Reply


class Briefing:
    """Runs the briefing workflow in the owner's chat."""

    def __init__(self, workflow: AnyWorkflow, runner: ChatRunner, decisions: Decisions,
                 notifier: OwnerNotifier, outbox: Outbox, locks: ChatLocks,
                 today: Callable[[], str]) -> None:
        self.workflow = workflow
        self.runner = runner
        self.decisions = decisions
        self.notifier = notifier
        self.outbox = outbox
        self.locks = locks
        self.today = today  # the owner's ISO date

    async def brief(self, platform: str, chat_id: str, run_id: str) -> Reply:
        """The briefing in this chat, or run ``run_id`` as it stands."""
        state = await self.runner.start(self.workflow,
                                        lambda: briefing_input(self.today(), platform, chat_id),
                                        run_id, platform, chat_id)
        return self.decisions.reply_from(state, default_route="command")

    async def scheduled(self, day: str) -> None:
        """FRONTDESK_BRIEF_AT's briefing of ``day``, in the owner's chat (once per day)."""
        platform, chat = await self.notifier.owner_place()
        async with self.locks.of(platform, chat):
            reply = await self.brief(platform, chat, f"brief-{day}")
            await self.outbox.deliver(platform, chat, f"brief-{day}", reply.text, reply.buttons)
