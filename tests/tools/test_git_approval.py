"""mcp-server-git on a temporary repository: read-only tools run, side effects wait for the owner.

The fake big model names the tools; the reference server does the git work for real, so the
repository's commit count is what the assertions read.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.harness import GUEST, OWNER, OWNER_CHAT
from tests.tools.conftest import McpHarnessFactory, commits, git, git_server


async def test_git_status_runs_without_asking(mcp_harness: McpHarnessFactory,
                                              repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)})
    h.big.enqueue(tool_calls=[("git__git_status", {"repo_path": str(repo)})])
    h.big.enqueue("One file is staged.")
    reply = await h.send("what is the state of my notes repo?")
    assert reply.text == "One file is staged." and not reply.buttons
    observation = h.big.history[1].messages[-1]
    assert observation.role == "tool" and "b.txt" in observation.content
    assert "untrusted" in observation.content


async def test_commit_waits_for_approve_then_commits_once(mcp_harness: McpHarnessFactory,
                                                          repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)})
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo),
                                                   "message": "add b"})])
    h.big.enqueue("Committed.")
    reply = await h.send("commit the staged file")
    assert [b.label for b in reply.buttons] == ["Approve", "Deny"]
    assert "`git_commit`" in reply.text and "server `git`" in reply.text and '"add b"' in reply.text
    assert commits(repo) == 1  # nothing happened before the owner said so
    approve = next(b for b in reply.buttons if b.label == "Approve")
    pressed = await h.gateway.press("telegram", OWNER, approve.token)
    assert pressed.accepted
    assert commits(repo) == 2
    assert h.adapter.to(OWNER)[-1] == "Committed."
    observation = h.big.history[1].messages[-1]
    assert observation.role == "tool" and "committed successfully" in observation.content
    sent = len(h.adapter.to(OWNER))
    await h.gateway.press("telegram", OWNER, approve.token)  # pressed again (a replay)
    assert commits(repo) == 2 and len(h.adapter.to(OWNER)) == sent


async def test_deny_commits_nothing_and_tells_the_model(mcp_harness: McpHarnessFactory,
                                                        repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)})
    h.big.enqueue(tool_calls=[("git__git_add", {"repo_path": str(repo), "files": ["a.txt"]})])
    h.big.enqueue("Okay, I left it.")
    reply = await h.send("stage a.txt")
    deny = next(b for b in reply.buttons if b.label == "Deny")
    assert (await h.gateway.press("telegram", OWNER, deny.token)).accepted
    assert h.adapter.to(OWNER)[-1] == "Okay, I left it."
    assert "declined" in h.big.history[1].messages[-1].content
    assert commits(repo) == 1


async def test_typed_answer_approves_and_other_messages_leave_it_waiting(
        mcp_harness: McpHarnessFactory, repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)})
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "b"})])
    first = await h.send("commit it")
    assert first.buttons
    other = await h.send("and what else is new?")  # a new message; the approval keeps waiting
    assert other.text.startswith("agent:") and commits(repo) == 1
    h.big.enqueue("Done.")
    typed = await h.send("1")  # the console way: the option's number (or its word)
    assert typed.text == "Done." and commits(repo) == 2


async def test_trust_and_approve_lists_override_the_annotations(mcp_harness: McpHarnessFactory,
                                                                repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo, trust=["git_commit"], approve=["git_log"])})
    policy = {t.name: t.needs_approval for t in h.services.tools.registry.listing() if t.server}
    assert policy["git__git_commit"] is False and policy["git__git_log"] is True
    assert policy["git__git_status"] is False and policy["git__git_add"] is True
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "b"})])
    h.big.enqueue("Committed.")
    assert (await h.send("commit it")).text == "Committed." and commits(repo) == 2


async def test_a_guest_cannot_see_or_call_an_owner_tool(mcp_harness: McpHarnessFactory,
                                                        repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo, guests=["git_status"])})
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "x"})])
    h.big.enqueue("I can't do that.")
    reply = await h.send("commit the owner's repo", user=GUEST)
    assert not reply.buttons and reply.text == "I can't do that."
    offered = {spec.name for spec in h.big.history[0].tools or []}
    assert "git__git_status" in offered and "git__git_commit" not in offered
    assert "not allowed" in h.big.history[1].messages[-1].content
    assert commits(repo) == 1


async def test_a_guests_call_that_needs_approval_asks_the_owner(
        mcp_harness: McpHarnessFactory, repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo, guests=["git_status", "git_add"])})
    (repo / "c.txt").write_text("third\n")
    h.big.enqueue(tool_calls=[("git__git_add", {"repo_path": str(repo), "files": ["c.txt"]})])
    h.big.enqueue("Staged c.txt.")
    reply = await h.send("please stage c.txt", user=GUEST, name="Ann")
    assert not reply.buttons and "asked" in reply.text
    asked = h.adapter.to(OWNER_CHAT)[-1]
    assert "git_add" in asked and "Ann" in asked and "c.txt" in asked
    assert "c.txt" not in git(repo, "diff", "--cached", "--name-only")
    (wait,) = h.services.flows.store.waits("open")
    guest_press = h.services.delivery.buttons.for_wait(wait.run_id, wait.as_wait())[0]
    assert not (await h.gateway.press("telegram", GUEST, guest_press.token)).accepted
    assert "c.txt" not in git(repo, "diff", "--cached", "--name-only")
    approve = next(b for b in h.services.delivery.buttons.for_wait(wait.run_id, wait.as_wait())
                   if b.label == "Approve")
    assert (await h.gateway.press("telegram", OWNER, approve.token)).accepted
    assert "c.txt" in git(repo, "diff", "--cached", "--name-only")
    assert h.adapter.to(GUEST)[-1] == "Staged c.txt."


async def test_graph_mode_full_agent_asks_the_same_way(mcp_harness: McpHarnessFactory,
                                                       repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)}, FRONTDESK_GRAPH_WORKFLOWS="1")
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "b"})])
    h.big.enqueue("Committed.")
    reply = await h.send("commit the staged file in my notes repo")
    assert reply.route == "full_agent" and [b.label for b in reply.buttons] == ["Approve",
                                                                                  "Deny"]
    assert commits(repo) == 1
    approve = next(b for b in reply.buttons if b.label == "Approve")
    assert (await h.gateway.press("telegram", OWNER, approve.token)).accepted
    assert commits(repo) == 2 and h.adapter.to(OWNER)[-1] == "Committed."


async def test_expiry_and_cancel_run_nothing(mcp_harness: McpHarnessFactory,
                                             repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo)})
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "b"})])
    h.big.enqueue("Nobody answered, so I did not commit.")
    assert (await h.send("commit it")).buttons
    assert await h.gateway.expire(now=time.time() + 2 * 24 * 3600) == 1
    assert "did not answer in time" in h.big.history[1].messages[-1].content
    assert h.adapter.to(OWNER)[-1] == "Nobody answered, so I did not commit."
    h.big.enqueue(tool_calls=[("git__git_commit", {"repo_path": str(repo), "message": "b"})])
    assert (await h.send("commit it again")).buttons
    assert (await h.send("/cancel")).text == "Cancelled the waiting run."
    assert commits(repo) == 1 and not h.services.flows.store.waits("open")


async def test_the_owner_may_type_the_answer_to_a_guests_approval(
        mcp_harness: McpHarnessFactory, repo: Path) -> None:
    h = await mcp_harness({"git": git_server(repo, guests=["git_status", "git_add"])})
    (repo / "d.txt").write_text("fourth\n")
    h.big.enqueue(tool_calls=[("git__git_add", {"repo_path": str(repo), "files": ["d.txt"]})])
    h.big.enqueue("It is.")  # the owner's message in between
    h.big.enqueue("Staged d.txt.")  # the guest's run, once approved
    await h.send("please stage d.txt", user=GUEST, name="Ann")
    assert "git_add" in h.adapter.to(OWNER_CHAT)[-1]  # asked in the owner's chat
    unrelated = await h.send("what a day", chat=OWNER_CHAT)  # not an answer: a new message
    assert "d.txt" not in git(repo, "diff", "--cached", "--name-only")
    assert unrelated.text == "It is."
    typed = await h.send("approve", chat=OWNER_CHAT)
    assert typed.text == "Decision: Approve" and typed.route == "command"
    assert "d.txt" in git(repo, "diff", "--cached", "--name-only")
    assert h.adapter.to(GUEST)[-1] == "Staged d.txt."
    (wait,) = h.services.flows.store.waits("answered")
    again = next(b for b in h.services.delivery.buttons.for_wait(wait.run_id, wait.as_wait())
                 if b.label == "Approve")
    turns = len(h.big.history)
    await h.gateway.press("telegram", OWNER, again.token)  # the button pressed afterwards
    assert h.adapter.to(GUEST).count("Staged d.txt.") == 1  # decided once, answered once
    assert len(h.big.history) == turns  # no model turn ran again
