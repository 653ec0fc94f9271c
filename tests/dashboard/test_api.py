"""The dashboard's JSON endpoints over plain HTTP, on runs made through the real gateway."""

from __future__ import annotations

import re
from typing import Any

from graphs import END, START, Graph, Node
from tests.dashboard.conftest import CLASSIFY_S, Site, start_gated_run

TRIAGE_PATH = ["classify_intent", "check_calendar", "gather", "quick_reply"]


def edge_classes(svg: str, src: str, dst: str) -> list[str]:
    """The class of each drawn edge from ``src`` to ``dst``."""
    return re.findall(rf'<path class="([^"]*)" d="[^"]*" marker-end="[^"]*" '
                      rf'data-src="{re.escape(src)}" data-dst="{re.escape(dst)}"', svg)


def bars_of(detail: dict[str, Any], node: str) -> list[dict[str, Any]]:
    return [bar for bar in detail["timeline"]["bars"] if bar["node"] == node]


async def test_runs_lists_a_run_with_route_duration_calls_tokens_and_cost(site: Site) -> None:
    reply = await site.desk.social()
    listed = await site.get_json("/api/runs")
    [row] = listed["runs"]
    assert row["id"] == reply.run_id
    assert (row["workflow"], row["status"], row["route"]) == ("triage", "completed",
                                                              "quick_reply")
    assert row["model_calls"] == 2 and row["calls_by_role"] == {"small": 2}
    assert (row["input_tokens"], row["output_tokens"]) == (160, 21)
    assert abs(row["cost_usd"] - 0.0004) < 1e-9
    assert row["duration_s"] >= CLASSIFY_S  # the classifier alone takes that long
    assert listed["routes"] == ["quick_reply"] and listed["waiting"] == 0


async def test_waiting_runs_come_first_and_filters_narrow_the_list(site: Site) -> None:
    draft = await site.desk.draft()
    social = await site.desk.social()
    listed = await site.get_json("/api/runs")
    assert [r["id"] for r in listed["runs"]] == [draft.run_id, social.run_id]  # older, first
    waiting = listed["runs"][0]
    assert waiting["status"] == "waiting" and waiting["options"] == ["Approve", "Revise",
                                                                     "Discard"]
    assert "Dear Ann" in waiting["question"] and listed["waiting"] == 1
    only_waiting = await site.get_json("/api/runs?status=waiting")
    assert [r["id"] for r in only_waiting["runs"]] == [draft.run_id]
    only_quick = await site.get_json("/api/runs?route=quick_reply")
    assert [r["id"] for r in only_quick["runs"]] == [social.run_id]
    assert sorted(only_quick["routes"]) == ["approval", "quick_reply"]
    refused = await site.get_json("/api/runs?status=sleeping", status=400)
    assert "waiting" in refused["error"]


async def test_a_triage_run_has_a_bar_per_node_and_the_fetches_overlap(site: Site) -> None:
    reply = await site.desk.social()
    detail = await site.get_json(f"/api/runs/{reply.run_id}")
    timeline = detail["timeline"]
    assert sorted(timeline["lanes"]) == sorted(TRIAGE_PATH)
    assert set(timeline["lanes"][:2]) == {"classify_intent", "check_calendar"}
    assert [len(bars_of(detail, node)) for node in TRIAGE_PATH] == [1, 1, 1, 1]
    [classify], [calendar] = bars_of(detail, "classify_intent"), bars_of(detail, "check_calendar")
    assert classify["x0"] < calendar["x1"] and calendar["x0"] < classify["x1"]  # side by side
    assert classify["lane"] != calendar["lane"]
    [gather] = bars_of(detail, "gather")
    assert gather["x0"] >= max(classify["x1"], calendar["x1"]) - 1e-6  # the join waits for both
    [call] = classify["calls"]
    assert call["kind"] == "model_call" and "classify" in call["line"]
    assert classify["x0"] <= call["x0"] < call["x1"] <= classify["x1"] + 1e-6
    [hop] = timeline["routes"]
    assert (hop["router"], hop["target"]) == ("gather", "quick_reply")
    assert detail["state"]["reply"] == "Hi! How can I help?"
    assert detail["live"] is False and detail["waits"] == []


async def test_the_graph_highlights_the_path_taken(site: Site) -> None:
    reply = await site.desk.social()
    svg = (await site.get_json(f"/api/runs/{reply.run_id}"))["graph_svg"]
    for node in TRIAGE_PATH:
        assert f'<g class="node completed" data-node="{node}">' in svg
    for node in ("full_agent", "notify_now"):
        assert f'<g class="node idle" data-node="{node}">' in svg
    assert edge_classes(svg, "gather", "quick_reply") == ["edge route taken"]
    assert edge_classes(svg, "gather", "full_agent") == ["edge route"]
    taken = svg.count('class="edge plain taken"')
    assert taken == 5  # START->both fetches, both fetches->gather, quick_reply->END
    assert svg.count('class="edge route taken"') == 1


async def test_a_waiting_run_shows_its_question_and_a_waiting_bar(site: Site) -> None:
    draft = await site.desk.draft()
    detail = await site.get_json(f"/api/runs/{draft.run_id}")
    assert detail["run"]["status"] == "waiting" and detail["live"] is True
    [wait] = detail["waits"]
    assert wait["status"] == "open" and wait["node"] == "approval"
    [approval] = bars_of(detail, "approval")
    assert approval["status"] == "waiting" and "Dear Ann" in approval["question"]
    checks = [bars_of(detail, n)[0] for n in ("check_tone", "check_facts", "check_length")]
    assert max(c["x0"] for c in checks) < min(c["x1"] for c in checks)  # three at once
    assert '<g class="node waiting" data-node="approval">' in detail["graph_svg"]


async def test_a_failed_node_is_reported_with_its_error(site: Site) -> None:
    def explode(state: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("the <b>printer</b> is on fire")

    graph = Graph("breaks")
    graph.add_node(Node("explode", explode))
    graph.add_node(Node("tidy_up", lambda state: {"tidy": True}))
    graph.add_edge(START, "explode")
    graph.add_edge("explode", "tidy_up")
    graph.add_edge("tidy_up", END)
    result = await site.desk.services.flows.runs.start(graph, {}, run_id="broken-run")
    assert result.status == "failed"
    detail = await site.get_json("/api/runs/broken-run")
    [bar] = bars_of(detail, "explode")
    assert bar["status"] == "failed" and "printer" in bar["error"]
    assert detail["run"]["status"] == "failed"
    assert '<g class="node failed" data-node="explode">' in detail["graph_svg"]
    assert detail["blocked"] == ["tidy_up"]  # what the failure kept from running
    assert '<g class="node blocked" data-node="tidy_up">' in detail["graph_svg"]


async def test_a_running_run_shows_the_node_it_is_in_then_its_end(site: Site) -> None:
    gated = await start_gated_run(site.desk.services.flows.runs)
    during = await site.get_json(f"/api/runs/{gated.run_id}")
    assert during["run"]["status"] == "running" and during["live"] is True
    assert [b["status"] for b in bars_of(during, "prepare")] == ["completed"]
    assert [b["status"] for b in bars_of(during, "slow_step")] == ["active"]
    gated.release.set()
    await gated.task
    after = await site.get_json(f"/api/runs/{gated.run_id}")
    assert after["run"]["status"] == "completed" and after["live"] is False
    assert [b["status"] for b in bars_of(after, "slow_step")] == ["completed"]
    assert after["state"]["finished"] is True


async def test_an_unknown_run_is_a_404_with_a_sentence(site: Site) -> None:
    answer = await site.get_json("/api/runs/no-such-run", status=404)
    assert answer == {"error": "There is no such run."}


async def test_pages_carry_no_run_data_and_scripts_only_from_the_site(site: Site) -> None:
    payload = '<img src=x onerror="window.__xss=1">'
    desk = site.desk
    desk.small.enqueue(text='{"intent": "social", "urgency": 0}')
    desk.small.enqueue(text=payload)
    reply = await desk.say(payload)
    async with site.http.get(f"{site.url}runs/{reply.run_id}") as page:
        html = await page.text()
        csp = page.headers["Content-Security-Policy"]
    assert payload not in html and "onerror" not in html
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    detail = await site.get_json(f"/api/runs/{reply.run_id}")
    assert detail["state"]["text"] == payload  # kept as data; the page shows it as text


async def test_an_approved_run_shows_the_wait_then_the_resumed_visit(site: Site) -> None:
    draft = await site.desk.draft()
    done = await site.desk.say("Approve")
    assert done.text.startswith("Approved and saved as note #")
    detail = await site.get_json(f"/api/runs/{draft.run_id}")
    assert detail["run"]["status"] == "completed" and detail["live"] is False
    assert [b["status"] for b in bars_of(detail, "approval")] == ["answered", "completed"]
    assert [b["status"] for b in bars_of(detail, "save_note")] == ["completed"]
    [wait] = detail["waits"]
    assert (wait["status"], wait["answer"]) == ("answered", "Approve")
    svg = detail["graph_svg"]
    assert edge_classes(svg, "approval", "save_note") == ["edge route taken"]
    assert edge_classes(svg, "approval", "feedback") == ["edge route"]
    assert '<g class="node idle" data-node="discarded">' in svg


async def test_a_code_workflow_run_shows_its_pipeline_as_a_matrix(site: Site) -> None:
    from graphs.codefirst import pipeline, workflow

    async def upper(text: str) -> str:
        return text.upper()

    async def exclaim(text: str) -> str:
        return text + "!"

    @workflow(name="shout")
    async def shout(words: list[str]) -> dict[str, Any]:
        return {"reply": " ".join(await pipeline(words, upper, exclaim, name="loud"))}

    done = await site.desk.services.flows.runs.start(shout, {"words": ["hi", "ann"]})
    assert done["reply"] == "HI! ANN!"
    detail = await site.get_json(f"/api/runs/{done.run_id}")
    assert detail["graph_svg"] is None  # no edges to draw: the matrix stands in
    [pipe] = detail["flow"]["pipelines"]
    assert (pipe["name"], pipe["stages"]) == ("loud", ["upper", "exclaim"])
    assert [[cell["status"] for cell in row] for row in pipe["cells"]] == [["done", "done"]] * 2
