"""The offline model's meeting intent: "can we meet …", "book a call", "schedule an
appointment" start the meeting workflow (``propose_meeting``), with the topic the words give.

Its own small rule, apart from the intent tables (``bot.models.intent_rules``): a question
about meetings that exist ("what meetings do I have today?") is the agenda's, not this.
"""

from __future__ import annotations

import re

ASK = re.compile(
    r"\b(?:(?:can|could|shall|should) (?:we|i) (?:meet|have a (?:call|meeting|chat))"
    r"|(?:let'?s|like to|want to|wanna|need to) (?:meet|have a (?:call|meeting))"
    r"|meet (?:up|with you)"
    r"|(?:book|schedule|set up|arrange|organi[sz]e|plan|find)(?: me| us)? (?:a |an |some )?"
    r"(?:time|slot"
    r"|meeting|call|appointment|\d+ ?min(?:ute)?s?)"
    r"|(?:an|make an|get an) appointment)\b", re.IGNORECASE)
EXISTING = re.compile(r"\b(?:what|which|any|how many|do i have|my|today'?s)\b[^.?!]{0,25}"
                      r"\b(?:meetings|appointments)\b", re.IGNORECASE)
ABOUT = re.compile(r"\b(?:about|regarding|re:|to discuss|on the topic of)\s+(?P<topic>[^.?!\n]+)",
                   re.IGNORECASE)
MOVE = re.compile(r"\b(?:move|reschedule|shift|push)\b[^.?!]{0,20}\b(?:it|meeting|call|"
                  r"appointment)\b|\breschedule\b", re.IGNORECASE)
MINUTES = re.compile(r"\b(\d{1,3}) ?min(?:ute)?s?\b|\b(an|one|1) hour\b", re.IGNORECASE)


def is_move(text: str) -> bool:
    """"move it to Thursday", "reschedule our meeting": a booking to move."""
    return MOVE.search(text) is not None


def meeting_arguments(text: str) -> dict[str, str | int] | None:
    """``propose_meeting``'s arguments from a request to meet (its topic, and its length when
    the words give one), or None when the text is not one."""
    topic = meeting_topic(text)
    if topic is None:
        return None
    length = MINUTES.search(text)
    if length is None:
        return {"topic": topic}
    return {"topic": topic, "minutes": int(length.group(1)) if length.group(1) else 60}


def meeting_topic(text: str) -> str | None:
    """The topic of a request to meet (what follows "about", else the words themselves), or
    None when the text is not one."""
    if not ASK.search(text) or EXISTING.search(text):
        return None
    found = ABOUT.search(text)
    return (found.group("topic") if found else " ".join(text.split())).strip()[:200]
