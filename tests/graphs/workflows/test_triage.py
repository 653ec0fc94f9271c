"""Triage's classify contract: one JSON object with the intent, the urgency and a social reply."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from graphs.workflows.triage import parse_classification, read_classification, stood_in


@pytest.mark.parametrize(("text", "expected"), [
    ('{"intent": "social", "urgency": 0.1, "reply": "Hi there!"}', ("social", 0.1, "Hi there!")),
    ('Here you go:\n```json\n{"intent": "social", "urgency": 0, "reply": " Bye! "}\n```',
     ("social", 0.0, "Bye!")),
    ('{"intent": "social", "urgency": 0.1}', ("social", 0.1, "")),  # a model that ignores it
    ('{"intent": "social", "urgency": 0.1, "reply": ""}', ("social", 0.1, "")),
    ('{"intent": "social", "urgency": 0.1, "reply": null}', ("social", 0.1, "")),
    ('{"intent": "social", "urgency": 0.1, "reply": ["hi"]}', ("social", 0.1, "")),
    ('{"intent": "question", "urgency": 0.3, "reply": "No idea"}', ("question", 0.3, "")),
    ('{"intent": "urgent", "urgency": 7, "reply": "calm down"}', ("urgent", 1.0, "")),
    ('{"intent": "greeting", "urgency": 0.1, "reply": "Hi"}', None),
    ("social, I think", None),
])
def test_read_classification_keeps_a_reply_only_for_a_social_message(
        text: str, expected: tuple[str, float, str] | None) -> None:
    assert read_classification(text) == expected
    assert parse_classification(text) == (None if expected is None else expected[:2])


def test_the_offline_assistant_standing_in_for_a_model_is_told_apart() -> None:
    cloud, local_offline = SimpleNamespace(provider="openai"), SimpleNamespace(provider="offline")
    answered = SimpleNamespace(text="{}", provider="openai", refused=None)
    fallback = SimpleNamespace(text="{}", provider="offline", refused=None)
    refused = SimpleNamespace(text="{}", provider="offline", refused="Budget used up.")
    assert not stood_in(cloud, answered)
    assert stood_in(cloud, fallback)  # the provider was down
    assert stood_in(cloud, refused)  # the daily budget
    assert not stood_in(local_offline, fallback)  # offline is the configured provider
