"""The fake Discord speaks the protocol's details: headers, errors, 429s, gateway, threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.adapters.discord.base_url import OFFICIAL, current_endpoints, endpoints_for, use_endpoints
from tests.fakes.discord_server import CHANNEL_ID, OWNER_ID, TOKEN, FakeDiscord

AUTH = {"Authorization": f"Bot {TOKEN}"}
REPO = Path(__file__).resolve().parents[3]


async def test_json_answers_have_exactly_the_json_content_type(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{fake.base_url}/users/@me", headers=AUTH) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "application/json"
        async with http.get(f"{fake.base_url}/users/@me",
                            headers={"Authorization": "Bot wrong"}) as response:
            assert response.status == 401
        async with http.get(f"{fake.base_url}/gateway/bot", headers=AUTH) as response:
            assert (await response.json())["url"] == fake.gateway_url


async def test_messages_over_2000_characters_or_empty_are_refused(fake: FakeDiscord) -> None:
    url = f"{fake.base_url}/channels/{CHANNEL_ID}/messages"
    async with aiohttp.ClientSession(headers=AUTH) as http:
        async with http.post(url, json={"content": "x" * 2001}) as response:
            assert response.status == 400 and (await response.json())["code"] == 50035
        async with http.post(url, json={"content": ""}) as response:
            assert response.status == 400
        async with http.post(url, json={"content": "x" * 2000}) as response:
            assert response.status == 200
    assert [len(m["content"]) for m in fake.sent_to(CHANNEL_ID)] == [2000]


async def test_a_429_looks_like_discords_and_an_early_retry_is_a_violation(
        fake: FakeDiscord) -> None:
    url = f"{fake.base_url}/channels/{CHANNEL_ID}/messages"
    fake.rate_limit(1, retry_after=30.0)
    async with aiohttp.ClientSession(headers=AUTH) as http:
        async with http.post(url, json={"content": "one"}) as response:
            assert response.status == 429
            assert (await response.json())["retry_after"] == 30.0
            assert response.headers["Via"] and response.headers["X-RateLimit-Remaining"] == "0"
            assert float(response.headers["X-RateLimit-Reset-After"]) == 30.0
        async with http.post(url, json={"content": "too soon"}) as response:
            assert response.status == 429
    assert [c.body["content"] for c in fake.rate_limit_violations] == ["too soon"]
    assert fake.sent_to(CHANNEL_ID) == []


async def test_interaction_callbacks_refuse_unknown_repeated_and_late_answers(
        fake: FakeDiscord) -> None:
    message = fake.push_message("question")
    first = fake.push_interaction("frontdesk:approve", message=message)
    base = f"{fake.base_url}/interactions"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/{first['id']}/forged/callback", json={"type": 6}) as r:
            assert r.status == 404 and (await r.json())["code"] == 10062
        async with http.post(f"{base}/{first['id']}/{first['token']}/callback",
                             json={"type": 6}) as r:
            assert r.status == 204
        async with http.post(f"{base}/{first['id']}/{first['token']}/callback",
                             json={"type": 6}) as r:
            assert r.status == 400 and (await r.json())["code"] == 40060
        fake.interaction_ttl = 0.0  # every press is now older than Discord's deadline
        late = fake.push_interaction("frontdesk:approve", message=message)
        async with http.post(f"{base}/{late['id']}/{late['token']}/callback",
                             json={"type": 6}) as r:
            assert r.status == 404
    assert [r["interaction_id"] for r in fake.interaction_responses] == [int(first["id"])]


async def test_gateway_says_hello_then_closes_on_a_bad_token(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(fake.gateway_url) as ws:
        hello = await ws.receive_json(timeout=5)
        assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] == 41_250
        await ws.send_json({"op": 1, "d": None})
        assert (await ws.receive_json(timeout=5))["op"] == 11
        await ws.send_json({"op": 2, "d": {"token": "wrong", "intents": 0}})
        closing = await ws.receive(timeout=5)
        assert closing.type is aiohttp.WSMsgType.CLOSE and closing.data == 4004


def test_endpoints_follow_discord_base_url() -> None:
    fake = endpoints_for("http://127.0.0.1:8080/api/v10/")
    assert (fake.rest_base, fake.gateway) == ("http://127.0.0.1:8080/api/v10",
                                              "ws://127.0.0.1:8080/")
    proxy = endpoints_for("https://proxy.example:8443")
    assert (proxy.rest_base, proxy.gateway) == ("https://proxy.example:8443/api/v10",
                                                "wss://proxy.example:8443/")
    assert endpoints_for(None) == endpoints_for("  ") == OFFICIAL
    with pytest.raises(ValueError, match="DISCORD_BASE_URL"):
        endpoints_for("127.0.0.1:8080")
    previous = use_endpoints(fake)
    try:
        assert current_endpoints() == fake
    finally:
        use_endpoints(previous)
    assert current_endpoints() == previous


def test_a_bot_in_another_process_talks_to_the_fake_in_a_thread() -> None:
    with FakeDiscord().in_thread() as fake:
        env = {**os.environ, "DISCORD_BOT_TOKEN": TOKEN, "DISCORD_BASE_URL": fake.base_url,
               "PYTHONPATH": str(REPO)}
        bot = subprocess.Popen([sys.executable, "-m", "tests.adapters.discord.echo_bot"], cwd=REPO,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            fake.wait_for_blocking(lambda: fake.identifies, timeout=30, what="IDENTIFY")
            fake.push_message("ping")
            dm = fake.dm_channel_id(OWNER_ID)
            echoed = fake.wait_for_blocking(
                lambda: [m["content"] for m in fake.sent_to(dm)], timeout=10, what="echo")
            assert echoed == ["echo: ping"]
        finally:
            bot.kill()
            output, _ = bot.communicate(timeout=10)
    assert TOKEN.encode() not in output
