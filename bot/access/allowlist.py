"""The allowlist: who is the owner and who else may write, per platform.

The owners and allowed ids come from the settings; the people the owner let in through
pairing (``bot.access.pairing``) are asked of the ``people`` table.
"""

from __future__ import annotations

from bot.access.people import People
from bot.config.settings import Settings


class Access:
    """The allowlist: who is the owner and who else may write, per platform."""

    def __init__(self, settings: Settings, people: People | None = None) -> None:
        self.owners = {**settings.owner_ids(), "console": "owner"}
        self.allowed = {"telegram": settings.telegram_allowed_users,
                        "discord": settings.discord_allowed_users}
        self.people = people  # whom the owner allowed through pairing (bot.access.pairing)

    def level(self, platform: str, user_id: str) -> str | None:
        """'owner', 'allowed' or None. Every console user is local, hence allowed; every
        mail's sender too (never the owner: a guest's answer is a draft the owner approves)."""
        if platform == "email":
            return "allowed"
        if user_id and self.owners.get(platform) == user_id:
            return "owner"
        if platform == "console" or user_id in self.allowed.get(platform, frozenset()):
            return "allowed"
        if self.people is not None and platform in self.allowed \
                and self.people.status(platform, user_id) == "allowed":
            return "allowed"
        return None
