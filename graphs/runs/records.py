"""What the run store hands out: typed rows for runs, waits, steps and a run's stored record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphs.graph import RunStatus


@dataclass
class RunInfo:
    """One run as listed: ``frontdesk runs`` and the dashboard read these."""

    id: str
    workflow: str
    status: RunStatus
    route: str | None
    error: str | None
    meta: dict[str, Any]
    started_at: float
    ended_at: float | None

    @property
    def duration_s(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at


@dataclass
class WaitInfo:
    """One question a run waits on (or waited on), with the run's workflow and meta."""

    run_id: str
    key: str
    node: str
    question: str
    options: list[str]
    status: str  # open | answered | expired | cancelled
    created_at: float
    expires_at: float | None
    answer: Any
    answered_by: str | None
    answered_at: float | None
    workflow: str
    meta: dict[str, Any]
    taken: bool = False  # the run has used the answer
    reply_key: str | None = None  # the reply the answer owes its chat (a press's outcome)

    def as_wait(self) -> dict[str, Any]:
        """The wait as a run result lists it (``RunResult.waits``)."""
        return {"run_id": self.run_id, "node": self.node, "key": self.key,
                "question": self.question, "options": self.options,
                "expires_at": self.expires_at}

    def outcome(self) -> dict[str, Any]:
        """What the waiting node gets back: the answer and who gave it, or that it expired;
        with the wait's key (a node that asks several questions in one visit tells them apart)."""
        if self.status == "expired":
            return {"expired": True, "key": self.key}
        return {"answer": self.answer, "by": self.answered_by, "key": self.key}


@dataclass
class StepRow:
    """One recorded call of a code workflow."""

    key: str
    kind: str
    status: str
    fingerprint: str
    parts: dict[str, str]
    output: Any
    error: str | None
    started_at: float
    ended_at: float | None
    pipeline: str | None = None
    item: str | None = None
    stage: str | None = None
    group: str | None = None


@dataclass
class RunRecord:
    """All a run needs to continue, as stored: no count or answer is derived from the log.

    ``state`` is the input with every node's writes applied; ``ready`` and ``waiting`` are the
    last frontier (``waiting``: node -> its open wait); ``visits`` how often each node ran;
    ``answers`` the waits answered (or expired) that the run has not yet taken up, by node.
    """

    run_id: str
    workflow: str
    status: RunStatus
    input: dict[str, Any]
    meta: dict[str, Any]
    max_steps: int
    state: dict[str, Any]
    ready: list[str] = field(default_factory=list)
    waiting: dict[str, WaitInfo] = field(default_factory=dict)
    visits: dict[str, int] = field(default_factory=dict)
    answers: dict[str, WaitInfo] = field(default_factory=dict)
    reruns: set[str] = field(default_factory=set)
