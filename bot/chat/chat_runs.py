"""A run started in a chat: filed under that chat, or taken as it stands — never a second.

Every run the chat layer starts (a message's, a workflow command's, the morning briefing, a
meeting request) has an id derived from what started it, so after a crash the same id comes
again. ``ChatRunner.start`` then takes the run as it stands instead of building its input a
second time (building it records things: the message joins the chat's history), and files
each new run under its chat (``bot.delivery.run_chats``) so a typed answer finds the question
its chat is waiting on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from bot.access.pairing import first_words
from bot.delivery.inbox import Inbox
from bot.delivery.run_chats import RunChats
from graphs import Graph, RunResult
from graphs.graph import Observer, TextSink
from graphs.runs import Runs, RunStore, Workflow

AnyWorkflow: TypeAlias = Graph | Workflow | str  # a graph, a code workflow, or one by name


class ChatRunner:
    """Starts runs in chats (once per id) over the durable run layer."""

    def __init__(self, runs: Runs, store: RunStore, run_chats: RunChats, inbox: Inbox) -> None:
        self.runs = runs
        self.store = store
        self.run_chats = run_chats
        self.inbox = inbox  # a message's run is noted with it (a restart finds the turn whole)

    def exists(self, run_id: str) -> bool:
        """Whether a run with this id was started already (a crash came after)."""
        return self.store.run(run_id) is not None

    async def start(self, workflow: AnyWorkflow, make_input: Callable[[], dict[str, Any]],
                    run_id: str, platform: str, chat_id: str,
                    meta: Mapping[str, Any] | None = None, live: TextSink | None = None,
                    observer: Observer | None = None, message_id: str = "") -> RunResult:
        """Run ``run_id`` of a workflow in a chat, or take it as it stands: its input, and
        what building it records, is made only for a new run. ``meta`` adds to what every
        chat run carries (the chat, whose run, its first words); ``live`` shows its answer
        as it is written; ``observer`` sees its events too (``bot.chat.turns``);
        ``message_id``: the message it answers, noted in the inbox with its run."""
        if message_id:
            self.inbox.set_run(platform, chat_id, message_id, run_id)
        if self.exists(run_id):
            return self.runs.load(run_id)
        state = make_input()
        self.run_chats.file(run_id, platform, chat_id)
        sender = state["sender"]
        words = str(state.get("text") or state.get("brief") or state.get("topic") or "")
        facts = {"platform": platform, "chat_id": chat_id, "user": sender["scope"],
                 "name": sender.get("name", ""), "words": first_words(words),
                 **({"messages": state["messages"]} if "messages" in state else {}),
                 **(meta or {})}
        return await self.runs.start(workflow, state, run_id=run_id, meta=facts, live=live,
                                     observer=observer)
