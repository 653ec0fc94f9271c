"""`frontdesk eval` through the real entry point (``bot.cli.main``): offline and against the
fake OpenAI server, a malformed line, the --json contract, the cost refusal, nothing written
but the spend, and Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.eval import Progress
from bot.cli.main import main
from bot.evaluation.labelled import sample
from bot.models.costs import SpendLog
from bot.schema import open_database
from tests.fakes.openai_server import FakeOpenAIServer, hung_reply, text_reply
from tests.fakes.scripted_server import RecordedRequest, ScriptedReply
from tests.support.child_process import FOREIGN, clean_env

CONTRACT = {"n", "accuracy", "per_route", "confusion", "calls", "cost_usd", "p50_ms", "p99_ms",
            "wrong"}
# What the fake model answers to each text, and what the set says each one should get.
ANSWERS = {"hello!": ("social", 0.0), "what is on my agenda?": ("question", 0.1),
           "the basement is flooding, call me": ("urgent", 1.0),
           "thanks, and book me a table at 8": ("social", 0.0)}  # the model is wrong here
SET = [{"text": "hello!", "route": "quick_reply", "sender": "guest"},
       {"text": "what is on my agenda?", "route": "full_agent", "sender": "owner", "id": 7},
       {"text": "the basement is flooding, call me", "route": "notify_now"},
       {"text": "thanks, and book me a table at 8", "route": "full_agent"}]


def answer_by_text(request: RecordedRequest) -> ScriptedReply:
    """The classify JSON for the message's text; a message with "slow" never gets one."""
    text = (request.json or {})["messages"][-1]["content"]
    if "slow" in text:
        return hung_reply()
    intent, urgency = ANSWERS.get(text, ("question", 0.0))
    return text_reply(json.dumps({"intent": intent, "urgency": urgency, "reply": ""}),
                      prompt_tokens=300, completion_tokens=20)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean environment (no key, no .env) with FRONTDESK_HOME under ``tmp_path``."""
    for key in list(os.environ):
        if key.startswith(FOREIGN):
            monkeypatch.delenv(key)
    monkeypatch.setenv("FRONTDESK_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def provider(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The fake OpenAI server as the configured provider, answering by the message's text."""
    with FakeOpenAIServer() as server:
        server.responder = answer_by_text
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-eval-test-key")
        yield server


def write_set(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def frontdesk(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def tables_with_rows(database: Path) -> set[str]:
    with open_database(database) as db:
        names = [row[0] for row in db.reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name for name in names
                if db.reader.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]}


def test_the_sample_offline_prints_every_figure(home: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = frontdesk(capsys, "--sample", "--offline")
    assert (code, err) == (0, "")
    assert out.startswith(f"the offline router: {len(sample())} messages\naccuracy ")
    for part in ("precision", "recall", "confusion (rows: expected, columns: got)",
                 "model calls 0, tokens 0 in / 0 out, cost $0.00", "time per message: p50 "):
        assert part in out
    code, out, _ = frontdesk(capsys, "--sample", "--offline", "--json")
    data = json.loads(out)  # exactly one object, nothing else on stdout
    assert code == 0 and set(data) >= CONTRACT
    assert (data["n"], data["calls"], data["cost_usd"]) == (len(sample()), 0, 0.0)
    assert set(data["per_route"]) == set(data["confusion"]) == {
        "quick_reply", "full_agent", "notify_now"}
    assert sum(sum(row.values()) for row in data["confusion"].values()) == data["n"]
    assert len(data["wrong"]) == data["n"] - round(data["accuracy"] * data["n"])
    assert tables_with_rows(home / "frontdesk.db") == tables_with_rows(home / "fresh.db")


def test_a_malformed_line_is_one_error_and_nothing_runs(
        provider: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_set(tmp_path / "set.jsonl", SET)
    path.write_text(path.read_text() + '{"text": "ok", "route": "later"}\n')
    code, out, err = frontdesk(capsys, str(path), "--json")
    assert (code, out) == (2, "")
    assert err == (f"frontdesk eval: {path}, line 5: \"route\" must be one of quick_reply, "
                   "full_agent, notify_now (got 'later')\n")
    assert provider.requests == []
    assert frontdesk(capsys, "--json") == (2, "", "frontdesk eval: give a FILE of labelled "
                                                  "messages (JSON Lines), or --sample\n")


def test_a_paid_run_asks_triages_classify_and_counts_only_the_spend(
        provider: FakeOpenAIServer, home: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = frontdesk(capsys, str(write_set(tmp_path / "set.jsonl", SET)), "--json")
    assert code == 0
    assert err.startswith("frontdesk eval: 4 classify calls to openai/gpt-4.1-mini, "
                          "estimated at most $0.00")
    data = json.loads(out)
    assert (data["n"], data["accuracy"], data["calls"]) == (4, 0.75, 4)
    assert data["per_route"]["full_agent"] == {"n": 2, "correct": 1, "precision": 1.0,
                                               "recall": 0.5}
    assert data["per_route"]["notify_now"]["correct"] == 1  # a guest's urgent message
    assert data["wrong"] == [{"line": 4, "text": "thanks, and book me a table at 8",
                              "expected": "full_agent", "got": "quick_reply"}]
    assert data["tokens"] == {"input": 1200, "output": 80}
    assert data["p99_ms"] >= data["p50_ms"] > 0
    sent = [request.json or {} for request in provider.requests]
    assert len(sent) == 4  # each triage's classify request: its prompt, its cap
    assert all(body["messages"][0]["content"].startswith("You sort incoming messages")
               and body.get("max_completion_tokens", body.get("max_tokens")) == 200
               for body in sent)
    # every call counted against the daily budget, and nothing else written: no run, no
    # note, no inbox line, no reply
    with open_database(home / "frontdesk.db") as db:
        spend = SpendLog(db)
        assert spend.spent() == pytest.approx(data["cost_usd"]) and spend.spent() > 0
        assert spend.by_model()[0][2] == 4
    fresh = tables_with_rows(tmp_path / "fresh.db")
    assert tables_with_rows(home / "frontdesk.db") - fresh == {"costs_calls"}


def test_a_run_estimated_past_the_limit_is_refused_in_one_line(
        provider: FakeOpenAIServer, home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write_set(tmp_path / "set.jsonl", SET))
    code, out, err = frontdesk(capsys, path, "--max-usd", "0.0001")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(
        "frontdesk eval: 4 classify calls to openai/gpt-4.1-mini are estimated at up to $0.00")
    assert "past --max-usd $0.0001; raise --max-usd" in err
    # no --max-usd: what is left of today's budget is the limit
    monkeypatch.setenv("FRONTDESK_DAILY_BUDGET_USD", "1")
    with open_database(home / "frontdesk.db") as db:
        SpendLog(db).record(provider="openai", model="gpt-4.1", role="big", purpose="agent",
                            input_tokens=1, output_tokens=1, cost_usd=0.9999)
    code, out, err = frontdesk(capsys, path)
    assert (code, out) == (2, "")
    assert "past what is left of today's budget ($0.0001 of $1.00" in err
    assert provider.requests == []
    code, out, _ = frontdesk(capsys, path, "--max-usd", "0.5", "--json")  # the owner says so
    assert code == 0 and json.loads(out)["n"] == 4
    code, out, err = frontdesk(capsys, path, "--max-usd", "-1")
    assert (code, out) == (2, "")
    assert err == "frontdesk eval: --max-usd must be a number of dollars, 0 or more (got -1.0)\n"


def test_each_call_is_held_to_the_daily_budget_like_any_other(
        provider: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the owner lets the run spend more than the day has left: each call is still refused
    monkeypatch.setenv("FRONTDESK_DAILY_BUDGET_USD", "0.0001")
    path = str(write_set(tmp_path / "set.jsonl", SET))
    code, out, _ = frontdesk(capsys, path, "--max-usd", "1", "--json")
    data = json.loads(out)
    assert code == 0 and provider.requests == []
    assert (data["calls"], data["cost_usd"], data["classified_by_rules"]) == (0, 0.0, 4)
    code, out, _ = frontdesk(capsys, path, "--max-usd", "1")
    assert "; 4 routed by the offline rules instead (the model's reply unreadable, the " \
           "budget spent or the provider down)" in out


def test_ctrl_c_prints_what_was_measured_so_far(tmp_path: Path) -> None:
    rows = [{"text": "hello!", "route": "quick_reply"},
            {"text": "what is on my agenda?", "route": "full_agent"},
            *({"text": f"slow message {n}", "route": "full_agent"} for n in range(4))]
    path = write_set(tmp_path / "set.jsonl", rows)
    with FakeOpenAIServer() as server:
        server.responder = answer_by_text
        env = clean_env(FRONTDESK_HOME=str(tmp_path / "home"), OPENAI_BASE_URL=server.base_url,
                        OPENAI_API_KEY="sk-eval-test-key")
        process = subprocess.Popen([sys.executable, "-m", "bot.cli.main", "eval", str(path),
                                    "--json"], cwd=tmp_path, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:  # the two quick ones answered, the four slow ones asked and waiting
            server.wait_for_sync(lambda: len(server.requests) == 6 and len(server.billed) == 2,
                                 timeout=30)
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, err
    data = json.loads(out)
    assert (data["n"], data["of"], data["complete"], data["wrong"]) == (2, 6, False, [])
    assert "stopped; the figures are of the 2 of 6 messages measured" in err
    with open_database(tmp_path / "home" / "frontdesk.db") as db:
        spend = SpendLog(db)
        assert spend.held() == 0.0  # the cancelled calls too are counted, at their worst case
        assert spend.by_model()[0][2] == 6


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_on_a_terminal_only() -> None:
    screen = Terminal()
    bar = Progress(screen, 4)
    for _ in range(3):
        bar.step(None)  # type: ignore[arg-type]  # the bar counts, it reads no outcome
    assert screen.getvalue().split("\r")[1:] == [
        "[#######.......................] 1/4", "[###############...............] 2/4",
        "[######################........] 3/4"]
    bar.finish()
    assert screen.getvalue().endswith("\r\x1b[K")  # gone before the figures are printed
    pipe = io.StringIO()
    piped = Progress(pipe, 4)
    piped.step(None)  # type: ignore[arg-type]
    piped.finish()
    assert pipe.getvalue() == ""
