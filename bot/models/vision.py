"""Images and models that cannot take them: the sentences, and the request without images.

Whether a model takes images is learned from the provider's answer, never from a list of
model names: a request with images that the provider refuses as invalid (400, 415, 422) is
sent once more without them, the reply says so, and ``GuardedModel`` remembers it for the
model, so later requests with images go without them straight away.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.models.base import Message, ModelError

OFFLINE_IMAGES = "I can't look at images in offline mode."
NO_VISION = "This model can't look at images, so I read only the text of your message."
IMAGE_LEFT_OUT = "[an image was attached here; this model cannot look at images]"
REFUSED_AS_INVALID = frozenset({400, 415, 422})
IMAGE_TOKENS = 1600  # at most, for one image of up to 1568 px a side (Anthropic's figure)


def has_images(messages: Sequence[Message]) -> bool:
    """Whether any message of the conversation carries an image."""
    return any(message.images for message in messages)


def without_images(messages: Sequence[Message]) -> list[Message]:
    """The conversation with each image replaced by a line of text saying one was there."""
    return [replace(m, images=[], content="\n".join([IMAGE_LEFT_OUT] * len(m.images)
                                                    + ([m.content] if m.content else [])))
            if m.images else m for m in messages]


def refused_images(failure: ModelError) -> bool:
    """Whether the failure of a request with images looks like the model refusing them."""
    return failure.status in REFUSED_AS_INVALID
