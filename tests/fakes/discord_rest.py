"""The REST half of the fake Discord: the API v10 routes a bot uses, with Discord's errors.

Every request is logged in ``fake.calls``; JSON answers carry ``Content-Type:
application/json`` exactly (discord.py compares the header verbatim). Scripted rate limits
answer 429 the way Discord does (``retry_after`` body, ``X-RateLimit-*`` and ``Via`` headers:
without ``Via`` discord.py takes a 429 for a Cloudflare ban and gives up). A message with a
file comes as discord.py posts it: multipart, the JSON in ``payload_json`` and the file in
``files[0]``; the file becomes the message's attachment (its bytes in ``fake.files``, served
like any attachment, its content type inferred from the name as Discord does).
"""

from __future__ import annotations

import json
import mimetypes
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes import discord_payloads as p

if TYPE_CHECKING:
    from tests.fakes.discord_server import FakeDiscord

JSON = dict[str, Any]
Handler = Callable[["Call", re.Match[str]], Awaitable[web.Response]]
MAX_CONTENT = 2000
EARLY_RETRY_TOLERANCE = 0.02  # seconds: a retry this much early still counts as obeying


@dataclass
class Call:
    """One REST request as the fake saw it."""

    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    body: Any
    status: int = 0
    at: float = field(default_factory=time.monotonic)
    files: list[tuple[str, bytes]] = field(default_factory=list)  # a multipart's (name, bytes)


def json_response(status: int, payload: Any) -> web.Response:
    return web.Response(status=status, body=json.dumps(payload).encode(),
                        headers={"Content-Type": "application/json"})


class RestRoutes:
    """Dispatches ``/api/v10/...`` requests to small handlers by method and path."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        s = r"(\d+)"
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = [
            (m, re.compile(f"^{path}$"), handler) for m, path, handler in [
                ("GET", "/users/@me", self.get_me),
                ("GET", f"/users/{s}", self.get_user),
                ("GET", "/oauth2/applications/@me", self.get_application),
                ("GET", "/gateway", self.get_gateway),
                ("GET", "/gateway/bot", self.get_gateway),
                ("POST", "/users/@me/channels", self.create_dm),
                ("GET", f"/channels/{s}", self.get_channel),
                ("POST", f"/channels/{s}/messages", self.create_message),
                ("GET", f"/channels/{s}/messages", self.get_history),
                ("GET", f"/channels/{s}/messages/{s}", self.get_message),
                ("PATCH", f"/channels/{s}/messages/{s}", self.edit_message),
                ("DELETE", f"/channels/{s}/messages/{s}", self.delete_message),
                ("POST", f"/channels/{s}/typing", self.typing),
                ("POST", f"/interactions/{s}/([^/]+)/callback", self.interaction_callback),
                ("PATCH", f"/webhooks/{s}/([^/]+)/messages/@original", self.edit_original),
                ("POST", f"/webhooks/{s}/([^/]+)", self.followup),
                ("PUT", f"/applications/{s}/commands", self.put_commands),
                ("PUT", f"/applications/{s}/guilds/{s}/commands", self.put_commands),
                ("GET", f"/applications/{s}/commands", self.get_commands),
                ("GET", f"/applications/{s}/guilds/{s}/commands", self.get_commands),
            ]
        ]

    async def handle(self, request: web.Request) -> web.Response:
        body: Any = None
        files: list[tuple[str, bytes]] = []
        if request.content_type == "multipart/form-data":  # a message with files
            form = await request.post()
            body = json.loads(str(form.get("payload_json") or "{}"))
            files = [(value.filename, value.file.read()) for name, value in form.items()
                     if isinstance(value, web.FileField) and name.startswith("files[")]
        else:
            raw = await request.read()
            if raw and request.content_type == "application/json":
                body = json.loads(raw)
        call = Call(request.method, "/" + request.match_info["tail"], dict(request.query), body,
                    files=files)
        response = await self._answer(request, call)
        call.status = response.status
        with self.fake._lock:
            self.fake.calls.append(call)
        self.fake._changed()
        return response

    async def _answer(self, request: web.Request, call: Call) -> web.Response:
        needs_auth = not call.path.startswith(("/interactions/", "/webhooks/"))
        if needs_auth and request.headers.get("Authorization") != f"Bot {self.fake.token}":
            return json_response(401, p.error(0, "401: Unauthorized"))
        limited = self._rate_limited(call)
        if limited is not None:
            return limited
        for method, pattern, handler in self.routes:
            match = pattern.match(call.path)
            if match and method == call.method:
                return await handler(call, match)
        return json_response(404, p.error(0, "404: Not Found"))

    def _rate_limited(self, call: Call) -> web.Response | None:
        now = time.monotonic()
        with self.fake._lock:
            for rule in self.fake._rate_limits:
                if rule["method"] != call.method or not rule["pattern"].fullmatch(call.path):
                    continue
                if now < rule["blocked_until"] - EARLY_RETRY_TOLERANCE:
                    self.fake.rate_limit_violations.append(call)
                    return self._too_many(rule["blocked_until"] - now)
                if rule["count"] > 0:
                    rule["count"] -= 1
                    rule["blocked_until"] = now + rule["retry_after"]
                    return self._too_many(rule["retry_after"])
        return None

    @staticmethod
    def _too_many(retry_after: float) -> web.Response:
        response = json_response(429, {"message": "You are being rate limited.",
                                       "retry_after": retry_after, "global": False})
        response.headers.update({
            "Via": "1.1 google",
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Bucket": "fake-messages-bucket",
            "X-RateLimit-Scope": "user",
        })
        return response

    # -- identity --------------------------------------------------------------------------
    async def get_me(self, call: Call, match: re.Match[str]) -> web.Response:
        return json_response(200, self.fake.bot_user)

    async def get_user(self, call: Call, match: re.Match[str]) -> web.Response:
        found = self.fake.users.get(int(match[1]))
        if found is None:
            return json_response(404, p.error(10013, "Unknown User"))
        return json_response(200, found)

    async def get_application(self, call: Call, match: re.Match[str]) -> web.Response:
        return json_response(200, p.application(
            int(self.fake.bot_user["id"]), self.fake.owner,
            content_intent=self.fake.message_content_enabled))

    async def get_gateway(self, call: Call, match: re.Match[str]) -> web.Response:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return json_response(200, {"url": self.fake.gateway_url, "shards": 1,
                                   "session_start_limit": limit})

    # -- channels and messages -------------------------------------------------------------
    async def create_dm(self, call: Call, match: re.Match[str]) -> web.Response:
        recipient = int((call.body or {}).get("recipient_id", 0))
        if recipient not in self.fake.users:
            return json_response(400, p.error(50035, "Invalid Form Body"))
        return json_response(200, self.fake.channels[self.fake.dm_channel_id(recipient)])

    async def get_channel(self, call: Call, match: re.Match[str]) -> web.Response:
        channel = self.fake.channels.get(int(match[1]))
        if channel is None:
            return json_response(404, p.error(10003, "Unknown Channel"))
        return json_response(200, channel)

    async def create_message(self, call: Call, match: re.Match[str]) -> web.Response:
        channel_id = int(match[1])
        channel = self.fake.channels.get(channel_id)
        if channel is None:
            return json_response(404, p.error(10003, "Unknown Channel"))
        body = call.body or {}
        invalid = _invalid_message(body, bool(call.files))
        if invalid:
            return json_response(400, p.error(50035 if "2000" in invalid else 50006, invalid))
        fake = self.fake
        with fake._lock:
            nonce = str(body["nonce"]) if body.get("enforce_nonce") and "nonce" in body else None
            if nonce is not None and (channel_id, nonce) in fake.nonces:
                # Discord answers a repeated enforced nonce with the message it already made
                return json_response(200, fake.nonces[(channel_id, nonce)])
            reference = body.get("message_reference") or {}
            replied = fake.find_message(reference["message_id"]) if reference else None
            message = p.message(fake.ids.next(), channel_id, fake.bot_user,
                                body.get("content") or "",
                                guild_id=int(channel["guild_id"]) if "guild_id" in channel
                                else None,
                                author_member=fake.member_of(fake.bot_user),
                                reply_to=replied, components=body.get("components"))
            message["attachments"] = [fake.attachment(data, name, mimetypes.guess_type(name)[0])
                                      for name, data in call.files]
            fake.history_by_channel[channel_id].append(message)
            fake.sent.setdefault(channel_id, []).append(message)
            if nonce is not None:
                fake.nonces[(channel_id, nonce)] = message
        fake.dispatch("MESSAGE_CREATE", message)  # Discord echoes the bot's own messages
        return json_response(200, message)

    async def get_history(self, call: Call, match: re.Match[str]) -> web.Response:
        """Newest first, as Discord answers; ``after``/``before`` are exclusive ids."""
        channel_id = int(match[1])
        if channel_id not in self.fake.channels:
            return json_response(404, p.error(10003, "Unknown Channel"))
        fake = self.fake
        with fake._lock:
            held = channel_id in fake._held_history
            if held:
                fake.history_reads_held.append(channel_id)
        if held:  # the test decides when this read is answered (e.g. after a SIGKILL)
            fake._changed()
            await fake.wait_for(lambda: channel_id not in fake._held_history, timeout=60,
                                what=f"release_history({channel_id})")
        limit = max(1, min(100, int(call.query.get("limit", 50))))
        messages = fake.history(channel_id)
        if "after" in call.query:
            after = int(call.query["after"])
            messages = [m for m in messages if int(m["id"]) > after][:limit]
        if "before" in call.query:
            before = int(call.query["before"])
            messages = [m for m in messages if int(m["id"]) < before]
        return json_response(200, list(reversed(messages[-limit:])))

    async def get_message(self, call: Call, match: re.Match[str]) -> web.Response:
        message = self.fake.find_message(match[2])
        if message is None or message["channel_id"] != match[1]:
            return json_response(404, p.error(10008, "Unknown Message"))
        return json_response(200, message)

    async def edit_message(self, call: Call, match: re.Match[str]) -> web.Response:
        message = self.fake.find_message(match[2])
        if message is None or message["channel_id"] != match[1]:
            return json_response(404, p.error(10008, "Unknown Message"))
        if message["author"]["id"] != self.fake.bot_user["id"]:
            return json_response(403, p.error(50005, "Cannot edit a message authored by "
                                                     "another user"))
        return self._apply_edit(message, call.body or {})

    def _apply_edit(self, message: JSON, edit: JSON) -> web.Response:
        invalid = _invalid_message({**message, **edit}) if "content" in edit else None
        if invalid:
            return json_response(400, p.error(50035, invalid))
        with self.fake._lock:
            for key in ("content", "components", "embeds", "flags"):
                if key in edit and edit[key] is not None:
                    message[key] = edit[key]
            message["edited_timestamp"] = p.timestamp_of(self.fake.ids.next())
            if "content" in edit and edit["content"] is not None:
                self.fake.edits.setdefault(message["id"], []).append(edit["content"])
        return json_response(200, message)

    async def delete_message(self, call: Call, match: re.Match[str]) -> web.Response:
        message = self.fake.find_message(match[2])
        if message is None or message["channel_id"] != match[1]:
            return json_response(404, p.error(10008, "Unknown Message"))
        with self.fake._lock:
            for messages in (self.fake.history_by_channel.get(int(match[1]), []),
                             self.fake.sent.get(int(match[1]), [])):
                if message in messages:
                    messages.remove(message)
            self.fake.deleted.append(message)
        return web.Response(status=204)

    async def typing(self, call: Call, match: re.Match[str]) -> web.Response:
        with self.fake._lock:
            channel_id = int(match[1])
            self.fake.typing[channel_id] = self.fake.typing.get(channel_id, 0) + 1
        return web.Response(status=204)

    # -- interactions ----------------------------------------------------------------------
    async def interaction_callback(self, call: Call, match: re.Match[str]) -> web.Response:
        fake = self.fake
        interaction_id = int(match[1])
        record = fake.interactions.get(interaction_id)
        if record is None or record["payload"]["token"] != match[2]:
            return json_response(404, p.error(10062, "Unknown interaction"))
        if time.monotonic() - record["at"] > fake.interaction_ttl:
            return json_response(404, p.error(10062, "Unknown interaction"))
        if record["acknowledged"]:
            return json_response(400, p.error(40060, "Interaction has already been "
                                                     "acknowledged."))
        body = call.body or {}
        kind, data = int(body.get("type", 0)), body.get("data") or {}
        record["acknowledged"] = True
        with fake._lock:
            fake.interaction_responses.append({"interaction_id": interaction_id, "type": kind,
                                               "data": data})
        message: JSON | None = None
        if kind == 7:  # UPDATE_MESSAGE: edit the message that carried the button
            target = fake.find_message(record["message_id"])
            if target is not None:
                self._apply_edit(target, data)
                message = target
        elif kind == 4:  # CHANNEL_MESSAGE_WITH_SOURCE
            message = self._interaction_message(record, data)
            record["response_message_id"] = message["id"]
        if "with_response" not in call.query:
            return web.Response(status=204)
        answer: JSON = {"interaction": {
            "id": str(interaction_id), "type": 3,
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(int(data.get("flags") or 0)
                                               & p.EPHEMERAL_FLAG)}}
        if message is not None:
            answer["interaction"]["response_message_id"] = message["id"]
            answer["resource"] = {"type": kind, "message": message}
        return json_response(200, answer)

    def _interaction_message(self, record: JSON, data: JSON) -> JSON:
        """A reply to a press; an ephemeral one is seen by the presser only (not in history)."""
        fake = self.fake
        payload = record["payload"]
        channel_id = int(payload["channel_id"])
        flags = int(data.get("flags") or 0)
        message = p.message(fake.ids.next(), channel_id, fake.bot_user,
                            data.get("content") or "", components=data.get("components"),
                            flags=flags)
        if not flags & p.EPHEMERAL_FLAG:
            with fake._lock:
                fake.history_by_channel[channel_id].append(message)
                fake.sent.setdefault(channel_id, []).append(message)
        return message

    def _record_for_token(self, token: str) -> JSON | None:
        for record in self.fake.interactions.values():
            if record["payload"]["token"] == token:
                return record
        return None

    async def edit_original(self, call: Call, match: re.Match[str]) -> web.Response:
        record = self._record_for_token(match[2])
        if record is None or not record["acknowledged"]:
            return json_response(404, p.error(10015, "Unknown Webhook"))
        target_id = str(record.get("response_message_id", record["message_id"]))
        target = self.fake.find_message(target_id)
        if target is None:
            return json_response(404, p.error(10008, "Unknown Message"))
        return self._apply_edit(target, call.body or {})

    async def followup(self, call: Call, match: re.Match[str]) -> web.Response:
        record = self._record_for_token(match[2])
        if record is None or not record["acknowledged"]:
            return json_response(404, p.error(10015, "Unknown Webhook"))
        return json_response(200, self._interaction_message(record, call.body or {}))

    # -- application commands --------------------------------------------------------------
    async def put_commands(self, call: Call, match: re.Match[str]) -> web.Response:
        guild_id = int(match[2]) if match.lastindex and match.lastindex >= 2 else None
        commands = [{**command, "id": str(self.fake.ids.next()), "application_id": match[1],
                     "version": "1", "type": command.get("type", 1),
                     "default_member_permissions": None, "dm_permission": True,
                     "nsfw": False, "options": command.get("options", [])}
                    for command in (call.body or [])]
        if guild_id is not None:
            for command in commands:
                command["guild_id"] = str(guild_id)
        with self.fake._lock:
            self.fake.commands[guild_id] = commands
        return json_response(200, commands)

    async def get_commands(self, call: Call, match: re.Match[str]) -> web.Response:
        guild_id = int(match[2]) if match.lastindex and match.lastindex >= 2 else None
        return json_response(200, self.fake.commands.get(guild_id, []))


def _invalid_message(body: JSON, has_files: bool = False) -> str | None:
    """Discord's own checks on a message body: over-long or empty is a 400."""
    content = body.get("content") or ""
    if len(content) > MAX_CONTENT:
        return "Invalid Form Body: content: Must be 2000 or fewer in length."
    if not content and not body.get("components") and not body.get("embeds") \
            and not has_files:
        return "Cannot send an empty message"
    return None
