"""``/model``: the owner shows, picks or resets the big model of a chat.

``/model`` lists the small and big model this chat uses and every preset of
``FRONTDESK_MODEL_PRESETS``; ``/model NAME`` makes a preset's model this chat's big model
(kept in the database by ``bot.models.choices``, so it survives a restart); ``/model reset``
goes back to the configured one. Anyone else is refused and nothing changes.
"""

from __future__ import annotations

from bot.models.choices import ChatBigModel

NAME = "model"
MENU_LINE = "owner only: this chat's big model: /model NAME, /model reset"
USAGE = "/model [NAME|reset]"
NO_PRESETS = ("No presets are configured: set FRONTDESK_MODEL_PRESETS, e.g. "
              "fast=gpt-4.1-mini,deep=o3, then /model NAME picks one for a chat.")


class ModelCommand:
    """Answers ``/model`` for the owner, over the chats' choices and their big model."""

    def __init__(self, big: ChatBigModel, small_name: str) -> None:
        self.big = big
        self.choices = big.choices
        self.small_name = small_name

    def reply(self, argument: str, where: tuple[str, str]) -> str:
        """The answer to ``/model ARGUMENT`` in the chat ``where`` (the owner's: checked
        before)."""
        word = argument.strip().lower()
        presets = self.choices.presets
        if not word:
            return self.show(where)
        if word == "reset":
            had = self.choices.reset(*where)
            back = f"back to the default, {self.big.default.name}"
            return f"This chat's big model is {back}." if had else \
                f"This chat already uses the default big model, {self.big.default.name}."
        if not presets:
            return NO_PRESETS
        if word not in presets:
            return (f"There is no preset {argument.strip()[:40]!r}. Presets: "
                    f"{', '.join(presets)} (or /model reset).")
        self.choices.choose(*where, word)
        return f"This chat's big model is now {presets[word]} (preset {word})."

    def show(self, where: tuple[str, str]) -> str:
        """The models this chat uses, and the presets."""
        chosen = self.choices.preset_of(*where)
        big = self.big.model_for(*where).name
        lines = [f"This chat uses: small {self.small_name}, big {big}"
                 + (f" (preset {chosen})." if chosen else " (the default).")]
        if not self.choices.presets:
            return "\n".join([*lines, NO_PRESETS])
        lines += [f"- {name}: {model}" + (" (in use)" if name == chosen else "")
                  for name, model in self.choices.presets.items()]
        lines.append(f"/model NAME picks a preset for this chat; /model reset goes back to "
                     f"{self.big.default.name}.")
        return "\n".join([lines[0], "Presets:", *lines[1:]])
