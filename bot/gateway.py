"""The gateway: every message from every adapter, in order, answered once (design §1).

Order for one message: allowlist → inbox record (before any work) → per-chat lock → a chat
command, an answer to this chat's waiting run, or a new run (the triage graph, or the plain
agent loop with graph mode off) → outbox → send. Every run gets an id derived from the
message, so a message found unanswered after a crash continues *its* run (finished nodes are
not run again) instead of starting a second one.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from bot.chat_commands import Command, CommandHandler, parse
from bot.messages import Adapter, Button, IncomingMessage, PressResult, Reply
from bot.services import ANSWERING, Services, match_option
from bot.tools import Caller
from graphs.durable import cancel, expire_due, load, recover, resume
from graphs.engine import Graph, RunResult, run_graph
from graphs.store import WaitInfo, cost_totals
from graphs.trace import write_jsonl

log = logging.getLogger(__name__)

REFUSAL = "Sorry, I only work for the people I've been set up for."
FAILURE = ("Sorry, something went wrong while handling your message. It has been logged; "
           "please try again in a moment.")
NOT_OWNER = "Only the owner can do that."
OWNER_WORKFLOWS = {"draft", "brief"}  # commands that start a workflow: the owner's alone
MAX_MESSAGE_CHARS = 16_000
TOO_LONG = ("That message is too long for me ({:,} characters; I read at most "
            f"{MAX_MESSAGE_CHARS:,}). Please send a shorter one.")
STALE = {"answered": "This was already decided.", "expired": "This request has expired.",
         "cancelled": "This request was cancelled.", "": "This request is no longer open."}


def run_id_for(msg: IncomingMessage) -> str:
    """The one run that answers this message: the same id after any restart."""
    key = f"{msg.platform}|{msg.chat_id}|{msg.message_id}".encode()
    return "m-" + hashlib.sha256(key).hexdigest()[:20]


class Gateway:
    """Routes messages and button presses between the adapters and the workflows."""

    def __init__(self, services: Services) -> None:
        self.s = services
        self.adapters: dict[str, Adapter] = {}
        self.commands = CommandHandler(services.memory)
        self._chat_locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._send_locks: dict[tuple[str, str], asyncio.Lock] = {}
        services.notifier.bind(self)

    # -- adapters ------------------------------------------------------------------------
    async def start(self) -> None:
        """Before any message: continue the runs a crash left running, expire overdue waits."""
        await recover(self.s.store)
        await self.expire()

    async def attach(self, adapter: Adapter, *, recover: bool = True) -> None:
        """Start serving a platform: send what the outbox still owes, answer what's open."""
        self.adapters[adapter.platform] = adapter
        await self.flush(adapter.platform)
        if recover:
            for payload in self.s.ledger.unfinished(adapter.platform):
                await self._process(IncomingMessage.from_json(payload))

    def access(self, msg: IncomingMessage) -> str | None:
        """'owner', 'allowed', or None for someone not on the allowlist."""
        return self.s.access.level(msg.platform, msg.user_id)

    # -- messages ------------------------------------------------------------------------
    async def handle(self, msg: IncomingMessage) -> Reply | None:
        """Answer one message; None when it is a re-delivery or an ignored stranger."""
        if not self.accept(msg):
            return None
        return await self.process(msg)

    def accept(self, msg: IncomingMessage) -> bool:
        """Record a message in the inbox before any work on it; False for a re-delivery.

        ``handle`` is ``accept`` then ``process``. An adapter that must confirm receipt to its
        platform (Telegram's update offset) accepts first, confirms, then processes, so a crash
        in between finds the message in the inbox at ``attach``. A stranger's message is not
        recorded: ``process`` refuses it once per chat.
        """
        if self.access(msg) is None:
            return True
        return self.s.ledger.record(msg.platform, msg.chat_id, msg.message_id, msg.user_id,
                                    msg.to_json())

    async def process(self, msg: IncomingMessage) -> Reply | None:
        """Answer an accepted message; a stranger gets one refusal per chat, then None."""
        if self.access(msg) is None:
            if not self.s.ledger.refuse_once(msg.platform, msg.chat_id):
                return None
            await self.deliver(msg.platform, msg.chat_id, f"refusal:{msg.message_id}", REFUSAL)
            return Reply(REFUSAL, "refused")
        return await self._process(msg)

    async def _process(self, msg: IncomingMessage) -> Reply:
        msg = replace(msg, text=storable(msg.text), user_name=storable(msg.user_name))
        lock = self._chat_locks.setdefault((msg.platform, msg.chat_id), asyncio.Lock())
        async with lock:
            answering = ANSWERING.set(msg.message_id)
            try:
                reply = await self._answer(msg)
            except Exception:
                log.exception("message %s/%s failed", msg.platform, msg.message_id)
                reply = Reply(FAILURE, "failed", run_id_for(msg))
            finally:
                ANSWERING.reset(answering)
            await self.deliver(msg.platform, msg.chat_id, msg.message_id, reply.text,
                               reply.buttons)
            status = "failed" if reply.route == "failed" else "answered"
            self.s.ledger.finish(msg.platform, msg.chat_id, msg.message_id, status, reply.route)
            if reply.route not in {"command", "failed"}:
                self.s.memory.add_history(self._chat(msg), "assistant", reply.text)
            return reply

    async def _answer(self, msg: IncomingMessage) -> Reply:
        if len(msg.text) > MAX_MESSAGE_CHARS:  # refused before any model is paid to read it
            return Reply(TOO_LONG.format(len(msg.text)), "refused")
        is_owner = self.access(msg) == "owner"
        command = parse(msg.text)
        if command is not None:
            return await self._command(msg, command, is_owner)
        waiting = self.s.waits.for_chat(msg.platform, msg.chat_id) if is_owner else None
        answer = match_option(waiting, msg.text) if waiting is not None else None
        if waiting is not None and answer is not None:
            return await self._answer_wait(waiting, answer, self._scope(msg, is_owner))
        graph = self.s.triage if self.s.settings.graph_workflows else self.s.loop_graph
        state = await self._run(msg, graph, lambda: self._message_input(msg, is_owner))
        return self._reply_from(state, default_route="loop")

    def _message_input(self, msg: IncomingMessage, is_owner: bool) -> dict[str, Any]:
        """A new run's input: the text, who sent it, the chat so far (which it then joins)."""
        history = [{"role": role, "content": text}
                   for role, text in self.s.memory.history(self._chat(msg), 10)]
        self.s.memory.add_history(self._chat(msg), "user", msg.text)
        return {"text": msg.text, "sender": self.sender(msg, is_owner), "history": history}

    async def _run(self, msg: IncomingMessage, graph: Graph,
                   make_input: Callable[[], dict[str, Any]]) -> RunResult:
        """Start this message's run, or take up the one a crash interrupted (never a second:
        its input, and what building it records, is made only for a new run)."""
        run_id = run_id_for(msg)
        self.s.ledger.set_run(msg.platform, msg.chat_id, msg.message_id, run_id)
        if self.s.store.run(run_id) is not None:  # recovered at ``start``: reuse its outcome
            return load(self.s.store, run_id)
        state = make_input()
        meta = {"platform": msg.platform, "chat_id": msg.chat_id,
                "user": state["sender"]["scope"]}
        return await run_graph(graph, state, store=self.s.store, run_id=run_id, meta=meta)

    async def _command(self, msg: IncomingMessage, command: Command, is_owner: bool) -> Reply:
        if command.name in OWNER_WORKFLOWS and not is_owner:
            return Reply(NOT_OWNER, "command")
        if command.name == "draft":
            return await self._draft(msg, command.argument)
        if command.name == "brief":
            self.s.ledger.set_run(msg.platform, msg.chat_id, msg.message_id, run_id_for(msg))
            return await self.brief(msg.platform, msg.chat_id, run_id_for(msg))
        text = await self.commands.handle(command, self._scope(msg, is_owner),
                                          lambda: self._cancel(msg, is_owner))
        return Reply(text or "", "command")

    async def _draft(self, msg: IncomingMessage, brief: str) -> Reply:
        if not brief:
            return Reply("Tell me what to write: /draft BRIEF, e.g. /draft a thank-you note "
                         "to Ann for the flowers, under 80 words.", "command")
        state = await self._run(msg, self.s.content,
                                lambda: {"brief": brief, "sender": self.sender(msg, True)})
        return self._reply_from(state, default_route="command")

    async def brief(self, platform: str, chat_id: str, run_id: str) -> Reply:
        """The morning briefing (a code workflow) in this chat, or run ``run_id`` as it stands."""
        if self.s.store.run(run_id) is not None:  # recovered at start, or asked already
            return self._reply_from(load(self.s.store, run_id), default_route="command")
        state = await self.s.brief.start(self.s.store, self.s.brief_input(platform, chat_id),
                                         run_id=run_id, meta={"platform": platform,
                                                              "chat_id": chat_id, "user": "owner"})
        return self._reply_from(state, default_route="command")

    async def scheduled_brief(self, day: str) -> None:
        """FRONTDESK_BRIEF_AT's briefing of ``day``, in the owner's chat (once per day)."""
        platform = self.s.notifier.targets("")[0]
        chat = await self.s.notifier.owner_chat(platform)
        async with self._chat_locks.setdefault((platform, chat), asyncio.Lock()):
            reply = await self.brief(platform, chat, f"brief-{day}")
            await self.deliver(platform, chat, f"brief-{day}", reply.text, reply.buttons)

    async def _cancel(self, msg: IncomingMessage, is_owner: bool) -> str:
        if not is_owner:  # the waiting runs are the owner's (a group chat has guests too)
            return NOT_OWNER
        waiting = self.s.waits.for_chat(msg.platform, msg.chat_id)
        if waiting is None:
            return "Nothing is waiting in this chat."
        cancel(self.s.store, waiting.run_id, by="owner")
        return "Cancelled the waiting run."

    async def _answer_wait(self, wait: WaitInfo, answer: str, by: str) -> Reply:
        state = await resume(self.s.store, wait.run_id, answer, by, key=wait.key)
        return self._reply_from(state, default_route="command")

    # -- replies, runs and approvals -----------------------------------------------------
    def _reply_from(self, state: RunResult, default_route: str) -> Reply:
        events = self.s.store.events(state.run_id) if state.run_id else []
        if state.run_id:  # the JSONL trace: an export of the run's durable events
            write_jsonl(events, self.s.settings.traces_dir / f"{state.run_id}.jsonl")
        costs = cost_totals(events)
        calls = {"small": costs["calls"].get("small", 0), "big": costs["calls"].get("big", 0)}
        route = str(state.get("route") or default_route)
        common: dict[str, Any] = {"run_id": state.run_id, "model_calls": calls,
                                  "cost_usd": float(costs.get("cost_usd", 0.0))}
        if state.status == "waiting" and state.waits:
            wait = state.waits[0]
            text = str(wait.get("question") or "Please answer.")
            return Reply(text, route, buttons=self.buttons(state.run_id or "", wait), **common)
        if state.status == "failed":
            return Reply(FAILURE, "failed", **common)
        text = str(state.get("reply") or "").strip() or "(no answer)"
        return Reply(text, route, **common)

    def buttons(self, run_id: str, wait: dict[str, Any]) -> list[Button]:
        """One opaque token per option of a wait."""
        return [Button(option, self.s.ledger.button_token(run_id, str(wait["key"]), option,
                                                          option))
                for option in wait.get("options") or []]

    async def press(self, platform: str, user_id: str, token: str) -> PressResult:
        """A button press: only the owner's counts; forged, stale and second presses say so."""
        target = self.s.ledger.button(token)
        if target is None:
            return PressResult("This button is not valid (anymore).", False)
        if self.s.access.level(platform, user_id) != "owner":
            return PressResult(NOT_OWNER, False)
        run = self.s.store.run(target.run_id)
        where = (str(run.meta.get("platform", platform)), str(run.meta.get("chat_id", ""))) \
            if run else (platform, "")
        async with self._chat_locks.setdefault(where, asyncio.Lock()):
            waits = self.s.store.waits(None, target.run_id)
            wait = next((w for w in waits if w.key == target.wait_key), None)
            if wait is None or wait.status != "open":
                return PressResult(STALE.get(wait.status if wait else "", STALE[""]), False)
            state = await resume(self.s.store, target.run_id, target.answer, "owner",
                                 key=target.wait_key)
            if state.already_answered:  # another press won the race
                return PressResult(STALE["answered"], False)
            reply = self._reply_from(state, default_route="command")
            await self.deliver(*where, f"press:{token}", reply.text, reply.buttons)
        return PressResult(f"{target.label} ✓", True, edit_text=f"Decision: {target.label}")

    async def expire(self, now: float | None = None) -> int:
        """Follow ``on_expiry`` for every wait past its time and tell its chat; how many."""
        results = await expire_due(self.s.store, now)
        for state in results:
            run = self.s.store.run(state.run_id or "")
            if run is None or "chat_id" not in run.meta:
                continue
            reply = self._reply_from(state, default_route="command")
            nth = len(self.s.store.waits("expired", run.id))  # one notice per expired wait
            await self.deliver(str(run.meta["platform"]), str(run.meta["chat_id"]),
                               f"expired:{run.id}:{nth}", reply.text, reply.buttons)
        return len(results)

    # -- delivery ------------------------------------------------------------------------
    async def deliver(self, platform: str, chat_id: str, reply_key: str, text: str,
                      buttons: Iterable[Button] | None = None) -> None:
        """Write the reply's parts to the outbox, then send those not yet sent."""
        adapter = self.adapters.get(platform)
        texts = adapter.split(text) if adapter else [text]
        marks = [{"label": b.label, "token": b.token} for b in buttons or []]
        self.s.ledger.enqueue(platform, chat_id, reply_key, texts, marks or None)
        if adapter is not None:
            await self.flush(platform, chat_id)

    async def flush(self, platform: str, chat_id: str | None = None) -> None:
        """Send every unsent part of a platform (or one chat), in order, each at most once."""
        adapter = self.adapters.get(platform)
        if adapter is None:
            return
        chats = ([chat_id] if chat_id is not None
                 else list(dict.fromkeys(part.chat_id for part in self.s.ledger.unsent(platform))))
        for chat in chats:
            # One lock per chat: a chat waiting out flood control does not hold up the others.
            async with self._send_locks.setdefault((platform, chat), asyncio.Lock()):
                for part in self.s.ledger.unsent(platform):
                    if part.chat_id != chat:
                        continue
                    buttons = [Button(b["label"], b["token"]) for b in part.buttons or []]
                    message_id = await adapter.send(part.chat_id, part.text, buttons or None,
                                                key=f"fd{part.id}")
                    self.s.ledger.mark_sent(part.id, message_id)

    # -- who is writing ------------------------------------------------------------------
    def sender(self, msg: IncomingMessage, is_owner: bool) -> dict[str, Any]:
        """The plain-dict sender the workflows see."""
        return {"scope": self._scope(msg, is_owner), "is_owner": is_owner,
                "platform": msg.platform, "chat_id": msg.chat_id,
                "message_id": msg.message_id, "name": msg.user_name or msg.user_id}

    def caller(self, msg: IncomingMessage) -> Caller:
        """The tool caller for a message."""
        is_owner = self.access(msg) == "owner"
        return Caller(self._scope(msg, is_owner), is_owner, msg.platform, msg.chat_id,
                      msg.user_name)

    @staticmethod
    def _scope(msg: IncomingMessage, is_owner: bool) -> str:
        return "owner" if is_owner else f"{msg.platform}:{msg.user_id}"

    @staticmethod
    def _chat(msg: IncomingMessage) -> str:
        return f"{msg.platform}:chat:{msg.chat_id}"


def storable(text: str) -> str:
    """Text SQLite can store: a lone surrogate (a console's undecodable byte) becomes '?'."""
    return text.encode("utf-8", "replace").decode("utf-8")


def with_text(msg: IncomingMessage, text: str) -> IncomingMessage:
    """The same message with other text (used by tests and the console)."""
    return replace(msg, text=text)
