"""The live text of a run's answer: the sink a node streams the reply it is writing to.

A run's state is plain JSON and durable, so it carries no callbacks. The caller that wants
an answer shown as it is written (the gateway) passes a sink to the run
(``Runs.start(..., live=sink)``, ``run_graph(..., live=sink)``); the run's context hands it to
the nodes whose output *is* the answer (triage's ``quick_reply`` and ``full_agent``, the
plain loop: ``context.live_text()``), which give it to the model call that may write the final
answer. Nothing outside that run sees it.

A sink is called with the whole text so far (not a delta); ``""`` means "start over": what
was shown is not the answer after all (a turn that turned out to ask for tools, a retry). A
sink that traces what it shows (``first_visible``) is a ``WatchedSink``: the node that takes
it says which observer its events go to.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from graphs.graph import Observer, TextSink

__all__ = ["TextSink", "WatchedSink"]


@runtime_checkable
class WatchedSink(Protocol):
    """A sink with events of its own: ``watch`` says where they go (the streaming node's)."""

    def __call__(self, text: str) -> None: ...
    def watch(self, observer: Observer) -> None: ...
