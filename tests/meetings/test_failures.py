"""A meeting run that fails closes its request and is logged: 40 presses of *None of these*
(the engine's limit), and ``propose_meeting`` with ``minutes: "abc"``. The guest can ask again
at once, and the log line the guest's "It has been logged" promises exists."""

from __future__ import annotations

import logging

import pytest

from bot.chat.decisions import FAILURE
from bot.meetings.failures import FAILED_NOTE
from bot.tools.registry import Caller
from tests.meetings.conftest import GUEST, DeskFactory


def failure_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "bot.meetings.failures" and r.levelno >= logging.ERROR]


async def test_forty_presses_of_none_of_these_close_the_request_and_log_it(
        make_desk: DeskFactory, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    desk = await make_desk(FRONTDESK_MEETING_DAYS="30", FRONTDESK_WRITES_PER_SECOND="1000")
    first = await desk.send("/meet budget")
    assert first.buttons[-1].label == "None of these"
    for _ in range(60):  # the engine's limit ends the run well before this
        if desk.to(GUEST)[-1] == FAILURE:
            break
        await desk.press(desk.adapter.last_buttons(GUEST)[-1], GUEST)
    assert desk.to(GUEST)[-1] == FAILURE  # "It has been logged; please try again"
    [request] = desk.app.meetings.store.listing()
    assert (request.status, request.note) == ("expired", FAILED_NOTE)
    [line] = failure_lines(caplog)
    assert first.run_id and first.run_id in line and "is closed" in line
    again = await desk.send("/meet budget")
    assert "open already" not in again.text and again.buttons[-1].label == "None of these"


async def test_propose_meeting_with_minutes_abc_closes_the_request_and_logs_it(
        make_desk: DeskFactory, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    desk = await make_desk()
    caller = Caller(f"telegram:{GUEST}", False, "telegram", GUEST, "Bob", "m1", "call-1")
    told = await desk.app.chat.meetings.propose(caller, "budget", "abc")  # type: ignore[arg-type]
    assert "failed" in told and "logged" in told and "ask again" in told
    [request] = desk.app.meetings.store.listing()
    assert (request.status, request.note) == ("expired", FAILED_NOTE)
    [line] = failure_lines(caplog)
    assert "invalid literal for int()" in line and "is closed" in line
    again = await desk.send("/meet budget")
    assert "open already" not in again.text and again.buttons[-1].label == "None of these"
