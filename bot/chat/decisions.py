"""The owner's decisions on waiting runs, and what a run's state says to its chat.

A button press, dispatched by the button's kind (``PressKinds``: pairing's Allow / Block and
a booking's Cancel have handlers of their own; a ``run`` button answers a run's wait, where
only the owner's press counts and forged, stale and second presses say so), the outcome a
press owes its chat (queued again at start when a crash came between), a wait's
expiry, and the reply any run's state gives (its question with one opaque token per option,
its answer, or the failure), with the run's costs and its JSONL trace written on the way.
It shares the gateway's chat locks (``bot.chat.locks``), so a press and a message of one chat
are handled one at a time. A guest may also type their answer to their own offer
(``answer_typed``: "the second one"), which a handler asks before the chat's workflow. A
press on pairing's Allow hands back the stranger's waiting message (``Decided.admitted``) for
the gateway to answer.

A press found already taken is either the platform replaying the very press a crash
interrupted (Telegram hands the same callback query back after a restart) or a genuinely
second press: the press's own id (the callback query's, the interaction's) tells them apart,
so it is kept with the decision before the run resumes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.access.allowlist import Access
from bot.access.pairing import Strangers
from bot.chat.answers import match_choice
from bot.chat.approval_relay import ASKED, ask_owner
from bot.chat.locks import ChatLocks
from bot.delivery.buttons import Buttons, ButtonTarget
from bot.delivery.cursors import Cursors
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.delivery.run_chats import RunChats
from bot.messages import Accepted, Button, OutgoingFile, PressResult, Reply
from graphs import RunResult, cost_totals
from graphs.runs import Runs, RunStore

FAILURE = ("Sorry, something went wrong while handling your message. It has been logged; "
           "please try again in a moment.")
NOT_OWNER = "Only the owner can do that."
STALE = {"answered": "This was already decided.", "expired": "This request has expired.",
         "cancelled": "This request was cancelled.", "": "This request is no longer open."}


def pressed_key(run_id: str, wait_key: str) -> str:
    """The cursor holding the id of the press that decided a wait."""
    return f"pressed:{run_id}:{wait_key}"


def outcome_key(run_id: str, wait_key: str) -> str:
    """The outbox key of the reply that a press on a wait owes its chat."""
    return f"outcome:{run_id}:{wait_key}"


@dataclass(frozen=True)
class WaitRules:
    """Which waits are not only the owner's: a workflow's waits its guest answers (by their
    own press), and the waits relayed to the owner's chat when a guest's run asks them."""

    guest_nodes: frozenset[tuple[str, str]] = frozenset()  # (workflow, node)
    owner_nodes: frozenset[tuple[str, str]] = frozenset()  # (workflow, node), relayed


PressHandler = Callable[[ButtonTarget, str, str], Awaitable["Decided"]]


@dataclass(frozen=True)
class PressKinds:
    """The handlers of the button kinds that have no run's wait behind them (kind ->
    handler of a press: target, platform, user id -> what it comes to), and, for tokens made
    before kinds were written, the run-id prefix that tells their kind."""

    handlers: Mapping[str, PressHandler] = field(default_factory=dict)
    legacy_prefixes: Mapping[str, str] = field(default_factory=dict)  # run-id prefix -> kind

    def kind_of(self, target: ButtonTarget) -> str:
        """The button's kind: written in its token, else (an old token) told by its run id."""
        if target.kind:
            return target.kind
        return next((kind for prefix, kind in self.legacy_prefixes.items()
                     if target.run_id.startswith(prefix)), "run")


@dataclass(frozen=True)
class Decided:
    """What a press comes to: the answer to the presser, and the message a stranger the
    owner just allowed was waiting with (the gateway answers it), if any."""

    result: PressResult
    admitted: Accepted | None = None


class Decisions:
    """Presses, owed outcomes and expiries over the run layer; replies from run states."""

    def __init__(self, *, buttons: Buttons, cursors: Cursors, run_chats: RunChats,
                 outbox: Outbox, store: RunStore, runs: Runs, access: Access, locks: ChatLocks,
                 notifier: OwnerNotifier | None = None, rules: WaitRules | None = None,
                 kinds: PressKinds | None = None) -> None:
        self.button_tokens = buttons
        self.cursors = cursors  # the id of the press that decided a wait, kept before it
        self.run_chats = run_chats
        self.outbox = outbox
        self.store = store
        self.runs = runs
        self.access = access
        self.locks = locks
        self.notifier = notifier
        self.rules = rules or WaitRules()
        self.kinds = kinds or PressKinds()

    async def outcome(self, state: RunResult, default_route: str) -> Reply:
        """What a run's state says to its chat, once a wait only the owner answers is relayed:
        a guest's run asking the owner sends the question to the owner's chat (once per
        wait) and tells the guest (``told_guest`` in the state, else the usual sentence)."""
        wait = state.waits[0] if state.status == "waiting" and state.waits else None
        run = self.store.run(state.run_id) if wait is not None and state.run_id else None
        if wait is None or run is None or self.notifier is None \
                or (run.workflow, str(wait.get("node"))) not in self.rules.owner_nodes \
                or run.meta.get("user") == "owner":
            return self.reply_from(state, default_route)
        await ask_owner(self.notifier, self.outbox, str(run.meta.get("platform", "")),
                        run.id, wait, self.buttons)
        told = str(state.get("told_guest") or ASKED)
        return Reply(told, default_route, run_id=state.run_id)

    def guest_may_answer(self, target: ButtonTarget, platform: str, user_id: str) -> bool:
        """A guest's press on a wait of their own run that the workflow lets its guest
        answer (the meeting's slot buttons)."""
        wait = self.store.wait(target.run_id, target.wait_key)
        run = self.store.run(target.run_id)
        return wait is not None and run is not None \
            and (run.workflow, wait.node) in self.rules.guest_nodes \
            and run.meta.get("user") == f"{platform}:{user_id}"

    async def answer_typed(self, platform: str, chat_id: str, user_id: str, message_id: str,
                           text: str) -> Reply | None:
        """A guest's typed answer to a wait of their own run in this chat that the workflow
        lets its guest answer ("the second one" for the meeting's times, ``match_choice``):
        the run goes on as after their press, and its outcome is the message's reply (owed
        under ``message_id`` should a crash come between). None: nothing of theirs waits
        here, or the text names no single option (it is then an ordinary message)."""
        theirs = [w for w in self.store.waits("open") if (w.workflow, w.node)
                  in self.rules.guest_nodes and w.meta.get("user") == f"{platform}:{user_id}"]
        # a chat's runs (its whole history) are read only when something of theirs waits
        mine = self.run_chats.of_chat(platform, chat_id) if theirs else set()
        wait = next((w for w in theirs if w.run_id in mine), None)
        answer = match_choice(wait.options, text) if wait is not None else None
        if wait is None or answer is None:
            return None
        state = await self.runs.resume(wait.run_id, answer, f"{platform}:{user_id}",
                                       key=wait.key, reply_key=message_id)
        if state.already_answered:
            return Reply(STALE["answered"], "command", run_id=wait.run_id)
        return await self.outcome(state, default_route="command")

    def reply_from(self, state: RunResult, default_route: str) -> Reply:
        """What a run's state says to its chat (its question and buttons, its answer, or the
        failure), with its costs."""
        costs = cost_totals(self.store.events(state.run_id) if state.run_id else [])
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
        return Reply(text, route, file=OutgoingFile.from_json(state.get("reply_file")), **common)

    def buttons(self, run_id: str, wait: dict[str, Any]) -> list[Button]:
        """One opaque token per option of a wait."""
        return self.button_tokens.for_wait(run_id, wait)

    async def press(self, platform: str, user_id: str, token: str,
                    press_id: str | None = None) -> Decided:
        """A button press: only the owner's counts; forged, stale and second presses say so.

        ``press_id`` is the platform's id of this press (a replay repeats it); without one, a
        press on a wait it already decided is taken for a replay.
        """
        target = self.button_tokens.find(token)
        if target is None:
            return Decided(PressResult("This button is not valid (anymore).", False))
        handler = self.kinds.handlers.get(self.kinds.kind_of(target))
        if handler is not None:  # e.g. a meeting's Cancel: the handler checks who may
            return await handler(target, platform, user_id)
        by = "owner"
        if self.access.level(platform, user_id) != "owner":
            if not self.access.level(platform, user_id) \
                    or not self.guest_may_answer(target, platform, user_id):
                return Decided(PressResult(NOT_OWNER, False))
            by = f"{platform}:{user_id}"
        return Decided(await self._decide(target, platform, press_id, by))

    async def _decide(self, target: ButtonTarget, platform: str,
                      press_id: str | None, by: str = "owner") -> PressResult:
        """The owner's press on a run's wait, under the lock of the run's chat."""
        run = self.store.run(target.run_id)
        where = (str(run.meta.get("platform", platform)), str(run.meta.get("chat_id", ""))) \
            if run else (platform, "")
        async with self.locks.of(*where):
            wait = self.store.wait(target.run_id, target.wait_key)
            outcome = outcome_key(target.run_id, target.wait_key)
            pressed = pressed_key(target.run_id, target.wait_key)
            if wait is not None and wait.status == "answered" and wait.answer == target.answer \
                    and run is not None and run.status != "running" \
                    and (press_id is None or self.cursors.get(pressed) == press_id):
                # This very press was taken before a crash: its outcome may not have been
                # queued, so queue it (once per key) and settle the buttons as a first press.
                state = self.runs.load(target.run_id)
            elif wait is None or wait.status != "open":
                return PressResult(STALE.get(wait.status if wait else "", STALE[""]), False)
            else:
                if press_id is not None:  # kept first: a crash after the resume finds it
                    self.cursors.set(pressed, press_id)
                state = await self.runs.resume(target.run_id, target.answer, by,
                                               key=target.wait_key, reply_key=outcome)
                if state.already_answered:  # another press won the race
                    return PressResult(STALE["answered"], False)
            reply = await self.outcome(state, default_route="command")
            await self.outbox.deliver(*where, outcome, reply.text, reply.buttons, reply.file)
        return PressResult(f"{target.label} ✓", True, edit_text=f"Decision: {target.label}")

    async def queue_owed_outcomes(self, since: float) -> int:
        """Queue the outcome of every press taken since ``since`` whose run ended before its
        outcome was queued (a crash in between); how many were owed."""
        owed = 0
        for wait in self.store.owed_replies(since):
            where = (str(wait.meta.get("platform")), str(wait.meta.get("chat_id")))
            key = str(wait.reply_key)
            if "chat_id" not in wait.meta or self.outbox.queued(*where, key):
                continue
            reply = await self.outcome(self.runs.load(wait.run_id), default_route="command")
            await self.outbox.deliver(*where, key, reply.text, reply.buttons, reply.file)
            owed += 1
        return owed

    async def expire(self, now: float | None = None) -> int:
        """Follow ``on_expiry`` for every wait past its time and tell its chat; how many."""
        results = await self.runs.expire_due(now)
        for state in results:
            run = self.store.run(state.run_id or "")
            if run is None or "chat_id" not in run.meta:
                continue
            reply = await self.outcome(state, default_route="command")
            nth = len(self.store.waits("expired", run.id))  # one notice per expired wait
            await self.outbox.deliver(str(run.meta["platform"]), str(run.meta["chat_id"]),
                                      f"expired:{run.id}:{nth}", reply.text, reply.buttons,
                                      reply.file)
        return len(results)



def owner_presses(access: Access, strangers: Strangers) -> PressHandler:
    """Pairing's Allow / Block (no run behind them): only the owner's press counts."""
    async def press(target: ButtonTarget, platform: str, user_id: str) -> Decided:
        if access.level(platform, user_id) != "owner":
            return Decided(PressResult(NOT_OWNER, False))
        return Decided(*strangers.press(target))
    return press


def decided(handler: Callable[[ButtonTarget, str, str], Awaitable[PressResult]]) -> PressHandler:
    """A press handler whose answer is only what the presser is shown (a meeting's Cancel)."""
    async def press(target: ButtonTarget, platform: str, user_id: str) -> Decided:
        return Decided(await handler(target, platform, user_id))
    return press
