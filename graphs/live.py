"""The live text of a run's answer: where a node streams the reply it is writing, per run.

A run's state is plain JSON and durable, so it carries no callbacks. The caller that wants
an answer shown as it is written (the gateway) opens ``streaming_to(sink)`` around the run;
the nodes whose output *is* the answer (triage's ``quick_reply`` and ``full_agent``, the
plain loop) ask ``live_text()`` for the sink and hand it to the model call that may write the
final answer. The engine's tasks copy the context they start in, so every node of that run
sees the same sink, and nothing outside it does.

A sink is called with the whole text so far (not a delta); ``""`` means "start over": what
was shown is not the answer after all (a turn that turned out to ask for tools, a retry).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

TextSink = Callable[[str], None]

_sink: contextvars.ContextVar[TextSink | None] = contextvars.ContextVar("live_text",
                                                                        default=None)


def live_text() -> TextSink | None:
    """The sink the current run's answer streams to, or None when nobody is watching."""
    return _sink.get()


@contextlib.contextmanager
def streaming_to(sink: TextSink | None) -> Iterator[None]:
    """Runs started inside this block stream their answer to ``sink`` (None: to nobody)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)
