"""A lone line is answered at once; its turn gives way when the next line of a burst comes.

``bot.chat.bursts`` groups one person's close lines into bursts. Waiting for the person to
pause before every turn would hold every single line for ``FRONTDESK_MERGE_WINDOW``, so a line
alone in its burst starts its turn at once, as an *open turn*. A second line from the same
person in the same chat within the window of the first, while that turn is *quiet*, cancels it:
the first line waits again with its burst (``Bursts.put_back``), and the burst is answered as
one turn once the person pauses. A turn is quiet while its chat run is running and it has
done nothing the chat or anyone else could see:

- no live text (its ``LiveReply`` has not been given any),
- no tool call begun (the run's steps: a ``tool_call`` step is written before its tool runs),
- no event but the quiet ones (``QUIET_EVENTS``: a wait, a tool call, a first visible text,
  an end, all end it), and no node that acts without a tool (``ACTING_NODES``: triage's
  ``notify_now`` tells the owner) entered.

The events are what the run's observer (``observer``) saw; the steps and the run's status are
read from the ``RunStore`` when the second line comes. A turn that answers a waiting run or a
typed pick never starts a chat run of its own, so it is never quiet. A line that comes later,
or once the turn is no longer quiet, folds into the next turn.

Nothing is lost or doubled. The cancelled run ends ``cancelled`` by ``merged`` in its trace,
with the events it had not recorded yet (a model call cancelled in flight is counted at the
cost it held, as ``bot.models.guarded`` counts it; what still reaches the run's observer later,
such as a speculative turn, is recorded too). Before it is cancelled, the lines it joins are
recorded under the burst's run id (``Inbox.join_run``; ``bursts.merged`` gives a burst an id
of its own), so after a crash the backlog answers them as one turn, with a fresh run. The
first line's text, which the cancelled run wrote to the chat's history, is not written again
(``told``, ``chat_so_far``). A burst's turn is never cancelled: at most one cancelled turn per
burst.

Usage (the gateway)::

    turns.arrived(msg)                                  # once recorded in the inbox
    reply = await turns.answer(msg, answer_burst)       # its turn, or None
    observer = turns.observer(run_id)                   # for the run a turn starts
    turns.showing(run_id, live_reply)                   # where it shows text as it comes
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from bot.chat.bursts import Bursts, Key, key_of, mergeable, merged
from bot.chat.locks import ChatLocks
from bot.chat.senders import run_id_for
from bot.delivery.inbox import Inbox
from bot.delivery.live import LiveReply
from bot.messages import IncomingMessage, Reply
from graphs.events import EventKind
from graphs.graph import Observer
from graphs.runs import Runs, RunStore
from memory.notes import Memory
from memory.query import clean_text

AnswerBurst = Callable[[list[IncomingMessage]], Coroutine[Any, Any, Reply]]  # chat locked
MERGED = "merged"  # who cancelled a turn that gave way to its burst
QUIET_EVENTS = frozenset({EventKind.GRAPH_START, EventKind.NODE_START, EventKind.NODE_END,
                          EventKind.ROUTE, EventKind.MODEL_CALL, EventKind.FIRST_TOKEN,
                          EventKind.SPECULATION, EventKind.LOOP_END})
# Nodes that act outside the chat with neither a tool call nor live text to show it.
ACTING_NODES = frozenset({"notify_now"})


class OpenTurn:
    """A lone line's turn while the next line may still cancel it."""

    def __init__(self, message: IncomingMessage, since: float, store: RunStore) -> None:
        self.message = message
        self.since = since
        self.store = store
        self.run_id = run_id_for(message)  # the run it starts, if it starts one
        self.task: asyncio.Task[Reply] | None = None
        self.live: LiveReply | None = None
        self.seen: list[dict[str, Any]] = []  # the run's events so far
        self.acted = False  # an event other than the quiet ones was seen
        self.cancelled = False
        self.ended = False  # cancelled and recorded: later events go straight to the store

    def see(self, event: dict[str, Any]) -> None:
        """The run's observer: keep each event; one that acts ends the quiet."""
        if self.ended:
            self.store.append(self.run_id, [event])  # the run's work that outlived it
            return
        self.seen.append(event)
        kind = event.get("event")
        if kind not in QUIET_EVENTS or (kind == EventKind.NODE_START
                                        and event.get("node") in ACTING_NODES):
            self.acted = True

    def quiet(self) -> bool:
        """Whether cancelling it now leaves no trace anyone could see."""
        if self.acted or self.task is None or self.task.done():
            return False
        if self.live is not None and self.live.first_text_at is not None:
            return False
        run = self.store.run(self.run_id)
        if run is None or run.status != "running":
            return False  # no chat run of its own (a wait's answer), or it has ended
        return not any(step.kind == "tool_call" for step in self.store.steps(self.run_id))

    def cancel(self) -> None:
        """Give way: the task stops at its next await (a model call in flight is counted)."""
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()

    def unrecorded(self) -> list[dict[str, Any]]:
        """The events the run saw but had not recorded when it was cancelled, in order."""
        stored = {(event["event"], event["t"]) for event in self.store.events(self.run_id)}
        return [event for event in self.seen if (event["event"], event["t"]) not in stored]


class Turns:
    """Starts each lone line's turn at once and lets a burst's next line cancel it."""

    def __init__(self, bursts: Bursts, locks: ChatLocks, inbox: Inbox, store: RunStore,
                 runs: Runs) -> None:
        self.bursts = bursts
        self.locks = locks
        self.inbox = inbox
        self.store = store
        self.runs = runs
        self._open: dict[Key, OpenTurn] = {}  # per person and chat
        self._by_run: dict[str, OpenTurn] = {}

    def __len__(self) -> int:
        """How many lone lines' turns are open now (each ends with its turn)."""
        return len(self._by_run)

    def arrived(self, msg: IncomingMessage) -> None:
        """An allowed message is in the inbox: it may cancel its person's open turn, then it
        joins its burst. Any message ends the open turn's chance to be cancelled."""
        turn = self._open.pop(key_of(msg), None)
        if turn is not None and mergeable(msg) \
                and self.bursts.clock() - turn.since <= self.bursts.window and turn.quiet():
            self.bursts.put_back(turn.message)
            self._join([turn.message, msg])
            turn.cancel()
        self.bursts.arrived(msg)

    def _join(self, lines: list[IncomingMessage]) -> None:
        """File the lines under their burst's run before the cancel: after a crash they are
        one turn, with a fresh run, and the cancelled run is never taken as it stands."""
        ids = [line.message_id for line in lines]
        run_id = run_id_for(merged(lines))
        # inside the Telegram intake's transaction (a batch and its offset) this joins it
        self.inbox.join_run(lines[0].platform, lines[0].chat_id, ids, run_id)

    async def answer(self, msg: IncomingMessage, answer_burst: AnswerBurst, *,
                     gather: bool = True) -> Reply | None:
        """Answer ``msg`` with the bursts due before it (``gather``: a line in a burst waits
        for the person to pause; alone, it starts at once). The reply goes to the process
        that answered its burst; the others of its lines get None."""
        while True:
            if gather:
                await self.bursts.settled(msg)
            async with self.locks.of(msg.platform, msg.chat_id):
                if gather and self.bursts.left(msg) > 0:
                    continue  # lines came while it waited for the chat: the burst first
                answered, reply = await self._answer_due(msg, answer_burst, gather)
            if answered:
                return reply

    async def _answer_due(self, msg: IncomingMessage, answer_burst: AnswerBurst,
                          gather: bool) -> tuple[bool, Reply | None]:
        """The bursts due for ``msg``, in order; (False, None) when its own turn gave way."""
        reply = None
        for burst in self.bursts.due(msg):
            if gather and self.bursts.open_alone(msg, burst):
                reply = await self._open_turn(msg, answer_burst)
                if reply is None:
                    return False, None
            else:
                reply = await answer_burst(burst)
        return True, reply

    async def _open_turn(self, msg: IncomingMessage, answer_burst: AnswerBurst) -> Reply | None:
        """A lone line's turn, in a task of its own that a next line may cancel; None when
        it did (the cancelled run then ends, recorded, before the chat is let go)."""
        turn = OpenTurn(msg, self.bursts.arrived_at(msg), self.store)
        self._open[key_of(msg)] = self._by_run[turn.run_id] = turn
        turn.task = asyncio.get_running_loop().create_task(answer_burst([msg]))
        try:
            return await turn.task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not turn.cancelled or (current is not None and current.cancelling()):
                raise  # a stop, not a merge
        finally:
            if self._open.get(key_of(msg)) is turn:
                del self._open[key_of(msg)]
            del self._by_run[turn.run_id]
        if self.store.run(turn.run_id) is not None:
            self.store.append(turn.run_id, turn.unrecorded())
            self.runs.cancel(turn.run_id, by=MERGED)
        turn.ended = True
        return None

    def observer(self, run_id: str) -> Observer | None:
        """The observer for run ``run_id`` when an open turn starts it, else None."""
        turn = self._by_run.get(run_id)
        return None if turn is None else turn.see

    def showing(self, run_id: str, live: LiveReply | None) -> None:
        """Run ``run_id``'s answer is shown as it comes by ``live`` (None: not shown)."""
        if (turn := self._by_run.get(run_id)) is not None:
            turn.live = live

    def told(self, msg: IncomingMessage, message_ids: Sequence[str]) -> str:
        """The first line's text when a cancelled turn of that line alone wrote it to the
        chat's history already (its run exists), else "": ``msg`` answers the burst of
        ``message_ids``."""
        if len(message_ids) < 2:
            return ""
        run_id = run_id_for(replace(msg, message_id=message_ids[0]))
        if self.store.run(run_id) is None:
            return ""
        return str(self.store.record(run_id).input.get("text", ""))


def chat_so_far(memory: Memory, chat: str, text: str, told: str,
                lines: int) -> tuple[list[dict[str, str]], str]:
    """A new run's history (the chat's last ``lines``) and the user's line it adds to it,
    without what a cancelled turn of the same burst wrote already (``told``: the text's
    first line, which the text holds)."""
    history = memory.history(chat, lines + 1 if told else lines)
    if told and text.startswith(told + "\n"):
        written = ("user", clean_text(told))
        if written in history:
            del history[len(history) - 1 - history[::-1].index(written)]
        text = text[len(told) + 1:]
    return [{"role": role, "content": said} for role, said in history[-lines:]], text
