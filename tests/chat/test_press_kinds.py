"""A press is dispatched by its button's kind: pairing's Allow, a meeting's Cancel and a run's
wait each have their handler; a token made before kinds finds its kind by its run id."""

from __future__ import annotations

from bot.access.pairing import PAIRING_RUN
from bot.chat.decisions import NOT_OWNER, PressKinds
from bot.chat.meetings import CANCEL
from bot.delivery.buttons import ButtonTarget
from tests.support.harness import GUEST, OWNER, STRANGER, HarnessFactory


def test_the_kind_is_the_tokens_and_an_old_token_is_told_by_its_run_id() -> None:
    kinds = PressKinds(legacy_prefixes={PAIRING_RUN: "pairing", CANCEL: "meeting"})
    assert kinds.kind_of(ButtonTarget("m-1", "k", "a", "A", kind="pairing")) == "pairing"
    assert kinds.kind_of(ButtonTarget("pairing:telegram:5", "pairing", "allow", "Allow")) \
        == "pairing"
    assert kinds.kind_of(ButtonTarget("meeting-cancel:3", "cancel", "Cancel", "C")) == "meeting"
    assert kinds.kind_of(ButtonTarget("m-1", "approval", "Approve", "Approve")) == "run"


async def test_an_old_pairing_token_is_still_pairings_and_only_the_owners(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_PAIRING="ask")
    asked = await harness.gateway.handle(harness.message("hello?", STRANGER))
    assert asked is not None
    # a button row as an older Frontdesk wrote it: no kind in the token
    harness.services.db.writer.execute(
        "INSERT INTO buttons (token, run_id, wait_key, answer, label, created_at) VALUES"
        " ('legacyAllowToken1234567', ?, 'pairing', 'allow', 'Allow', 0)",
        (f"{PAIRING_RUN}telegram:{STRANGER}",))
    refused = await harness.gateway.press("telegram", GUEST, "legacyAllowToken1234567")
    assert (refused.accepted, refused.alert) == (False, NOT_OWNER)
    allowed = await harness.gateway.press("telegram", OWNER, "legacyAllowToken1234567")
    assert allowed.accepted
    person = harness.services.admission.people.status("telegram", STRANGER)
    assert person == "allowed"


async def test_a_run_button_pressed_by_a_guest_decides_nothing(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness()
    asked = await harness.send("/draft a note to Ann")
    assert asked.buttons and all(b.token.startswith("run.") for b in asked.buttons)
    pressed = await harness.gateway.press("telegram", GUEST, asked.buttons[0].token)
    assert (pressed.accepted, pressed.alert) == (False, NOT_OWNER)
    assert harness.services.flows.store.waits("open", asked.run_id)
