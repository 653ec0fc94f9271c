"""A fake Telegram Bot API server on loopback that the real python-telegram-bot talks to over HTTP.

Usage::

    async with FakeTelegramServer() as server:            # in the test's event loop
        bot = telegram.Bot(server.token, base_url=server.base_url)
        server.push_message(chat_id=42, user_id=42, text="hi")
        ...
    with FakeTelegramServer() as server:                  # in a background thread, e.g. for
        env["TELEGRAM_BASE_URL"] = server.base_url         # `frontdesk run` as a subprocess
        server.wait_for_sync(lambda: server.messages_to(42))

It speaks the wire protocol of the real API: ``/bot<token>/<method>``, parameters as a query
string, a JSON body or a form (python-telegram-bot posts a form whose non-string values are
JSON-encoded), answers ``{"ok": true, "result": ...}`` or Telegram's error answers. HTML
``parse_mode`` is parsed the way Telegram's parser does (allowed tags only, balanced, ``<``
escaped), and text over 4,096 UTF-16 code units after parsing is refused. A group can be
upgraded to a supergroup (``migrate_chat``: sends to the old id get Telegram's 400 with
``migrate_to_chat_id``), and ``push_broken_mention`` queues the malformed group messages a
stranger can send (a lone surrogate, an entity offset inside a surrogate pair).

Live replies: ``sendMessageDraft`` is kept in ``.drafts`` (private chats only, as Telegram;
``refuse_drafts()`` makes it answer 400 everywhere), ``editMessageText`` changes the message
in place (``SentMessage.history`` keeps every text it showed, in order) and refuses an edit
that changes nothing, ``deleteMessage`` moves a message to ``.deleted``, ``sendChatAction``
is kept in ``.chat_actions``; ``fail_next`` answers any of them with a 429. ``sendDocument``
takes a multipart upload (``telegram_files``): the message's ``document`` keeps its bytes.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.serving import LoopbackServer
from tests.fakes.telegram_files import TelegramFiles, UploadedFile
from tests.fakes.telegram_html import ApiError, parse_html, utf16_len

JSON = dict[str, Any]
TEXT_LIMIT = 4096
CALLBACK_DATA_LIMIT = 64
_JSON_PARAMS = {"reply_markup", "entities", "allowed_updates", "commands", "scope",
                "reply_parameters", "link_preview_options"}
_INT_PARAMS = {"chat_id", "message_id", "offset", "limit", "timeout", "reply_to_message_id",
               "message_thread_id", "cache_time", "draft_id"}
_BOOL_PARAMS = {"show_alert", "drop_pending_updates", "disable_notification", "protect_content"}
_AUTO_ENTITY = re.compile(r"(?<![\w/@])(/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?"
                          r"|@[A-Za-z0-9_]{5,32})")


@dataclass
class SentMessage:
    """A message the bot sent, as it stands now (edits change it in place)."""

    chat_id: int
    message_id: int
    text: str  # what the user sees: the text after entity parsing
    raw_text: str  # what the bot sent (HTML source when parse_mode is HTML)
    parse_mode: str | None
    entities: list[JSON]
    reply_markup: JSON | None
    edits: int = 0
    history: list[str] = field(default_factory=list)  # every text it showed, oldest first
    document: UploadedFile | None = None  # a sendDocument's file (``text`` is its caption)


@dataclass(frozen=True)
class ApiCall:
    """One request as the server saw it; error_code is None for a successful answer."""

    method: str
    params: JSON
    error_code: int | None
    at: float = 0.0  # time.monotonic() when it was answered


class _Migrated(ApiError):
    """Telegram's answer to a send to a group that became a supergroup."""

    def __init__(self, new_chat_id: int) -> None:
        super().__init__(400, "Bad Request: group chat was upgraded to a supergroup chat")
        self.new_chat_id = new_chat_id


@dataclass
class _ScriptedError:
    method: str
    chat_id: int | None
    times: int
    error: ApiError


class FakeTelegramServer(TelegramFiles, LoopbackServer):
    """The fake Bot API; see the module docstring. State is guarded by ``self._lock``.
    Files (photos, voice, documents, ``getFile``, downloads) are in ``TelegramFiles``."""

    def __init__(self, token: str = "123456:TEST-token", *,
                 bot_username: str = "frontdesk_test_bot", host: str = "127.0.0.1",
                 port: int = 0) -> None:
        super().__init__(host, port)
        self.token = token
        self.sent: dict[int, list[SentMessage]] = {}  # chat id -> the bot's messages
        self.calls: list[ApiCall] = []
        self.callback_answers: list[JSON] = []
        self.chat_actions: list[tuple[int, str]] = []
        self.drafts: list[tuple[int, int, str]] = []  # (chat, draft id, text), in order
        self.deleted: list[SentMessage] = []
        self.drafts_allowed = True
        self.commands: dict[str, list[JSON]] = {}  # scope as JSON -> commands
        self.dropped_pending_updates = 0
        self.polls = 0  # getUpdates requests received, finished or still waiting
        self.bot_user: JSON = {"id": int(token.split(":")[0]), "is_bot": True,
                               "first_name": "Frontdesk Test", "username": bot_username,
                               "can_join_groups": True, "can_read_all_group_messages": False,
                               "supports_inline_queries": False}
        self._updates: list[JSON] = []  # unconfirmed, oldest first
        self._update_ids = itertools.count(1000)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._messages: dict[tuple[int, int], JSON] = {}  # every message, by (chat, id)
        self._chats: dict[int, JSON] = {}
        self._open_queries: dict[str, JSON] = {}
        self._query_ids = itertools.count(1)
        self._scripted: list[_ScriptedError] = []
        self._migrated: dict[int, int] = {}  # old group id -> its supergroup's id
        self._held_answers: set[int] = set()  # chats whose sendMessage answers wait
        self.answers_held: list[int] = []  # message ids accepted but not yet answered
        self._poll_generation = 0
        self.init_files()

    @property
    def base_url(self) -> str:
        """python-telegram-bot's ``base_url`` (and TELEGRAM_BASE_URL): the token is appended."""
        return f"{self.url}/bot"

    def build_app(self) -> web.Application:
        app = web.Application()
        app.add_routes(self.file_routes())
        app.router.add_route("*", "/{path:.*}", self._handle)
        return app

    # -- test controls --------------------------------------------------------------------
    def add_chat(self, chat_id: int, chat_type: str = "private") -> JSON:
        """Make a chat known (the bot may write to it), as if its user had started the bot."""
        with self._lock:
            chat: JSON = {"id": chat_id, "type": chat_type}
            chat.update({"first_name": f"User {chat_id}"} if chat_type == "private"
                        else {"title": f"Group {chat_id}"})
            return self._chats.setdefault(chat_id, chat)

    def push_message(self, chat_id: int, user_id: int, text: str, *, chat_type: str = "private",
                     reply_to: int | None = None, entities: list[JSON] | None = None,
                     username: str | None = None) -> JSON:
        """Queue a user's text message; returns the update. Commands and @mentions get their
        entities as Telegram adds them, unless ``entities`` is given."""
        with self._lock:
            chat = self.add_chat(chat_id, chat_type)
            user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}",
                    "username": username or f"user{user_id}"}
            message: JSON = {"message_id": self._next_message_id(chat_id), "from": user,
                             "chat": chat, "date": int(time.time()), "text": text}
            if entities is None:
                entities = [{"type": "bot_command" if m.group(0)[0] == "/" else "mention",
                             "offset": utf16_len(text[:m.start()]),
                             "length": utf16_len(m.group(0))} for m in _AUTO_ENTITY.finditer(text)]
            if entities:
                message["entities"] = entities
            if reply_to is not None:
                message["reply_to_message"] = self._messages[(chat_id, reply_to)]
            self._messages[(chat_id, message["message_id"])] = message
            return self._queue({"message": message})

    def migrate_chat(self, chat_id: int, new_chat_id: int) -> JSON:
        """Upgrade a group to a supergroup with a new id; the old id refuses sends from now."""
        with self._lock:
            self._chats.pop(chat_id, None)
            self._migrated[chat_id] = new_chat_id
            return self.add_chat(new_chat_id, "supergroup")

    def push_broken_mention(self, chat_id: int, user_id: int, how: str) -> JSON:
        """Queue a group message mentioning the bot that Telegram's clients can produce but
        UTF-16 cannot read: ``how`` is "lone_surrogate" (half an emoji in the text) or
        "split_pair" (the mention's offset falls inside an emoji's surrogate pair)."""
        mention = f"@{self.bot_user['username']}"
        if how == "lone_surrogate":
            text = f"\ud83d {mention} hello"
            entities = [{"type": "mention", "offset": 2, "length": len(mention)}]
        elif how == "split_pair":
            text = f"\U0001f600{mention} hello"
            entities = [{"type": "mention", "offset": 1, "length": len(mention)}]
        else:
            raise ValueError(f"no such broken mention: {how!r}")
        return self.push_message(chat_id, user_id, text, chat_type="group", entities=entities)

    def hold_answers(self, chat_id: int) -> None:
        """Accept sendMessage to a chat but hold the answer (the bot can be killed between)."""
        with self._lock:
            self._held_answers.add(chat_id)

    def release_answers(self, chat_id: int) -> None:
        with self._lock:
            self._held_answers.discard(chat_id)
            self._notify()

    def push_callback(self, user_id: int, message_id: int, data: str,
                      chat_id: int | None = None) -> str:
        """Queue a button press on the bot's message; returns the callback query id."""
        with self._lock:
            message = self._messages[(user_id if chat_id is None else chat_id, message_id)]
            query_id = f"{next(self._query_ids)}{user_id}"
            query = {"id": query_id, "chat_instance": str(message["chat"]["id"]), "data": data,
                     "from": {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"},
                     "message": message}
            self._open_queries[query_id] = query
            self._queue({"callback_query": query})
            return query_id

    def push_raw_update(self, update: JSON) -> int:
        """Queue any update body (malformed ones too); returns its update_id."""
        with self._lock:
            return int(self._queue(dict(update))["update_id"])

    def fail_next(self, method: str, times: int = 1, *, error_code: int = 429,
                  description: str | None = None, retry_after: int | None = None,
                  chat_id: int | None = None) -> None:
        """Answer the next ``times`` calls of ``method`` (to ``chat_id`` if given) with an error."""
        if error_code == 429 and retry_after is None:
            retry_after = 1
        text = description or (f"Too Many Requests: retry after {retry_after}"
                               if error_code == 429 else "Bad Request")
        with self._lock:
            self._scripted.append(_ScriptedError(method.lower(), chat_id, times,
                                                 ApiError(error_code, text, retry_after)))

    def flood(self, chat_id: int, times: int, retry_after: int = 1) -> None:
        """Flood control: the next ``times`` sendMessage calls to this chat get a 429."""
        self.fail_next("sendMessage", times, retry_after=retry_after, chat_id=chat_id)

    def refuse_drafts(self) -> None:
        """Answer ``sendMessageDraft`` with a 400 everywhere (an older Bot API, say)."""
        with self._lock:
            self.drafts_allowed = False

    def drafts_to(self, chat_id: int) -> list[str]:
        """The draft texts shown in a chat, in order."""
        with self._lock:
            return [text for chat, _, text in self.drafts if chat == chat_id]

    def messages_to(self, chat_id: int) -> list[SentMessage]:
        with self._lock:
            return list(self.sent.get(chat_id, []))

    def pending_updates(self) -> list[JSON]:
        """Updates not yet confirmed by a getUpdates with a higher offset."""
        with self._lock:
            return list(self._updates)

    def calls_of(self, method: str) -> list[ApiCall]:
        with self._lock:
            return [c for c in self.calls if c.method.lower() == method.lower()]

    # -- internals (called with the lock held) --------------------------------------------
    def _queue(self, body: JSON) -> JSON:
        update = {"update_id": next(self._update_ids), **body}
        self._updates.append(update)
        self._notify()
        return update

    def _next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    # -- HTTP ------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path
        if not path.startswith("/bot") or path.count("/") != 2:
            return _answer(ApiError(404, "Not Found"))
        token, method = path[len("/bot"):].split("/")
        params = await _read_params(request)
        handler = getattr(self, f"_api_{method.lower()}", None)
        error: ApiError | None = None
        try:
            if token != self.token:  # Telegram: 401 for a well-formed token it does not know
                raise ApiError(401, "Unauthorized") if ":" in token else ApiError(404, "Not Found")
            if handler is None:
                raise ApiError(404, "Not Found")
            self._raise_scripted(method, params)
            result = await handler(params)
        except ApiError as refused:
            error = refused
        with self._lock:
            self.calls.append(ApiCall(method, params, error.code if error else None,
                                      time.monotonic()))
            self._notify()
        if error is not None:
            return _answer(error)
        return web.json_response({"ok": True, "result": result})

    def _raise_scripted(self, method: str, params: JSON) -> None:
        with self._lock:
            for scripted in self._scripted:
                if scripted.method == method.lower() and scripted.times > 0 and (
                        scripted.chat_id is None or scripted.chat_id == params.get("chat_id")):
                    scripted.times -= 1
                    raise scripted.error

    def _chat(self, params: JSON) -> JSON:
        moved = self._migrated.get(params.get("chat_id"))  # type: ignore[arg-type]
        if moved is not None:
            raise _Migrated(moved)
        chat = self._chats.get(params.get("chat_id"))  # type: ignore[arg-type]
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        return chat

    def _bot_message(self, params: JSON) -> JSON:
        message = self._messages.get((params.get("chat_id"), params.get("message_id")))  # type: ignore[arg-type]
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message["from"]["id"] != self.bot_user["id"]:
            raise ApiError(400, "Bad Request: message can't be edited")
        return message

    # -- the Bot API methods ----------------------------------------------------------------
    async def _api_getme(self, params: JSON) -> JSON:
        return self.bot_user

    async def _api_getchat(self, params: JSON) -> JSON:
        with self._lock:  # a ChatFullInfo: the chat and the fields Telegram always adds
            return {**self._chat(params), "accent_color_id": 0, "max_reaction_count": 11,
                    "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False,
                                            "unique_gifts": False,
                                            "premium_subscription": False,
                                            "gifts_from_channels": False}}

    async def _api_deletewebhook(self, params: JSON) -> bool:
        with self._lock:
            if params.get("drop_pending_updates"):
                self.dropped_pending_updates += len(self._updates)
                self._updates.clear()
        return True

    async def _api_getwebhookinfo(self, params: JSON) -> JSON:
        with self._lock:
            return {"url": "", "has_custom_certificate": False,
                    "pending_update_count": len(self._updates)}

    async def _api_getupdates(self, params: JSON) -> list[JSON]:
        offset, limit = params.get("offset"), int(params.get("limit") or 100)
        limit = limit if 1 <= limit <= 100 else 100
        with self._lock:
            self.polls += 1
            self._poll_generation += 1  # a newer poll ends an older one with 409, like Telegram
            generation = self._poll_generation
            self._notify()
            if isinstance(offset, int) and offset < 0:
                del self._updates[:offset]
            elif isinstance(offset, int):  # confirms every update below the offset
                self._updates = [u for u in self._updates if u["update_id"] >= offset]

        def ready() -> list[list[JSON]]:  # [batch] when the poll should answer, else []
            if generation != self._poll_generation:
                raise ApiError(409, "Conflict: terminated by other getUpdates request; "
                                    "make sure that only one bot instance is running")
            return [self._updates[:limit]] if self._updates or self._closing else []

        try:
            return (await self.wait_for(ready, float(params.get("timeout") or 0)))[0]
        except TimeoutError:
            return []

    def _render(self, params: JSON) -> tuple[str, list[JSON]]:
        raw = str(params.get("text") or "")
        mode = str(params.get("parse_mode") or "").lower()
        if mode == "html":
            text, entities = parse_html(raw)
        elif mode:
            raise ApiError(400, f"Bad Request: unsupported parse_mode {params['parse_mode']}")
        else:
            text, entities = raw, list(params.get("entities") or [])
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(text.strip()) > TEXT_LIMIT:
            raise ApiError(400, "Bad Request: message is too long")
        return text, entities

    async def _api_sendmessage(self, params: JSON) -> JSON:
        with self._lock:
            chat = self._chat(params)
            text, entities = self._render(params)
            markup = _check_markup(params.get("reply_markup"))
            message: JSON = {"message_id": self._next_message_id(chat["id"]),
                             "from": self.bot_user, "chat": chat, "date": int(time.time()),
                             "text": text}
            if entities:
                message["entities"] = entities
            if markup is not None and "inline_keyboard" in markup:
                message["reply_markup"] = markup
            self._messages[(chat["id"], message["message_id"])] = message
            self.sent.setdefault(chat["id"], []).append(SentMessage(
                chat["id"], message["message_id"], text, str(params["text"]),
                params.get("parse_mode"), entities, message.get("reply_markup"),
                history=[text]))
            held = chat["id"] in self._held_answers
            if held:
                self.answers_held.append(message["message_id"])
                self._notify()
        if held:  # accepted: only the answer waits
            await self.wait_for(lambda: chat["id"] not in self._held_answers or self._closing,
                                60)
        return message

    def _edit(self, message: JSON, text: str, raw: str, params: JSON,
              entities: list[JSON]) -> JSON:
        markup = _check_markup(params.get("reply_markup"))
        if (text, entities, markup) == (message["text"], message.get("entities", []),
                                        message.get("reply_markup")):
            raise ApiError(400, "Bad Request: message is not modified: specified new message "
                                "content and reply markup are exactly the same as a current "
                                "content and reply markup of the message")
        message.update(text=text, entities=entities, edit_date=int(time.time()))
        message.pop("reply_markup", None)
        if markup is not None:
            message["reply_markup"] = markup
        for sent in self.sent.get(message["chat"]["id"], []):
            if sent.message_id == message["message_id"]:
                sent.text, sent.raw_text, sent.entities = text, raw, entities
                sent.reply_markup, sent.edits = markup, sent.edits + 1
                sent.history.append(text)
                sent.parse_mode = params.get("parse_mode", sent.parse_mode)
        return message

    async def _api_editmessagetext(self, params: JSON) -> JSON:
        with self._lock:
            message = self._bot_message(params)
            text, entities = self._render(params)
            return self._edit(message, text, str(params["text"]), params, entities)

    async def _api_editmessagereplymarkup(self, params: JSON) -> JSON:
        with self._lock:
            message = self._bot_message(params)
            sent = next(s for s in self.sent[message["chat"]["id"]]
                        if s.message_id == message["message_id"])
            return self._edit(message, message["text"], sent.raw_text,
                              {"parse_mode": sent.parse_mode, **params},
                              message.get("entities", []))

    async def _api_answercallbackquery(self, params: JSON) -> bool:
        with self._lock:
            if self._open_queries.pop(str(params.get("callback_query_id")), None) is None:
                raise ApiError(400, "Bad Request: query is too old and response timeout "
                                    "expired or query ID is invalid")
            self.callback_answers.append(params)
            return True

    async def _api_sendmessagedraft(self, params: JSON) -> bool:
        with self._lock:
            chat = self._chat(params)
            if not self.drafts_allowed or chat["type"] != "private":
                raise ApiError(400, "Bad Request: TEXTDRAFT_PEER_INVALID")
            if not isinstance(params.get("draft_id"), int) or params["draft_id"] == 0:
                raise ApiError(400, "Bad Request: draft_id must be non-zero")
            text, _ = self._render(params)
            self.drafts.append((chat["id"], params["draft_id"], text))
            return True

    async def _api_deletemessage(self, params: JSON) -> bool:
        with self._lock:
            message = self._bot_message(params)
            chat_id = message["chat"]["id"]
            del self._messages[(chat_id, message["message_id"])]
            kept = self.sent.get(chat_id, [])
            self.deleted += [m for m in kept if m.message_id == message["message_id"]]
            self.sent[chat_id] = [m for m in kept if m.message_id != message["message_id"]]
            return True

    async def _api_sendchataction(self, params: JSON) -> bool:
        with self._lock:
            self.chat_actions.append((self._chat(params)["id"], str(params.get("action"))))
            return True

    async def _api_setmycommands(self, params: JSON) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list):
            raise ApiError(400, "Bad Request: can't parse commands JSON object")
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", str(command.get("command", ""))):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        with self._lock:
            self.commands[json.dumps(params.get("scope") or {"type": "default"})] = commands
            return True

    async def _api_getmycommands(self, params: JSON) -> list[JSON]:
        with self._lock:
            scope = json.dumps(params.get("scope") or {"type": "default"})
            return self.commands.get(scope, [])


def _check_markup(markup: Any) -> JSON | None:
    """Refuse inline buttons Telegram would refuse (callback_data of 1..64 bytes)."""
    if not isinstance(markup, dict):
        return None
    for row in markup.get("inline_keyboard", []):
        for button in row:
            data = button.get("callback_data")
            if not button.get("text") or (
                    data is not None and not 1 <= len(data.encode()) <= CALLBACK_DATA_LIMIT):
                raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
    return markup


async def _read_params(request: web.Request) -> JSON:
    """Query string, then a JSON body or a form; form values are typed the way Telegram does."""
    raw: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        raw.update(await request.json())
    elif request.can_read_body:  # a form; a multipart one may carry files (sendDocument)
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                raw[key] = UploadedFile(value.filename, value.content_type, value.file.read())
            elif isinstance(value, str):
                raw[key] = value
    params: JSON = {}
    for key, value in raw.items():
        if isinstance(value, str) and key in _JSON_PARAMS:
            value = json.loads(value)
        elif isinstance(value, str) and key in _BOOL_PARAMS:
            value = value.lower() == "true"
        elif isinstance(value, str) and key in _INT_PARAMS and re.fullmatch(r"-?\d+", value):
            value = int(value)
        params[key] = value
    return params


def _answer(error: ApiError) -> web.Response:
    body: JSON = {"ok": False, "error_code": error.code, "description": error.description}
    if error.retry_after is not None:
        body["parameters"] = {"retry_after": error.retry_after}
    if isinstance(error, _Migrated):
        body["parameters"] = {"migrate_to_chat_id": error.new_chat_id}
    return web.json_response(body, status=error.code)
