"""JSON payloads shaped like Discord API v10 objects, for the fake Discord server.

Only the fields discord.py 2.x reads are filled in, with the types Discord really sends
(snowflakes as strings, ISO timestamps). Pure functions; the server owns all state.
"""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000
MESSAGE_CONTENT_INTENT = 1 << 15
EPHEMERAL_FLAG = 1 << 6
# 'Administrator' for the bot's own role, so discord.py never refuses an action locally.
ALL_PERMISSIONS = str(1 << 3)


class Snowflakes:
    """Monotonic, thread-safe snowflake ids whose timestamp part is the real clock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0
        self._counter = itertools.count()

    def next(self) -> int:
        with self._lock:
            stamp = (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22
            self._last = max(stamp | (next(self._counter) & 0xFFF), self._last + 1)
            return self._last


def timestamp_of(snowflake: int) -> str:
    """The ISO 8601 time encoded in a snowflake, as Discord writes message timestamps."""
    millis = (snowflake >> 22) + DISCORD_EPOCH_MS
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat()


def user(user_id: int, name: str, *, bot: bool = False) -> JSON:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


def member(user_payload: JSON, *, roles: list[str] | None = None) -> JSON:
    return {
        "user": user_payload,
        "nick": None,
        "roles": roles or [],
        "joined_at": "2024-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "permissions": ALL_PERMISSIONS,
    }


def text_channel(channel_id: int, guild_id: int, name: str) -> JSON:
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread_channel(channel_id: int, parent_id: int, guild_id: int, name: str,
                   owner_id: int) -> JSON:
    """A public thread under a text channel (as GUILD_CREATE's ``threads`` lists it)."""
    return {
        "id": str(channel_id), "type": 11, "guild_id": str(guild_id), "parent_id": str(parent_id),
        "name": name, "owner_id": str(owner_id), "last_message_id": None,
        "rate_limit_per_user": 0, "message_count": 0, "member_count": 1, "flags": 0,
        "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                            "archive_timestamp": "2024-01-01T00:00:00+00:00", "locked": False},
    }


def dm_channel(channel_id: int, recipient: JSON) -> JSON:
    return {"id": str(channel_id), "type": 1, "recipients": [recipient], "last_message_id": None}


def guild(guild_id: int, name: str, *, owner_id: int, channels: list[JSON],
          members: list[JSON], bot_role_id: int, bot_id: int | None = None,
          threads: list[JSON] | None = None) -> JSON:
    """A full GUILD_CREATE payload; the @everyone role's id is the guild's id, as on Discord."""

    def role(role_id: int, role_name: str, permissions: str, position: int,
             bot_id: int | None = None) -> JSON:
        found = {"id": str(role_id), "name": role_name, "permissions": permissions,
                 "position": position, "color": 0, "hoist": False, "managed": bot_id is not None,
                 "mentionable": False, "flags": 0}
        if bot_id is not None:  # the role Discord makes for a bot when it joins a server
            found["tags"] = {"bot_id": str(bot_id)}
        return found

    return {
        "id": str(guild_id),
        "name": name,
        "owner_id": str(owner_id),
        "unavailable": False,
        "large": False,
        "member_count": len(members),
        "joined_at": "2024-01-01T00:00:00+00:00",
        "roles": [role(guild_id, "@everyone", "1024", 0),
                  role(bot_role_id, "frontdesk", ALL_PERMISSIONS, 1, bot_id)],
        "emojis": [],
        "stickers": [],
        "features": [],
        "channels": channels,
        "threads": threads or [],
        "members": members,
        "presences": [],
        "voice_states": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "premium_tier": 0,
        "system_channel_flags": 0,
        "preferred_locale": "en-US",
        "afk_timeout": 300,
    }


def message(message_id: int, channel_id: int, author: JSON, content: str, *,
            guild_id: int | None = None, author_member: JSON | None = None,
            mentions: list[JSON] | None = None, reply_to: JSON | None = None,
            components: list[JSON] | None = None, flags: int = 0,
            mention_roles: list[str] | None = None) -> JSON:
    """A message as MESSAGE_CREATE and the REST API return it."""
    payload: JSON = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": timestamp_of(message_id),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": mention_roles or [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": 19 if reply_to else 0,
        "flags": flags,
        "components": components or [],
    }
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
        if author_member is not None:
            payload["member"] = {k: v for k, v in author_member.items() if k != "user"}
    if reply_to is not None:
        payload["message_reference"] = {"type": 0, "message_id": reply_to["id"],
                                        "channel_id": str(channel_id),
                                        "fail_if_not_exists": False}
        if guild_id is not None:
            payload["message_reference"]["guild_id"] = str(guild_id)
        payload["referenced_message"] = reply_to
    return payload


def application(app_id: int, owner: JSON, *, content_intent: bool = True) -> JSON:
    """GET /oauth2/applications/@me, read by ``Client.login``."""
    return {
        "id": str(app_id),
        "name": "frontdesk",
        "icon": None,
        "description": "",
        "rpc_origins": [],
        "bot_public": False,
        "bot_require_code_grant": False,
        "owner": owner,
        "team": None,
        "verify_key": "0" * 64,
        "flags": (1 << 19) if content_intent else 0,  # GATEWAY_MESSAGE_CONTENT_LIMITED: on
        "interactions_endpoint_url": None,
    }


def component_interaction(interaction_id: int, token: str, *, app_id: int, custom_id: str,
                          presser: JSON, channel: JSON, message_payload: JSON,
                          guild_id: int | None, presser_member: JSON | None) -> JSON:
    """INTERACTION_CREATE for a button press (type 3, component_type 2)."""
    payload: JSON = {
        "id": str(interaction_id),
        "application_id": str(app_id),
        "type": 3,
        "data": {"custom_id": custom_id, "component_type": 2},
        "channel_id": channel["id"],
        "channel": channel,
        "token": token,
        "version": 1,
        "message": message_payload,
        "app_permissions": ALL_PERMISSIONS,
        "locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(presser["id"])},
        "attachment_size_limit": 10 * 1024 * 1024,
    }
    if guild_id is None:
        payload["user"] = presser
        payload["context"] = 1
    else:
        payload["guild_id"] = str(guild_id)
        payload["guild"] = {"id": str(guild_id), "locale": "en-US", "features": []}
        payload["member"] = presser_member or member(presser)
        payload["guild_locale"] = "en-US"
        payload["context"] = 0
    return payload


def error(code: int, text: str) -> JSON:
    return {"code": code, "message": text}
