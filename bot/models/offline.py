"""The offline provider: deterministic rules standing in for a model, labelled offline.

It is the embedded default when no key is configured and the fallback when a provider is down.
Its agent acts through tool calls (``remember``, ``agenda``, ``search_notes``, ``notify_owner``)
so the real loop runs the real tools; it only calls a tool that it was offered.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.models.base import (
    Message,
    Observer,
    Reply,
    Stopwatch,
    TextFeed,
    TextSink,
    ToolCall,
    ToolSpec,
    Usage,
    as_messages,
    emit,
    last_user_images,
    last_user_text,
)
from bot.models.intent_rules import (
    asks_about_the_assistant,
    asks_to_save_or_remind,
    is_emoji_only,
    says_not_urgent,
    says_urgent,
    social_kind,
)
from bot.models.meeting_phrases import is_move, meeting_arguments
from bot.models.reminder_phrases import tool_arguments as reminder_arguments
from bot.models.router import INTENTS, RouterWeights, choose_intent, shipped_weights
from bot.models.vision import OFFLINE_IMAGES
from graphs.protocols import parse_json_object

OFFLINE_TAG = "(offline mode)"
CAPABILITIES = ("I'm running in offline mode, so I can only do a few things:\n"
                "- save a note (\"remember that the spare key is with Ana\") and find it again "
                "when you ask me;\n"
                "- set a reminder (\"remind me at 17:00 to call Bob\");\n"
                "- read your agenda (\"what's on today?\");\n"
                "- find a time to meet the owner (\"can we meet next week?\", or /meet);\n"
                "- pass anything urgent on to the owner.\n"
                "/help lists the commands (/notes, /reminders, /forget …).")
NO_NOTE = "I have no note that answers that."

AGENDA = re.compile(r"\b(calendar|agenda|schedule|today|meetings?)\b", re.IGNORECASE)
REMEMBER = re.compile(r"^\s*(?:please\s+)?(?:remember|note)(?:\s+that)?\b[\s:,]*(?P<text>.+)$",
                      re.IGNORECASE | re.DOTALL)
REVISION = re.compile(r"Draft:\n(?P<draft>.*)\n\nFeedback:\n(?P<feedback>.*)", re.DOTALL)
WORDS = re.compile(r"\s*\S+")  # a word with the space before it: what a stream's chunk holds
# "URGENT: the invoice for March, by the end of next month": in rows written apart the word
# was often light, and the classifier tells the two apart once a message says more than the
# word. From this many words, under this probability of urgent, it has read the rest as
# something that can wait; a terse "asap please" or "Pilne: proszę o telefon" stays urgent.
URGENT_WORD_DOUBTED_FROM_WORDS = 6
URGENT_WORD_DOUBTED_BELOW = 0.1
URGENCY = {"urgent": 0.9, "social": 0.1, "question": 0.3, "task": 0.4}


def classify_offline(text: str, weights: RouterWeights | None = None) -> tuple[str, float]:
    """The intent and urgency by the rules that must never be wrong, else the learned router
    (the shipped weights, or ``weights``: the bench scores weights it has just fitted).

    Rules first (``bot.models.intent_rules``): nothing to read is a task, "not urgent" is
    never urgent, "urgent" is (unless ``doubts_the_urgent_word``), emoji only is social,
    "remember that …" / "remind me …" is a task; then the classifier of
    ``bot.models.router`` picks the most likely route, then its intent."""
    if not text.strip():
        return "task", URGENCY["task"]
    probabilities = (weights or shipped_weights()).predict(text)
    if says_not_urgent(text):
        intent = choose_intent(probabilities, [i for i in INTENTS if i != "urgent"])
    elif says_urgent(text) and not doubts_the_urgent_word(text, probabilities):
        intent = "urgent"
    elif is_emoji_only(text):
        intent = "social"
    elif asks_to_save_or_remind(text):
        intent = "task"
    else:
        intent = choose_intent(probabilities)
    return intent, URGENCY[intent]


def doubts_the_urgent_word(text: str, probabilities: dict[str, float]) -> bool:
    """A message that says "urgent" and more, which the classifier reads as able to wait."""
    return (len(text.split()) >= URGENT_WORD_DOUBTED_FROM_WORDS
            and probabilities["urgent"] < URGENT_WORD_DOUBTED_BELOW)


def quick_reply_offline(text: str) -> str:
    """A short templated answer to a social message."""
    kind = social_kind(text)
    if kind == "thanks":
        return f"You're welcome! {OFFLINE_TAG}"
    if kind == "goodbye":
        return f"Goodbye, talk soon! {OFFLINE_TAG}"
    if kind == "greeting":
        return ("Hello! I'm in offline mode right now, but I can still save notes, read your "
                "agenda and search your notes.")
    return f"Got it. {OFFLINE_TAG}"


def classify_json(text: str) -> str:
    """The classify contract's JSON: the intent and urgency, and for a social message its
    quick reply too, so that triage answers a greeting in this one call."""
    intent, urgency = classify_offline(text)
    answer: dict[str, Any] = {"intent": intent, "urgency": urgency}
    if intent == "social":
        answer["reply"] = quick_reply_offline(text)
    return json.dumps(answer)


def parse_intent(reply_text: str, message_text: str) -> tuple[str, float]:
    """Read ``{"intent": ..., "urgency": ...}`` from a model's reply; else the offline router."""
    data = parse_json_object(reply_text)
    try:
        intent = str(data["intent"]).strip().lower() if isinstance(data, dict) else ""
        urgency = float(data["urgency"]) if isinstance(data, dict) else -1.0
    except (ValueError, KeyError, TypeError):
        intent, urgency = "", -1.0
    if intent not in URGENCY or not 0.0 <= urgency <= 1.0:
        return classify_offline(message_text)
    return intent, urgency


def agent_step(messages: Sequence[Message],
               tools: Sequence[ToolSpec] | None) -> tuple[str, list[ToolCall]]:
    """One offline agent turn: compose from tool results, or pick a tool, or say what it can do."""
    if messages and messages[-1].role == "tool":
        return _compose(messages), []
    offered = {tool.name for tool in tools or []}
    text = last_user_text(messages).strip()
    call_id = f"offline_{sum(1 for m in messages if m.role == 'assistant') + 1}"
    reminder = reminder_arguments(text) if "set_reminder" in offered else None
    if isinstance(reminder, str):  # a reminder phrase we cannot read: ask, do not guess
        return reminder, []
    if reminder is not None:
        return "Setting a reminder.", [ToolCall(call_id, "set_reminder", reminder)]
    remember = REMEMBER.match(text)
    if remember and not text.endswith("?") and "remember" in offered:
        return "Saving that note.", [ToolCall(call_id, "remember",
                                              {"text": remember.group("text").strip()})]
    intent = classify_offline(text)[0]
    if intent == "urgent" and "notify_owner" in offered:
        return "Letting the owner know.", [ToolCall(call_id, "notify_owner", {"message": text})]
    if "move_meeting" in offered and is_move(text):
        return "Moving the meeting.", [ToolCall(call_id, "move_meeting", {})]
    if "propose_meeting" in offered and (meeting := meeting_arguments(text)) is not None:
        return "Looking for a time.", [ToolCall(call_id, "propose_meeting", dict(meeting))]
    if asks_about_the_assistant(text):
        return CAPABILITIES, []
    if AGENDA.search(text) and "agenda" in offered:
        lowered = text.lower()
        hours = 168 if "week" in lowered else 48 if "tomorrow" in lowered else 0  # 0: today
        return "Reading your agenda.", [ToolCall(call_id, "agenda", {"hours": hours})]
    if (intent == "question" or "?" in text) and "search_notes" in offered:
        return "Searching your notes.", [ToolCall(call_id, "search_notes", {"query": text})]
    return CAPABILITIES, []


def _compose(messages: Sequence[Message]) -> str:
    """The final answer from the tool results that follow the last tool-calling turn."""
    calls: dict[str, ToolCall] = {}
    results: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_calls:
            calls = {call.id: call for call in message.tool_calls}
            results = []
        elif message.role == "tool":
            results.append(message)
    parts = []
    for result in results:
        call = calls.get(result.tool_call_id or "")
        observation = result.content.strip() or "(nothing)"
        failed = observation.lower().startswith(("error", "not allowed"))
        if call is None or failed:
            parts.append(f"I couldn't do that: {observation}" if failed else observation)
        elif call.name == "remember":
            parts.append(f"Saved to your notes: {call.arguments.get('text', '')}")
        elif call.name == "agenda":
            parts.append(f"Your agenda:\n{observation}")
        elif call.name == "search_notes" and observation.startswith("No matching notes"):
            parts.append(f"{NO_NOTE}\n{CAPABILITIES}")  # what it can do, not an empty search
        elif call.name == "search_notes":
            parts.append(f"From your notes:\n{observation}")
        elif call.name in ("propose_meeting", "move_meeting") \
                and observation.startswith("I sent"):
            parts.append("Here are some free times: pick one of the buttons, and the owner "
                         "will confirm it.")
        elif call.name == "notify_owner":
            parts.append(f"I've let the owner know. {observation}")
        else:
            parts.append(observation)
    return "\n\n".join(parts) + f"\n{OFFLINE_TAG}"


def revise_offline(prompt: str) -> str:
    """Offline, a revision keeps the draft and lists the feedback it could not apply."""
    found = REVISION.search(prompt)
    if found is None:
        return f"{prompt.strip()}\n{OFFLINE_TAG}"
    draft = re.sub(r"\n\(offline mode: not revised for .*\)$", "",
                   found.group("draft").replace(OFFLINE_TAG, "").strip())
    feedback = " ".join(found.group("feedback").split())
    return f"{draft}\n(offline mode: not revised for \"{feedback}\")"


def offline_text(purpose: str | None, messages: Sequence[Message],
                 tools: Sequence[ToolSpec] | None) -> tuple[str, list[ToolCall]]:
    """Pick the rule for the call's purpose."""
    text = last_user_text(messages)
    if purpose == "classify":
        return classify_json(text), []
    if purpose == "quick_reply":
        return quick_reply_offline(text), []
    if purpose == "check_tone":
        return json.dumps({"score": 1.0, "feedback": f"tone not checked {OFFLINE_TAG}"}), []
    if purpose == "draft":
        return f"{text.strip()}\n{OFFLINE_TAG}", []
    if purpose == "revise":
        return revise_offline(text), []
    if purpose == "check_facts":
        return json.dumps({"score": 1.0, "feedback": f"facts not checked {OFFLINE_TAG}"}), []
    answer, calls = agent_step(messages, tools)
    if not calls and last_user_images(messages):  # what it did with the caption follows
        answer = f"{OFFLINE_IMAGES} {answer}"
    return answer, calls


class OfflineModel:
    """The offline provider in one role; free, instant and deterministic."""

    provider = "offline"

    def __init__(self, *, role: str = "small", name: str = "offline") -> None:
        self.role = role
        self.name = name

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None,
                       on_text: TextSink | None = None) -> Reply:
        """Answer by the rules for ``purpose`` (the agent rules by default); with ``on_text``
        a final answer is streamed word by word, as a provider would (a tool turn is not)."""
        watch = Stopwatch()
        conversation = as_messages(messages)
        text, calls = offline_text(purpose, conversation, tools)
        if on_text is not None and not calls:
            feed = TextFeed(on_text, observer, role=self.role,
                            purpose=purpose)
            for word in WORDS.findall(text):
                feed.add(word)
                await asyncio.sleep(0)  # each word a step of its own, as chunks arrive
        usage = Usage(sum(len(m.content) for m in conversation) // 4 + 1, len(text) // 4 + 1)
        emit(observer, {
            "event": "model_call", "role": self.role, "provider": self.provider,
            "model": self.name, "purpose": purpose, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "cost_usd": 0.0,
            "duration_s": watch.elapsed()})
        return Reply(text=text, tool_calls=calls, usage=usage, model=self.name,
                     provider=self.provider, cost_usd=0.0)
