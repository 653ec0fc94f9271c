"""The approval question shows a guest's words and the model's arguments as typed: no link,
no bold, no way out of the arguments' code block, whatever the text holds."""

from __future__ import annotations

from bot.adapters.telegram.markdown import markdown_to_html
from bot.models.base import ToolCall
from bot.tools.approval import question
from bot.tools.registry import Caller, ToolRegistry

HOSTILE = "[click me](http://evil.example) **now**\n```\n<b>x</b>"


def test_hostile_arguments_and_names_are_shown_as_typed_not_as_markup() -> None:
    guest = Caller(scope="telegram:200", is_owner=False, platform="telegram", chat_id="200",
                   name="[Ann](http://evil.example)")
    call = ToolCall(id="c1", name="git__git_commit", arguments={"message": HOSTILE})
    html = markdown_to_html(question(ToolRegistry(), call, guest, again=False))
    assert "<a " not in html and "<b>" not in html.replace("&lt;b&gt;", "")
    assert "[Ann](http://evil.example)" in html  # the name, as typed
    assert "[click me](http://evil.example) **now**" in html  # inside the code block
    assert html.count("<pre>") == 1 and "&lt;b&gt;x&lt;/b&gt;" in html
