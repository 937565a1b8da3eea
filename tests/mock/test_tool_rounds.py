"""The mock counts an agent's tool rounds as prompt tokens, in each API's form."""

from __future__ import annotations

from loadgen.client.adapters.agent_messages import chat_messages, messages_blocks, responses_items
from loadgen.mock.request import message_tokens_of
from loadgen.workload.agent_context import ToolUse, round_messages

ROUND = [
    {"role": "user", "content": "find the bug"},
    *round_messages("looking now", ToolUse("call_3", "grep", '{"q":"a b"}'), "x y z w"),
]


def test_each_api_form_counts_the_same_words() -> None:
    # 3 + 2 (the answer) + 2 (its arguments split at the space) + 4 (the result)
    for form in (chat_messages(ROUND), responses_items(ROUND), messages_blocks(ROUND)):
        items = [{"role": "user", **m} if "role" not in m else m for m in form]
        assert len(message_tokens_of(items)) == 11, form


def test_the_forms() -> None:
    chat = chat_messages(ROUND)
    assert chat[1]["tool_calls"] == [
        {
            "id": "call_3",
            "type": "function",
            "function": {"name": "grep", "arguments": '{"q":"a b"}'},
        }
    ]
    assert chat[2] == {"role": "tool", "tool_call_id": "call_3", "content": "x y z w"}
    items = responses_items(ROUND)
    assert [i.get("type") for i in items] == [None, None, "function_call", "function_call_output"]
    assert items[3] == {"type": "function_call_output", "call_id": "call_3", "output": "x y z w"}
    blocks = messages_blocks(ROUND)
    assert blocks[1]["content"][1] == {
        "type": "tool_use",
        "id": "call_3",
        "name": "grep",
        "input": {"q": "a b"},
    }
    assert blocks[2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_3", "content": "x y z w"}],
    }


def test_a_round_without_a_call_is_plain_messages() -> None:
    plain = round_messages("an answer", None, "a result")
    assert plain == [
        {"role": "assistant", "content": "an answer"},
        {"role": "user", "content": "a result"},
    ]
    assert chat_messages(plain) == plain
