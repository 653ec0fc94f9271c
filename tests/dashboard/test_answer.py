"""The dashboard inside `frontdesk run`: who wrote each run and their first words,
today's spend against the daily budget, and the owner answering a waiting approval with a
POST that needs the CSRF token the page was given (and this host's Origin)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import aiohttp
import pytest

from bot.dashboard.actions import answer_wait, spend_reader
from bot.dashboard.server import DashboardData, start_dashboard
from bot.models.costs import SpendLog
from graphs.runs.reading import RunReading
from tests.dashboard.cdp import Chromium
from tests.dashboard.conftest import BEARER, TOKEN, Desk, Site
from tests.dashboard.test_browser import open_page


@pytest.fixture
async def live(desk: Desk) -> AsyncIterator[Site]:
    """The dashboard as `frontdesk run` serves it: it can answer, and it reads the spend."""
    reader = RunReading(desk.services.db.reader)
    budgeted = replace(desk.services.settings, daily_budget_usd=2.5)

    async def answer(run_id: str, option: str) -> tuple[bool, str]:
        return await answer_wait(desk.services.flows.store, desk.services.admission.access.owners,
                                 desk.services.delivery.buttons, desk.gateway, run_id, option)

    spend = spend_reader(budgeted, desk.services.db)
    data = DashboardData(reader, desk.services.flows.runs.registry, spend, answer)
    server = await start_dashboard(data, port=0, token=TOKEN)
    async with aiohttp.ClientSession(headers=BEARER) as http:
        yield Site(desk, server, http)
    await server.close()


async def post(site: Site, run_id: str, body: object, headers: dict[str, str]) -> tuple[int, dict]:
    async with site.http.post(f"{site.url}api/runs/{run_id}/answer", json=body,
                              headers=headers) as response:
        return response.status, await response.json()


async def test_the_list_says_who_wrote_what_and_today_s_spend(live: Site) -> None:
    SpendLog.open(live.desk.services.settings).record(
        provider="openai", model="gpt-4.1", role="big", purpose=None, input_tokens=10,
        output_tokens=10, cost_usd=0.75)
    await live.desk.social("hello there, how are you today?")
    listed = await live.get_json("/api/runs")
    [row] = listed["runs"]
    assert row["who"] == "owner" and row["words"] == "hello there, how are you today?"
    assert listed["spend"]["spent_usd"] == 0.75 and listed["spend"]["budget_usd"] == 2.5
    assert listed["can_answer"] is True and len(listed["csrf"]) >= 20


async def test_answering_needs_the_csrf_token_and_this_origin(live: Site) -> None:
    draft = await live.desk.draft()
    assert draft.run_id is not None
    csrf = (await live.get_json("/api/runs"))["csrf"]
    status, body = await post(live, draft.run_id, {"answer": "Approve"}, {})
    assert status == 403 and "reload" in body["error"]
    status, body = await post(live, draft.run_id, {"answer": "Approve"},
                              {"X-CSRF-Token": csrf, "Origin": "http://evil.example"})
    assert status == 403
    assert live.desk.services.flows.store.run(draft.run_id).status == "waiting"  # type: ignore[union-attr]
    status, body = await post(live, draft.run_id, {"answer": "Maybe"}, {"X-CSRF-Token": csrf})
    assert status == 409 and "Approve" in body["message"]
    status, body = await post(live, draft.run_id, {"answer": "Approve"}, {"X-CSRF-Token": csrf})
    assert status == 200 and body == {"accepted": True, "message": "Approve ✓"}
    run = live.desk.services.flows.store.run(draft.run_id)
    assert run is not None and run.status == "completed"
    assert live.desk.services.memory.search("owner", "Ann", 5)  # the approved draft was saved
    status, body = await post(live, draft.run_id, {"answer": "Approve"}, {"X-CSRF-Token": csrf})
    assert status == 409 and "not waiting" in body["message"]


async def test_the_standalone_dashboard_only_reads(site: Site) -> None:
    draft = await site.desk.draft()
    csrf = (await site.get_json("/api/runs"))["csrf"]
    status, body = await post(site, str(draft.run_id), {"answer": "Approve"},
                              {"X-CSRF-Token": csrf})
    assert status == 409 and "only reads" in body["error"]


async def test_the_owner_approves_from_the_page(live: Site, chromium: Chromium) -> None:
    draft = await live.desk.draft()
    async with chromium.page() as page:
        await open_page(page, live.url)
        who = await page.evaluate("document.querySelector('tr.run td.from').innerText")
        assert "owner" in who and "a thank-you note to Ann" in who
        summary = await page.evaluate("document.getElementById('summary').textContent")
        assert "of $2.5000 budget" in summary
        await page.evaluate("document.querySelector('button.answer[data-option=Approve]')"
                            ".click()")
        await page.wait_for("document.querySelectorAll('button.answer').length === 0")
    run = live.desk.services.flows.store.run(str(draft.run_id))
    assert run is not None and run.status == "completed"
