"""The dashboard in a real headless chromium (Debian's), driven over the DevTools protocol.

The bar geometry is read from the rendered page (``getBoundingClientRect``), so these tests
fail if the timeline draws the parallel fetches one after the other, or not at all.
"""

from __future__ import annotations

import json
from typing import Any

from tests.dashboard.cdp import Chromium, Page
from tests.dashboard.conftest import ARTIFACTS, Site, start_gated_run, with_token

READY = "document.body.dataset.ready === '1'"
BARS = """Array.from(document.querySelectorAll('#timeline .bar')).map((bar) => {
    const box = bar.getBoundingClientRect();
    return {node: bar.dataset.node, status: bar.dataset.status, left: box.left,
            right: box.right, top: box.top, bottom: box.bottom,
            calls: bar.querySelectorAll('.call').length};
})"""


async def open_page(page: Page, url: str) -> None:
    """Open ``url`` by its link with the token (which the dashboard turns into a cookie)."""
    await page.goto(with_token(url))
    await page.wait_for(READY)


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["left"] < b["right"] and b["left"] < a["right"])


async def test_the_runs_page_lists_a_run_made_here_and_marks_the_waiting_one(
        site: Site, chromium: Chromium) -> None:
    social = await site.desk.social()
    draft = await site.desk.draft()
    async with chromium.page() as page:
        await open_page(page, site.url)
        rows = await page.evaluate("""Array.from(document.querySelectorAll('tr.run')).map(
            (row) => [row.dataset.runId, row.dataset.status, row.className,
                      row.innerText])""")
        assert [r[0] for r in rows] == [draft.run_id, social.run_id]  # waiting first
        assert rows[0][1] == "waiting" and "waiting" in rows[0][2].split()
        assert "waiting for approval" in rows[0][3]
        assert "triage" in rows[1][3] and "quick_reply" in rows[1][3] and "$0.0004" in rows[1][3]
        question = await page.evaluate("document.querySelector('tr.question').innerText")
        assert "Dear Ann" in question and "Approve / Revise / Discard" in question
        await page.screenshot(ARTIFACTS / "dashboard-runs.png")
        await page.evaluate("document.getElementById('status').value = 'completed';"
                            "document.getElementById('status').dispatchEvent("
                            "new Event('change'))")
        await page.wait_for("document.querySelectorAll('tr.run').length === 1")
        assert await page.evaluate("location.search") == "?status=completed"
        assert page.errors == []


async def test_a_run_page_shows_a_bar_per_node_with_the_fetches_side_by_side(
        site: Site, chromium: Chromium) -> None:
    reply = await site.desk.social()
    async with chromium.page() as page:
        await open_page(page, f"{site.url}runs/{reply.run_id}")
        bars = await page.evaluate(BARS)
        assert sorted(b["node"] for b in bars) == sorted(
            ["classify_intent", "check_calendar", "gather", "quick_reply"])  # one bar each
        by_node = {b["node"]: b for b in bars}
        classify, calendar = by_node["classify_intent"], by_node["check_calendar"]
        assert overlap(classify, calendar)  # at the same time...
        assert classify["top"] != calendar["top"]  # ...in their own lanes
        assert by_node["gather"]["left"] >= max(classify["right"], calendar["right"]) - 1
        assert classify["calls"] == 1 and by_node["quick_reply"]["calls"] == 1
        assert all(b["status"] == "completed" for b in bars)
        route = await page.evaluate("document.querySelector('#timeline .route').textContent")
        assert route == "→ quick_reply"
        highlighted = await page.evaluate(
            "Array.from(document.querySelectorAll('#graph .node.completed'))"
            ".map((n) => n.dataset.node)")
        assert set(highlighted) >= {"classify_intent", "check_calendar", "gather",
                                    "quick_reply"}
        assert "full_agent" not in highlighted
        assert await page.evaluate(
            "document.querySelectorAll('#graph path.edge.taken').length") == 6
        state = json.loads(await page.evaluate("document.getElementById('state').textContent"))
        assert state["reply"] == "Hi! How can I help?"
        await page.screenshot(ARTIFACTS / "dashboard-run.png")
        assert page.errors == []


async def test_a_waiting_run_page_shows_the_question_and_a_waiting_bar(
        site: Site, chromium: Chromium) -> None:
    draft = await site.desk.draft()
    async with chromium.page() as page:
        await open_page(page, f"{site.url}runs/{draft.run_id}")
        assert await page.evaluate("document.body.dataset.status") == "waiting"
        assert await page.evaluate("document.getElementById('wait').hidden") is False
        wait_text = await page.evaluate("document.getElementById('wait').innerText")
        assert "Dear Ann" in wait_text and "Approve / Revise / Discard" in wait_text
        bars = {b["node"]: b for b in await page.evaluate(BARS)}
        assert bars["approval"]["status"] == "waiting"
        checks = [bars[n] for n in ("check_tone", "check_facts", "check_length")]
        assert overlap(checks[0], checks[1]) and overlap(checks[1], checks[2])
        assert await page.evaluate(
            "document.querySelector('#graph .node.waiting').dataset.node") == "approval"
        await page.screenshot(ARTIFACTS / "dashboard-waiting.png")
        assert page.errors == []


async def test_a_running_run_updates_live_without_a_reload(
        site: Site, chromium: Chromium) -> None:
    gated = await start_gated_run(site.desk.services.flows.runs)
    async with chromium.page() as page:
        await open_page(page, f"{site.url}runs/{gated.run_id}")
        await page.evaluate("window.sameDocument = true")
        assert await page.evaluate("document.body.dataset.status") == "running"
        live = {b["node"]: b["status"] for b in await page.evaluate(BARS)}
        assert live == {"prepare": "completed", "slow_step": "active"}
        gated.release.set()
        await gated.task
        await page.wait_for("document.body.dataset.status === 'completed'")
        assert await page.evaluate("window.sameDocument") is True  # polled, not reloaded
        done = {b["node"]: b["status"] for b in await page.evaluate(BARS)}
        assert done == {"prepare": "completed", "slow_step": "completed",
                        "finish": "completed"}
        assert page.errors == []


async def test_errors_are_red_and_user_text_stays_text(site: Site, chromium: Chromium) -> None:
    payload = '<img src=x onerror="window.__xss = 1"><script>window.__xss = 2</script>'
    desk = site.desk
    desk.small.enqueue(text='{"intent": "social", "urgency": 0}')
    desk.small.enqueue(error=RuntimeError(payload))  # the quick reply fails with it
    reply = await desk.say(payload)
    async with chromium.page() as page:
        await open_page(page, f"{site.url}runs/{reply.run_id}")
        assert await page.evaluate("window.__xss === undefined")
        assert await page.evaluate("document.querySelectorAll('main img, main script')"
                                   ".length") == 0
        state = json.loads(await page.evaluate("document.getElementById('state').textContent"))
        assert state["text"] == payload
        failed_call = await page.evaluate(
            "getComputedStyle(document.querySelector('.call-line.failed')).color")
        assert failed_call == "rgb(217, 68, 63)"  # the --fail red
        await page.goto(site.url)
        await page.wait_for(READY)
        assert await page.evaluate("window.__xss === undefined")
        assert page.errors == []


async def test_an_agent_node_shows_its_model_and_tool_calls(site: Site,
                                                            chromium: Chromium) -> None:
    reply = await site.desk.task()
    async with chromium.page(width=1280, height=1040) as page:
        await open_page(page, f"{site.url}runs/{reply.run_id}")
        marks = await page.evaluate("""Array.from(document.querySelectorAll(
            '#timeline .bar[data-node="full_agent"] .call')).map((mark) => {
                const box = mark.getBoundingClientRect();
                return [mark.className, box.left, box.right];
            })""")
        assert [m[0] for m in marks] == ["call model", "call tool", "call model"]
        assert marks[0][2] <= marks[1][1] + 1 and marks[1][2] <= marks[2][1] + 1  # in order
        calls = await page.evaluate("""Array.from(document.querySelectorAll(
            '.step[data-node="full_agent"] .call-line')).map((line) => line.textContent)""")
        assert calls[1].startswith("tool remember(") and "ok" in calls[1]
        assert "900→40 tokens" in calls[0] and "$0.0033" in calls[0]
        # the picture in the README (docs/dashboard-run.png is a copy of it)
        await page.screenshot(ARTIFACTS / "dashboard-agent-run.png", full_page=False)
        assert page.errors == []
