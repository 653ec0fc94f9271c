"""A typed answer to a waiting question: the option a chat message means.

The owner may answer a run's question by typing instead of pressing (its label or its
number); a question without options takes any text. A guest answering their own offer (the
meeting's times, ``match_choice``) may also say it in words: "2", "the second one", "the
last", "Tuesday 10:00", "10:30", "tue 3 mar 2pm", "none of these". A text that does not name
exactly one option (a question, two times, a time not offered) is no answer: it goes to the
chat as any message does.
"""

from __future__ import annotations

import re

from graphs.runs import WaitInfo

ORDINALS = {"first": 1, "1st": 1, "one": 1, "second": 2, "2nd": 2, "two": 2, "third": 3,
            "3rd": 3, "three": 3, "fourth": 4, "4th": 4, "four": 4}
FILLER = {"the", "one", "please", "pls", "option", "number", "no", "#", "at", "on", "i'll",
          "ill", "take", "let's", "lets", "do", "go", "with", "for", "me", "works", "is",
          "fine", "ok", "okay", "that", "choose", "pick", "i", "want", "like", "would",
          "a", "an", "time", "slot"}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_CLOCK = re.compile(r"^(\d{1,2})(?:[:.h](\d{2}))?(am|pm)?$")


def match_option(wait: WaitInfo, text: str) -> str | None:
    """The option a typed answer means (its label or number), the text for a free-text wait,
    None when a text does not answer a multiple-choice question."""
    if not wait.options:
        return text
    typed = text.strip().lower().rstrip(".!")
    for number, option in enumerate(wait.options, start=1):
        if typed in {option.lower(), str(number)}:
            return option
    return None


def match_choice(options: list[str], text: str) -> str | None:
    """The one option a guest's typed words mean (see the module's examples), or None."""
    if not options:
        return None
    typed = text.strip().lower().rstrip(".!")
    exact = next((o for o in options if typed == o.lower()), None)
    if exact is not None:
        return exact
    typed = re.sub(r"\bat (\d{1,2})\b(?![:.h]?\d)", r"\1:00", typed)  # "at 9": a time
    words = [w for w in re.split(r"[\s,]+", typed.replace("#", " ")) if w and w not in FILLER]
    if not words:
        return None
    if len(words) == 1 and (words[0].isdigit() or words[0] in ORDINALS or words[0] == "last"):
        times = [o for o in options if not o.lower().startswith("none")]
        number = len(times) if words[0] == "last" else \
            int(words[0]) if words[0].isdigit() else ORDINALS[words[0]]
        return options[number - 1] if 1 <= number <= len(options) else None
    if words[0] in ("none", "neither", "other", "others") and len(words) <= 3:
        return next((o for o in options if o.lower().startswith("none")), None)
    facts = [_fact(word) for word in words]
    if None in facts:  # a word that is not a day, a date or a time: not an answer
        return None
    found = [o for o in options if all(f in _facts_of(o) for f in facts)]
    return found[0] if len(found) == 1 else None


def _fact(word: str) -> str | None:
    """A day ('tue'), a month ('mar'), a day of the month ('3') or a time ('14:00')."""
    word = word.rstrip("?")
    for names in (WEEKDAYS, MONTHS):
        for name in names:
            if len(word) >= 3 and name.startswith(word):
                return name[:3]
    clock = _CLOCK.match(word)
    if clock is None:
        return None
    hour = int(clock[1])
    minute = int(clock[2] or 0)
    half = clock[3]
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if clock[2] is None and half is None:  # a bare number: the day of the month
        return f"day {hour}" if 1 <= hour <= 31 else None
    return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def _facts_of(label: str) -> set[str]:
    """What an option's label says: 'Tue 3 Mar 10:00' -> {'tue', 'day 3', 'mar', '10:00'}."""
    facts = {_fact(word) for word in label.lower().split()}
    return {fact for fact in facts if fact is not None}
