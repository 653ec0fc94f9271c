"""One guest cannot spend the owner's day: their messages an hour and model spend a day, capped.

``GuestLimits`` is a handler of ``bot.chat.handlers``' list, asked before any that starts a
run: a guest past ``FRONTDESK_GUEST_MESSAGES_PER_HOUR`` (the messages their runs answered in
the last hour) or ``FRONTDESK_GUEST_DAILY_USD`` (what the model calls of their runs cost
since midnight in the owner's zone) gets one plain sentence saying so, and no model is
called. The owner and every other guest are untouched: each count is of this guest's runs
alone, read from the run log (``RunStore.messages_of``, ``RunStore.spent_by``), so a restart
forgets nothing and no table of its own is kept.

Nothing of theirs is lost: the message is in the inbox as any other, joins the chat's
history, and is the input of a run of its own (the ``guest_limit`` workflow, one node that
says the sentence), which the dashboard and ``frontdesk runs`` list with the route
``limited``. Chat commands that call no model (``/help``, ``/notes``) still work.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from bot.chat.chat_runs import AnyWorkflow, ChatRunner
from bot.chat.commands import parse
from bot.chat.handlers import Turn
from bot.chat.senders import history_key, run_id_for, sender_of
from bot.chat.workflow_commands import WORKFLOW_COMMANDS
from bot.messages import Reply
from graphs import END, START, Graph, Node
from graphs.runs import RunStore
from memory.notes import Memory

log = logging.getLogger(__name__)

WORKFLOW = "guest_limit"  # the runs of the turns a limit answered
ROUTE = "limited"
HOUR_S = 3600.0
LOOKBACK_S = 2 * 86400.0  # a run started this long before midnight may still spend today

TOO_MANY = ("You have sent {limit} messages in the last hour, as many as I answer for one "
            "person; I have kept this one, and will answer again within the hour.")
SPENT = ("You have used today's share of my work for one person; I have kept your message, "
         "and will answer again tomorrow.")


@dataclass(frozen=True)
class GuestCaps:
    """What one guest may use: messages an hour (0: no cap), model spend a day (None: no
    cap), the day counted in ``zone`` (None: the machine's)."""

    messages_per_hour: int
    daily_usd: float | None
    zone: tzinfo | None = None


def limit_graph() -> Graph:
    """The ``guest_limit`` workflow: its one node says the sentence its input carries."""

    async def tell(state: dict[str, Any]) -> dict[str, Any]:
        """The sentence, as the run's reply."""
        return {"reply": str(state["limit"]), "route": ROUTE}

    graph = Graph(WORKFLOW)
    graph.add_node(Node("tell", tell))
    graph.add_edge(START, "tell")
    graph.add_edge("tell", END)
    return graph


class GuestLimits:
    """A guest's turn past their hourly messages or daily spend: the sentence, no model."""

    def __init__(self, caps: GuestCaps, runner: ChatRunner, store: RunStore, memory: Memory,
                 workflow: AnyWorkflow, clock: Callable[[], float] = time.time) -> None:
        self.caps = caps
        self.runner = runner
        self.store = store
        self.memory = memory
        self.workflow = workflow  # limit_graph(), registered with the runs by the builder
        self.clock = clock  # the run log's clock: its runs' times are compared with it

    async def answer(self, turn: Turn) -> Reply | None:
        msg = turn.message
        run_id = run_id_for(msg)
        if turn.is_owner or self._costs_nothing(msg.text) or self.runner.exists(run_id):
            return None  # a run that exists (a crash came after) is taken as it stands
        sentence = self.over(turn.scope, len(turn.extra.get("messages", ())) or 1)
        if sentence is None:
            return None
        log.info("%s is past a guest limit; message %s kept, not answered by a model",
                 turn.scope, msg.message_id)

        def make_input() -> dict[str, Any]:
            self.memory.add_history(history_key(msg), "user", msg.text)
            extra = {"messages": turn.extra["messages"]} if "messages" in turn.extra else {}
            return {"text": msg.text, "sender": sender_of(msg, False), "limit": sentence,
                    **extra}

        state = await self.runner.start(self.workflow, make_input, run_id, msg.platform,
                                        msg.chat_id, message_id=msg.message_id)
        return Reply(str(state.get("reply") or sentence), ROUTE, run_id)

    def over(self, scope: str, lines: int) -> str | None:
        """The sentence when ``lines`` more messages of ``scope`` are past a cap, else None."""
        now = self.clock()
        per_hour = self.caps.messages_per_hour
        if per_hour and self.store.messages_of(scope, now - HOUR_S, but=WORKFLOW) + lines \
                > per_hour:
            return TOO_MANY.format(limit=per_hour)
        daily = self.caps.daily_usd
        if daily is not None:
            midnight = self.midnight(now)
            if self.store.spent_by(scope, midnight, midnight - LOOKBACK_S) >= daily:
                return SPENT
        return None

    def midnight(self, now: float) -> float:
        """The start of ``now``'s day in the owner's zone, as a timestamp."""
        day = datetime.fromtimestamp(now, tz=self.caps.zone)
        return day.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()

    @staticmethod
    def _costs_nothing(text: str) -> bool:
        """A chat command other than a workflow's (/help, /notes, /model): no model call."""
        command = parse(text)
        return command is not None and command.name not in WORKFLOW_COMMANDS
