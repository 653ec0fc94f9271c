"""The HTML report: one page that fetches nothing and escapes what others wrote, written by
`frontdesk eval --report` and opened in a real headless chromium (Debian's), where the heat map
of the confusion matrix is found with its nine cells."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.dashboard.cdp import Chromium
from tests.support.child_process import FOREIGN

HOSTILE = '<script>document.title = "owned"</script><img src=x onerror=alert(1)> hi &amp;'
ROWS = [{"text": "hello there!", "route": "quick_reply"},
        {"text": "what is on my agenda today?", "route": "full_agent", "sender": "owner"},
        {"text": "URGENT: the office is flooding, call me now", "route": "notify_now"},
        {"text": HOSTILE, "route": "notify_now"}]
CELLS = """Array.from(document.querySelectorAll('svg#confusion rect.cell')).map((cell) => {
    const box = cell.getBoundingClientRect();
    return [cell.dataset.expected, cell.dataset.got, Number(cell.dataset.count),
            box.width, box.height];
})"""


@pytest.fixture
def report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> Path:
    """`frontdesk eval SET --offline --report PATH` on a set with a hostile message."""
    for key in list(os.environ):
        if key.startswith(FOREIGN):
            monkeypatch.delenv(key)
    monkeypatch.setenv("FRONTDESK_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    labelled = tmp_path / "set.jsonl"
    labelled.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    path = tmp_path / "report.html"
    assert main(["eval", str(labelled), "--offline", "--report", str(path)]) == 0
    assert f"report written to {path}" in capsys.readouterr().err
    return path


def test_the_page_fetches_nothing_and_escapes_what_others_wrote(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    assert re.findall(r"<script|<[^>]*\s(?:src|href)=|@import|url\(", page, re.I) == []
    assert "&lt;script&gt;document.title = &quot;owned&quot;&lt;/script&gt;" in page
    assert "&amp;amp;" in page  # escaped once more: shown as typed


def test_a_missing_folder_for_the_report_is_refused_before_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FRONTDESK_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--sample", "--offline", "--report", "nowhere/r.html"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "frontdesk eval: --report nowhere/r.html: its folder does not exist\n"


async def test_the_report_renders_with_its_heat_map_in_headless_chromium(
        report: Path, chromium: Chromium) -> None:
    async with chromium.page() as page:
        await page.goto(report.as_uri())
        await page.wait_for("document.readyState === 'complete'")
        cells = await page.evaluate(CELLS)
        assert len(cells) == 9  # one per pair of routes
        assert all(width > 50 and height > 50 for *_, width, height in cells)  # drawn
        counts = {(expected, got): count for expected, got, count, *_ in cells}
        assert sum(counts.values()) == len(ROWS)
        assert counts["quick_reply", "quick_reply"] == 1
        bars = await page.evaluate("document.querySelectorAll('svg#routes rect.bar').length")
        assert bars == 6  # precision and recall of each route
        wrong = await page.evaluate("document.querySelector('#wrong').innerText")
        assert '<script>document.title = "owned"</script>' in wrong  # shown as text
        assert await page.evaluate("document.title") == "Triage evaluation: the offline router"
        assert await page.evaluate("document.images.length") == 0
        assert "%" in await page.evaluate("document.querySelector('#accuracy b').innerText")
        assert page.errors == []
