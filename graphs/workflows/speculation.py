"""The agent's first model turn, started while triage still classifies, then adopted or cancelled.

Run one after the other, the small model's classify call is a tax on every question and task:
the big model only starts once the route is known. So as soon as the calendar is read (while
``classify_intent`` still waits for the small model) triage starts the agent loop's first model
turn, on its own (``Speculations.start``), with exactly the messages ``full_agent`` will send.
Only that turn: the loop runs on a ``_FirstTurn`` model, which asks once and then stops the loop
before it can run any tool, so nothing with a side effect happens before the route is known.
Until that turn's request has left (its model says so, ``graphs.protocols.request_sent``, at
most ``LAUNCH_WAIT_S``), classify and the calendar's node end wait (``let_go_first``): on one
event loop, the work of two requests at once would delay the one the answer waits for.

- Route ``full_agent``: its loop runs on an ``Adopting`` model, whose first call is answered by
  the speculative turn when it asks exactly what that turn asked (same messages, tools,
  ``max_tokens``, purpose); else the turn is cancelled and the call made afresh.
- Any other route: ``gather`` cancels the turn (``Speculations.cancel``) and waits for the
  cancellation, so its cost is counted before the run moves on. What a cancelled call cost is
  counted by the model itself (``bot.models.guarded``: at its worst case, the reservation it
  held, as the provider's bill for a request it already works on cannot be read back).

A streaming model shows its answer as it is written: the speculative turn's text is kept by a
``_Relay`` and shown only once ``full_agent`` adopts the turn (what came so far at once, the
rest as it comes), so a cancelled turn never shows anything; text that comes with the turn's
end is not shown live, as the reply follows at once.

Nothing of a speculation is recorded in the run: an adopted turn becomes ``full_agent``'s own
first step when ``full_agent`` takes it (the loop records it there), and after a crash the run
goes on without one. Its events are tagged ``speculative`` and ``node: full_agent``; a
``speculation`` event says whether it was adopted, cancelled or discarded.

Usage::

    speculations = Speculations()
    speculations.expect(run_id)                                      # in check_calendar
    speculations.start(run_id, loop, big, messages, tools, caller)   # ... once it has them
    await speculations.let_go_first(run_id)                          # in classify_intent
    await speculations.cancel(run_id, "route quick_reply")           # in gather
    model = speculations.adopting(run_id, big)                       # in full_agent
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable, Sequence
from typing import Any

from graphs.events import EventKind, RunContext
from graphs.graph import Observer
from graphs.protocols import AgentLoop, when_sent

FOR_NODE = "full_agent"
STALE_AFTER_S = 600.0  # a speculation nobody took (its run failed): dropped after this
# How long classify waits for the speculative turn's request to leave: nothing else then
# competes with it for the event loop; past this (a slow calendar, a slow connection) classify
# asks anyway.
LAUNCH_WAIT_S = 0.05


class _FirstTurnTaken(Exception):
    """Stops the speculative loop right after its first model turn: no tool may run."""


class _Relay:
    """The speculative turn's text so far, passed on to the chat only once adopted (to the
    sink ``full_agent`` took from its context, so what the sink traces is filed under it).

    Text is passed on at the next turn of the event loop, the latest only, and not once the
    turn has ended: the answer then goes out as the reply at once, and a draft of it would
    only hold that delivery up (a live write in flight is let finish first). Taking text
    back (``""``) is always passed on."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.sink: Callable[[str], None] | None = None
        self.ended = False  # the turn has its whole answer
        self._due = False  # a pass-on is scheduled

    def __call__(self, so_far: str) -> None:
        self.text = so_far
        if self.sink is not None and not self._due:
            self._due = True
            asyncio.get_running_loop().call_soon(self._pass_on)

    def _pass_on(self) -> None:
        self._due = False
        if self.sink is None or self.text is None:
            return
        if self.text and self.ended:
            return  # the whole answer: the reply itself follows
        self.sink(self.text)

    def attach(self, sink: Callable[[str], None]) -> None:
        """Show the text from now on, starting with what came before the adoption."""
        self.sink = sink
        if self.text is not None:
            self(self.text)


class _FirstTurn:
    """The big model as the speculative loop sees it: one call, kept, then the loop stops."""

    def __init__(self, model: Any, observer: Observer | None, streams: bool) -> None:
        self.model, self.observer = model, observer
        self.request: Request | None = None
        self.reply: Any = None
        self.relay = _Relay() if streams else None  # None: nobody watches this run's answer

    def __getattr__(self, name: str) -> Any:  # provider, name, role: the model's own
        return getattr(self.model, name)

    async def complete(self, messages: Sequence[Any], **options: Any) -> Any:
        """Ask the model what the loop asks, keep the request and the reply, stop the loop."""
        options.pop("observer", None)
        options.pop("on_text", None)  # its text goes to the relay, shown once adopted
        self.request = request_of(messages, options)
        streamed = {"on_text": self.relay} if self.relay is not None else {}
        try:
            self.reply = await self.model.complete(messages, **options,
                                                   observer=self.observer, **streamed)
        finally:
            if self.relay is not None:
                self.relay.ended = True
        raise _FirstTurnTaken


Request = tuple[list[Any], dict[str, Any]]


def request_of(messages: Sequence[Any], options: dict[str, Any]) -> Request:
    """What a model call asks, to compare: the messages and every option but the callbacks
    (an observer sees the call; it does not change what is asked)."""
    return list(messages), {k: v for k, v in options.items() if not callable(v)}


class _Speculation:
    """One started first turn: its task and what it asked."""

    def __init__(self, task: asyncio.Task[None], first: _FirstTurn) -> None:
        self.task = task
        self.first = first
        self.started = time.monotonic()

    def tell(self, outcome: str, why: str | None = None) -> None:
        """One ``speculation`` event, tagged like the turn's own: what became of it."""
        if self.first.observer is not None:
            fields = {"event": EventKind.SPECULATION, "outcome": outcome}
            self.first.observer({**fields, "why": why} if why else fields)

    async def stop(self) -> None:
        """Cancel the turn and wait until it has counted what it cost."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


class Adopting:
    """The big model as ``full_agent``'s loop sees it: the first call is answered by the
    speculative turn if it asks exactly the same; every other call goes to the model."""

    def __init__(self, model: Any, speculation: _Speculation | None) -> None:
        self.model, self._speculation = model, speculation

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def complete(self, messages: Sequence[Any], **options: Any) -> Any:
        """The speculative reply when it answers this very request, else a fresh call."""
        speculation, self._speculation = self._speculation, None
        if speculation is not None:
            if speculation.first.request == request_of(messages, options):
                relay, sink = speculation.first.relay, options.get("on_text")
                if relay is not None and callable(sink):
                    relay.attach(sink)  # its answer, shown as it is written
                await asyncio.gather(speculation.task, return_exceptions=True)
                reply = speculation.first.reply
                if reply is not None and getattr(reply, "refused", None) is None:
                    speculation.tell("adopted")
                    return reply
                why = "it failed" if reply is None else "the budget refused it"
            else:
                await speculation.stop()
                why = "the request changed"
            speculation.tell("discarded", why)
        return await self.model.complete(messages, **options)


class Speculations:
    """The first turns started, by run id, until ``full_agent`` adopts one or it is cancelled."""

    def __init__(self) -> None:
        self._by_run: dict[str, _Speculation] = {}
        # a run whose turn is expected: set once its request has left (or none will), with
        # when the expectation was made
        self._expected: dict[str, tuple[asyncio.Event, float]] = {}

    def expect(self, run_id: str) -> None:
        """Run ``run_id``'s turn is about to start: ``let_go_first`` waits for its request."""
        self._drop_stale()
        self._expected.setdefault(run_id, (asyncio.Event(), time.monotonic()))

    async def let_go_first(self, run_id: str) -> None:
        """When run ``run_id``'s turn is expected, wait (at most ``LAUNCH_WAIT_S``) until its
        request has left, so that nothing competes with it for the event loop before."""
        expected = self._expected.get(run_id)
        if expected is not None and not expected[0].is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(expected[0].wait(), LAUNCH_WAIT_S)

    def sent(self, run_id: str) -> None:
        """Run ``run_id``'s turn has sent its request, or will not: nothing need wait."""
        if (expected := self._expected.get(run_id)) is not None:
            expected[0].set()

    def start(self, run_id: str, loop: AgentLoop, model: Any, messages: list[dict[str, Any]],
              tools: Any, caller: Any, context: RunContext) -> None:
        """Start the loop's first turn for run ``run_id`` (``model``: the chat's choice), with
        no node's context (so that no step of a node is read or written), its events tagged
        for ``full_agent``. The turn's model says when its request has left
        (``graphs.protocols.request_sent``)."""
        self._drop_stale()
        first = _FirstTurn(model, context.early_observer(FOR_NODE, speculative=True),
                           streams=context.live is not None)

        async def first_turn() -> None:
            try:
                with contextlib.suppress(_FirstTurnTaken):
                    await loop(first, messages, tools, caller)
            finally:
                self.sent(run_id)  # over, whether its request left or not

        fresh = contextvars.Context()  # the request-sent hook's context (graphs.protocols)
        fresh.run(when_sent, lambda: self.sent(run_id))
        task = asyncio.get_running_loop().create_task(first_turn(), context=fresh)
        task.add_done_callback(_quiet)
        self._by_run[run_id] = speculation = _Speculation(task, first)
        speculation.tell("started")

    def routed(self, run_id: str | None) -> None:
        """The route is known: nothing waits for the turn to be sent any more."""
        if run_id:
            self._expected.pop(run_id, None)

    async def cancel(self, run_id: str | None, why: str) -> bool:
        """Cancel run ``run_id``'s turn (the route is not ``full_agent``); True if there was one."""
        speculation = self._by_run.pop(run_id, None) if run_id else None
        if speculation is None:
            return False
        done = speculation.task.done()
        await speculation.stop()
        speculation.tell("unused" if done else "cancelled", why)
        return True

    def adopting(self, run_id: str | None, model: Any) -> Adopting:
        """The model for ``full_agent``'s loop: the run's speculative turn first, if any."""
        return Adopting(model, self._by_run.pop(run_id, None) if run_id else None)

    def __len__(self) -> int:
        return len(self._by_run) + len(self._expected)

    def _drop_stale(self) -> None:
        """Forget turns whose run ended without taking or cancelling them (it failed)."""
        now = time.monotonic()
        for run_id, speculation in list(self._by_run.items()):
            if now - speculation.started > STALE_AFTER_S:
                speculation.task.cancel()
                del self._by_run[run_id]
        for run_id, (_, made) in list(self._expected.items()):
            if now - made > STALE_AFTER_S:
                del self._expected[run_id]


def _quiet(task: asyncio.Task[None]) -> None:
    """A failed speculative turn only means no head start: its error is not the run's."""
    if not task.cancelled():
        task.exception()
