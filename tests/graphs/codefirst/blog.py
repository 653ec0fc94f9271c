"""The blog workflow, as first specified, and a fake model that plays its agents.

Usage::

    model = BlogModel()
    runs.register(blog_post.using(AgentKit(models={"big": model})))
    asked = await runs.start("blog-post", {"topic": "tea"})   # waits on "Review outline"

``BlogModel`` answers by purpose (the agent's name), from the input it is given, so parallel
calls can't mix; with a folder it logs every call it answers to ``ran.log`` (``log_ran``),
and ``hang_at`` ("evidence_check:body") makes that call say ready and hang, for a SIGKILL.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.models.base import Message, ToolSpec, as_messages
from bot.models.base import Reply as ModelReply
from graphs.codefirst import agent, approve, ask, parallel, pipeline, workflow
from tests.fakes.model import FakeModel
from tests.support.crashing import log_ran, say_ready

SLUGS = ["intro", "body", "outro"]


@dataclass
class ResearchPacket:
    facts: list[str]


@dataclass
class OutlineSection:
    slug: str
    title: str


@dataclass
class Outline:
    title: str
    sections: list[OutlineSection]


@dataclass
class SectionDraft:
    slug: str
    text: str


# As written in the issue (its lines are longer than ours: kept verbatim).
@workflow(name="blog-post")
async def blog_post(topic: str) -> str:
    research = await agent("research", prompt="Research the topic.", input=topic, returns=ResearchPacket)  # noqa: E501
    outline = await agent("outline", prompt="Outline it.", input=research, returns=Outline)
    await ask("Review outline", key="review_outline", input=outline, returns=Outline)
    drafts = await parallel([agent("draft_section", prompt="Draft it.", input=s, key_by=s.slug,
                                   returns=SectionDraft) for s in outline.sections], limit=4)
    sections = await pipeline(drafts, agent("humanize", prompt="Humanize.", returns=SectionDraft),
                              agent("evidence_check", prompt="Check evidence.", returns=SectionDraft),  # noqa: E501
                              lambda s: approve(f"Section {s.slug}", key=f"review_{s.slug}", input=s,  # noqa: E501
                                                returns=SectionDraft), limit=4)
    return await agent("assemble", prompt="Assemble.", input=sections, returns=str)


def _draft(data: Any, suffix: str) -> str:
    return json.dumps({"slug": data["slug"], "text": data["text"] + suffix})


def reply(purpose: str, data: Any) -> str:
    """What the agent called ``purpose`` answers to its input (JSON, or the topic's text)."""
    if purpose == "research":
        return json.dumps({"facts": [f"{data} is old", f"{data} is loved"]})
    if purpose == "outline":
        return "Here: " + json.dumps({"title": "On tea", "sections": [
            {"slug": slug, "title": slug.title()} for slug in SLUGS]})
    if purpose == "draft_section":
        return json.dumps({"slug": data["slug"], "text": f"{data['title']} draft"})
    if purpose == "humanize":
        return _draft(data, ", humanized")
    if purpose == "evidence_check":
        return _draft(data, ", checked")
    if purpose == "assemble":
        return "\n".join(section["text"] for section in data)
    raise AssertionError(f"no agent {purpose!r} in the blog")


def slug_of(data: Any) -> str:
    return str(data.get("slug", "")) if isinstance(data, dict) else ""


class BlogModel(FakeModel):
    """A FakeModel whose reply depends on the call's purpose and input."""

    def __init__(self, folder: Path | None = None, hang_at: str | None = None) -> None:
        super().__init__(role="big")
        self.folder, self.hang_at = folder, hang_at

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Any = None) -> ModelReply:
        content = as_messages(messages)[1].content
        try:
            data: Any = json.loads(content)
        except ValueError:
            data = content
        name = f"{purpose}:{slug_of(data)}".rstrip(":")
        if self.folder is not None:
            log_ran(self.folder, name)
            if name == self.hang_at:
                say_ready(self.folder)
                threading.Event().wait()  # in flight when the process dies
        self.enqueue(text=reply(purpose or "", data))
        return await super().complete(messages, tools=tools, max_tokens=max_tokens,
                                      purpose=purpose, observer=observer)
