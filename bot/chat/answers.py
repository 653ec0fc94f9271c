"""A typed answer to a waiting question: the option a chat message means.

The owner may answer a run's question by typing instead of pressing (its label or its
number); a question without options takes any text.
"""

from __future__ import annotations

from graphs.runs import WaitInfo


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
