"""The gateway half of the fake Discord: HELLO, heartbeats, IDENTIFY/READY, RESUME, dispatch.

A session outlives its websocket and keeps every frame it was sent, numbered, so a RESUME
with the client's last sequence number replays exactly what it missed. Dispatches are
filtered per session by its intents, as Discord does (message content is blank in a guild
message that does not mention the bot unless the message-content intent was asked for).
"""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes import discord_payloads as p

if TYPE_CHECKING:
    from tests.fakes.discord_server import FakeDiscord

JSON = dict[str, Any]
GUILD_MESSAGES_INTENT = 1 << 9
DIRECT_MESSAGES_INTENT = 1 << 12


@dataclass
class Session:
    """A gateway session: what it asked for, its sequence, and every frame it was sent."""

    session_id: str
    intents: int
    seq: int = 0
    frames: list[JSON] = field(default_factory=list)
    socket: web.WebSocketResponse | None = None
    outbox: asyncio.Queue[JSON | None] | None = None

    def send(self, event: str, data: JSON) -> None:
        """Number a dispatch, keep it for a resume, and queue it if a socket is attached."""
        self.seq += 1
        frame: JSON = {"op": 0, "t": event, "s": self.seq, "d": data}
        self.frames.append(frame)
        if self.outbox is not None:
            self.outbox.put_nowait(frame)


class Gateway:
    """Serves the websocket at ``/``; every method runs on the fake's event loop."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.sessions: dict[str, Session] = {}
        self.refuse_next_resume = False

    def dispatch(self, event: str, data: JSON) -> None:
        for session in list(self.sessions.values()):
            visible = self._as_seen_by(session, event, data)
            if visible is not None:
                session.send(event, visible)
        self.fake._changed()

    async def close_all(self, code: int) -> None:
        for session in list(self.sessions.values()):
            if session.socket is not None:
                await session.socket.close(code=code)

    def _as_seen_by(self, session: Session, event: str, data: JSON) -> JSON | None:
        if event != "MESSAGE_CREATE":
            return data
        in_guild = "guild_id" in data
        if not session.intents & (GUILD_MESSAGES_INTENT if in_guild else DIRECT_MESSAGES_INTENT):
            return None
        bot_id = self.fake.bot_user["id"]
        mentioned = any(u["id"] == bot_id for u in data["mentions"])
        own = data["author"]["id"] == bot_id
        if (in_guild and not mentioned and not own
                and not session.intents & p.MESSAGE_CONTENT_INTENT):
            return {**data, "content": "", "embeds": [], "attachments": [], "components": []}
        return data

    async def handle(self, request: web.Request) -> web.StreamResponse:
        socket = web.WebSocketResponse(max_msg_size=0)
        await socket.prepare(request)
        await socket.send_json({"op": 10, "s": None, "t": None,
                                "d": {"heartbeat_interval": self.fake.heartbeat_interval_ms}})
        session: Session | None = None
        outbox: asyncio.Queue[JSON | None] | None = None
        writer: asyncio.Task[None] | None = None
        async for message in socket:
            if message.type is not WSMsgType.TEXT:
                continue
            payload = json.loads(message.data)
            op, data = payload.get("op"), payload.get("d") or {}
            if op == 1:
                self.fake.heartbeats += 1
                await socket.send_json({"op": 11, "s": None, "t": None, "d": None})
            elif op in (2, 6) and data.get("token") != self.fake.token:
                await socket.close(code=4004, message=b"Authentication failed.")
            elif op in (2, 6):
                session = await (self._identify(socket, data) if op == 2
                                 else self._resume(socket, data))
                if session is not None and session.outbox is not None:
                    outbox = session.outbox
                    writer = asyncio.ensure_future(self._write(socket, outbox))
            self.fake._changed()
        if session is not None and session.socket is socket:
            session.socket, session.outbox = None, None
        if outbox is not None and writer is not None:
            outbox.put_nowait(None)
            await writer
        return socket

    async def _identify(self, socket: web.WebSocketResponse, data: JSON) -> Session | None:
        """A new session: READY (with ``resume_gateway_url``), then the guild's GUILD_CREATE."""
        fake = self.fake
        fake.identifies.append(data)
        intents = int(data.get("intents", 0))
        if intents & p.MESSAGE_CONTENT_INTENT and not fake.message_content_enabled:
            await socket.close(code=4014, message=b"Disallowed intent(s).")
            return None
        session = Session(session_id=f"session-{fake.ids.next()}", intents=intents,
                          socket=socket, outbox=asyncio.Queue())
        self.sessions[session.session_id] = session
        guild = fake.guild_payload()
        session.send("READY", {
            "v": 10, "user": fake.bot_user, "session_id": session.session_id,
            "resume_gateway_url": fake.gateway_url, "session_type": "normal",
            "guilds": [{"id": guild["id"], "unavailable": True}],
            "private_channels": [], "relationships": [],
            "application": {"id": fake.bot_user["id"], "flags": 1 << 19}})
        session.send("GUILD_CREATE", guild)
        return session

    async def _resume(self, socket: web.WebSocketResponse, data: JSON) -> Session | None:
        """Re-attach a session and replay what came after the client's last sequence."""
        self.fake.resumes.append(data)
        found = self.sessions.get(str(data.get("session_id")))
        refuse, self.refuse_next_resume = self.refuse_next_resume, False
        if found is None or refuse:
            await socket.send_json({"op": 9, "s": None, "t": None, "d": False})
            return None
        found.socket, found.outbox = socket, asyncio.Queue()
        last_seen = int(data.get("seq") or 0)
        for frame in found.frames:
            if frame["s"] > last_seen:
                found.outbox.put_nowait(frame)
        found.send("RESUMED", {})
        return found

    @staticmethod
    async def _write(socket: web.WebSocketResponse, outbox: asyncio.Queue[JSON | None]) -> None:
        """Send a session's frames in order; one writer per websocket keeps the order."""
        while (frame := await outbox.get()) is not None:
            if socket.closed:
                return
            with suppress(ConnectionError, RuntimeError):
                await socket.send_json(frame)
