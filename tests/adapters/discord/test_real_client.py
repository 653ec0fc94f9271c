"""A real discord.py client against the fake Discord: gateway, messages, buttons, resume."""

from __future__ import annotations

import asyncio

import discord
import pytest

from bot.adapters.discord.base_url import point_discord_at, use_endpoints
from tests.adapters.discord.conftest import RecordingClient, running, started
from tests.fakes.discord_server import (
    BOT_ID,
    CHANNEL_ID,
    GUILD_ID,
    OWNER_ID,
    TOKEN,
    FakeDiscord,
)


async def test_ready_and_guild_create_reach_on_ready(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        assert client.user is not None and client.user.id == BOT_ID
        guild = client.get_guild(GUILD_ID)
        assert guild is not None and guild.get_channel(CHANNEL_ID) is not None
        # Without the members intent discord.py caches only the bot's own member.
        assert guild.me is not None and guild.get_member(OWNER_ID) is None
        identify = pointed.identifies[0]
        assert identify["intents"] & discord.Intents.message_content.flag
        await pointed.wait_for(lambda: pointed.heartbeats >= 1, what="a heartbeat")


async def test_pushed_messages_reach_on_message_with_mentions_and_replies(
        pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        dm = pointed.push_message("hello from a DM")
        mention = pointed.push_message("are you there?", guild=True, mention_bot=True)
        await client.until(lambda: len(client.messages) >= 2)
        first, second = client.messages[:2]
        assert (first.id, first.content, first.guild) == (int(dm["id"]), "hello from a DM", None)
        assert isinstance(first.channel, discord.DMChannel)
        assert first.author.id == OWNER_ID
        assert second.id == int(mention["id"]) and second.guild is not None
        assert client.user in second.mentions

        channel = client.get_channel(CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send("I am here.")
        reply = pointed.push_message("thanks", guild=True, reply_to=pointed.find_message(sent.id))
        await client.until(lambda: any(m.id == int(reply["id"]) for m in client.messages))
        got = next(m for m in client.messages if m.id == int(reply["id"]))
        assert got.reference is not None and got.reference.message_id == sent.id
        assert client.user not in got.mentions  # a reply without a ping mentions nobody


async def test_channel_send_and_typing_land_in_the_fake(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        owner = await client.fetch_user(OWNER_ID)
        dm = await owner.create_dm()
        async with dm.typing():
            await dm.send("part one")
        assert [m["content"] for m in pointed.sent_to(dm.id)] == ["part one"]
        assert pointed.typing[dm.id] >= 1
        # Discord echoes the bot's own message on the gateway; a bot must ignore it.
        await client.until(lambda: any(m.author.id == BOT_ID for m in client.messages))


async def test_a_send_repeated_with_the_same_nonce_shows_once(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        dm = await (await client.fetch_user(OWNER_ID)).create_dm()
        first = await dm.send("part one", nonce="fd42")  # discord.py enforces the nonce
        again = await dm.send("part one", nonce="fd42")  # a re-send after a crash
        other = await dm.send("part two", nonce="fd43")
        assert first.id == again.id != other.id
        assert [m["content"] for m in pointed.sent_to(dm.id)] == ["part one", "part two"]


async def test_without_the_message_content_intent_guild_text_is_blank(
        pointed: FakeDiscord) -> None:
    client = RecordingClient(message_content=False)
    async with running(client):
        await started(client)
        pointed.push_message("secret", guild=True)
        pointed.push_message("ping", guild=True, mention_bot=True)
        pointed.push_message("in a DM")
        await client.until(lambda: len(client.messages) >= 3)
        assert [m.content for m in client.messages] == ["", f"<@{BOT_ID}> ping", "in a DM"]


async def test_message_content_intent_not_enabled_in_the_portal_fails_login() -> None:
    async with FakeDiscord(message_content_enabled=False) as fake:
        previous = point_discord_at(fake.base_url)
        try:
            client = RecordingClient()
            try:
                with pytest.raises(discord.PrivilegedIntentsRequired):
                    await asyncio.wait_for(client.start(TOKEN), 10)
            finally:
                await client.close()
        finally:
            use_endpoints(previous)


async def test_history_serves_messages_sent_while_the_bot_was_down(
        pointed: FakeDiscord) -> None:
    missed = [pointed.push_message(f"while you were out {i}", dispatch=False) for i in range(3)]
    before_all = int(missed[0]["id"]) - 1
    client = RecordingClient()
    async with running(client):
        await started(client)
        dm = await (await client.fetch_user(OWNER_ID)).create_dm()
        found = [m async for m in dm.history(after=discord.Object(before_all),
                                              oldest_first=True, limit=None)]
        assert [m.content for m in found] == [f"while you were out {i}" for i in range(3)]
        newest_two = [m async for m in dm.history(limit=2)]
        assert [m.id for m in newest_two] == [int(missed[2]["id"]), int(missed[1]["id"])]
        assert client.messages == []  # nothing was dispatched: Discord does not re-deliver


async def test_rate_limit_is_waited_out_and_the_message_lands_once(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        channel = client.get_channel(CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        pointed.rate_limit(2, retry_after=0.15)
        await channel.send("after the limit")
        posts = [c for c in pointed.calls if c.method == "POST" and c.path.endswith("/messages")]
        assert [c.status for c in posts] == [429, 429, 200]
        assert pointed.rate_limit_violations == []
        assert [m["content"] for m in pointed.sent_to(CHANNEL_ID)] == ["after the limit"]


class Approval(discord.ui.View):
    """A persistent view: no time-out and fixed custom_ids, as the adapter will use."""

    def __init__(self, decisions: list[tuple[int, str]]) -> None:
        super().__init__(timeout=None)
        self.decisions = decisions

    @discord.ui.button(label="Approve", style=discord.ButtonStyle.success,
                       custom_id="frontdesk:approve")
    async def approve(self, interaction: discord.Interaction,
                      button: discord.ui.Button[Approval]) -> None:
        if interaction.user.id != OWNER_ID:
            await interaction.response.send_message("Only the owner decides.", ephemeral=True)
            return
        self.decisions.append((interaction.user.id, "approve"))
        await interaction.response.edit_message(content="Approved.", view=None)


async def test_persistent_view_gets_a_press_after_a_restart(pointed: FakeDiscord) -> None:
    first = RecordingClient()
    async with running(first):
        await started(first)
        dm = await (await first.fetch_user(OWNER_ID)).create_dm()
        question = await dm.send("Publish the draft?", view=Approval([]))
    stored = pointed.find_message(question.id)
    assert stored is not None
    assert stored["components"][0]["components"][0]["custom_id"] == "frontdesk:approve"

    decisions: list[tuple[int, str]] = []
    second = RecordingClient()  # "after a restart": a new client that only re-registers
    second.views_to_register.append(Approval(decisions))
    async with running(second):
        await started(second)
        pointed.push_interaction("frontdesk:approve", message=stored, presser=pointed.stranger)
        pointed.push_interaction("frontdesk:approve", message=stored)
        await pointed.wait_for(lambda: len(pointed.interaction_responses) >= 2)

    refusal, decision = pointed.interaction_responses
    assert refusal["type"] == 4 and refusal["data"]["flags"] & 64  # ephemeral, to the stranger
    assert decision["type"] == 7  # the message itself is updated
    assert decisions == [(OWNER_ID, "approve")]
    edited = pointed.find_message(question.id)
    assert edited is not None
    assert (edited["content"], edited["components"]) == ("Approved.", [])


async def test_dropped_websocket_resumes_without_replaying_old_messages(
        pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        before = pointed.push_message("before the drop")
        await client.until(lambda: len(client.messages) == 1)

        pointed.drop_connection()
        await client.until(lambda: "resumed" in client.events)
        after = pointed.push_message("after the drop")
        await client.until(lambda: len(client.messages) == 2)

        assert [m.id for m in client.messages] == [int(before["id"]), int(after["id"])]
        assert len(pointed.identifies) == 1 and len(pointed.resumes) == 1
        assert pointed.resumes[0]["session_id"].startswith("session-")
        assert client.events.count("ready") == 1

        pointed.dispatch("MESSAGE_CREATE", before)  # Discord may re-deliver: the fake can too
        await client.until(lambda: len(client.messages) == 3)
        assert client.messages[2].id == int(before["id"])


async def test_refused_resume_identifies_again(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        pointed.refuse_next_resume()
        pointed.drop_connection()
        await client.until(lambda: client.events.count("ready") == 2)
        assert len(pointed.identifies) == 2 and len(pointed.resumes) == 1


async def test_slash_commands_register_globally_and_per_guild(pointed: FakeDiscord) -> None:
    client = RecordingClient()
    tree = discord.app_commands.CommandTree(client)

    @tree.command(name="help", description="What I can do")
    async def help_command(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("help")

    async with running(client):
        await started(client)
        synced = await tree.sync()
        await tree.sync(guild=discord.Object(GUILD_ID))
    assert [c.name for c in synced] == ["help"]
    assert [c["name"] for c in pointed.commands[None]] == ["help"]
    assert GUILD_ID in pointed.commands


async def test_a_message_pushed_during_the_drop_arrives_exactly_once(
        pointed: FakeDiscord) -> None:
    client = RecordingClient()
    async with running(client):
        await started(client)
        pointed.drop_connection()
        during = pointed.push_message("sent while the socket closes")
        await client.until(lambda: "resumed" in client.events)
        await client.until(lambda: any(m.id == int(during["id"]) for m in client.messages))
        marker = pointed.push_message("later")
        await client.until(lambda: any(m.id == int(marker["id"]) for m in client.messages))
        assert [m.id for m in client.messages].count(int(during["id"])) == 1


async def test_the_fake_in_a_thread_serves_a_client_in_the_test_loop() -> None:
    with FakeDiscord().in_thread() as fake:
        previous = point_discord_at(fake.base_url)
        try:
            client = RecordingClient()
            async with running(client):
                await started(client)
                fake.push_message("across threads")
                await client.until(lambda: client.messages)
                await client.messages[0].channel.send("seen")
                dm = fake.dm_channel_id(OWNER_ID)
                sent = await fake.wait_for(lambda: fake.sent_to(dm), what="a reply")
                assert [m["content"] for m in sent] == ["seen"]
        finally:
            use_endpoints(previous)
