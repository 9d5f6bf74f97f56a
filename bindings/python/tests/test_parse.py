# SPDX-License-Identifier: MIT
"""Parsing every wire format into normalized calls, and the errors a bad
document raises."""
from __future__ import annotations

import json

import pytest

import toolgate

WHOLE = {
    "openai-chat-response.json": "openai-chat",
    "openai-responses-response.json": "openai-responses",
    "anthropic-message.json": "anthropic",
    "gemini-response.json": "gemini",
    "mcp-tools-call.json": "mcp",
    "toolgate-calls.jsonl": "toolgate",
    "openai-chat-stream.sse": "openai-chat",
    "anthropic-stream.sse": "anthropic",
}


@pytest.mark.parametrize("name,fmt", sorted(WHOLE.items()))
def test_every_format_parses_to_calls(turns, name, fmt):
    turn = toolgate.parse((turns / name).read_bytes())
    assert turn.format == fmt
    assert len(turn) >= 1
    for i, call in enumerate(turn.calls):
        assert call.id and call.tool
        assert call.index == i
        assert call.format == fmt
        record = call.to_dict()
        assert record["id"] == call.id and record["tool"] == call.tool
        if call.arguments is not None:
            assert isinstance(call.arguments, dict)
            assert call.checksum.startswith("sha256:")
    assert turn.results == [None] * len(turn)


def test_string_arguments_become_an_object():
    turn = toolgate.parse({"choices": [{"message": {"role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "f", "arguments": "{\"x\": [1, 2]}"}}]}}]})
    (call,) = turn.calls
    assert call.arguments == {"x": [1, 2]}
    assert call.arguments_raw == "{\"x\": [1, 2]}"


def test_a_dict_and_its_text_give_the_same_calls(turns):
    text = (turns / "anthropic-message.json").read_text()
    a = toolgate.parse(text, "anthropic")
    b = toolgate.parse(json.loads(text), "anthropic")
    assert [(c.id, c.tool, c.arguments, c.checksum) for c in a] == \
        [(c.id, c.tool, c.arguments, c.checksum) for c in b]


def test_unreadable_json_raises_with_its_position():
    with pytest.raises(toolgate.ParseError) as info:
        toolgate.parse('{"a": [1,\n  }', source="reply.json")
    e = info.value
    assert e.name == "TG_EPARSE" and e.code == -3
    assert (e.line, e.column) == (2, 3)
    assert "reply.json:2:3" in e.message


def test_an_unknown_shape_raises_format_error():
    with pytest.raises(toolgate.FormatError):
        toolgate.parse({"nothing": "here"})
    with pytest.raises(toolgate.Error):
        toolgate.parse("{}", format="no-such-format")


def test_a_stream_hands_out_calls_before_it_ends(turns):
    data = (turns / "openai-chat-stream.sse").read_bytes()
    stream = toolgate.Stream("openai-chat")
    early = []
    for i in range(0, len(data), 7):
        for call in stream.feed(data[i:i + 7]):
            early.append((i + 7 < len(data), call.id, call.arguments))
    turn = stream.finish()
    assert [c.id for c in turn.calls] == sorted(
        [e[1] for e in early], key=[c.id for c in turn.calls].index)
    assert len(early) == len(turn) >= 2
    assert any(before_end for before_end, _, _ in early)


def test_new_call_and_renders():
    turn = toolgate.new_call("echo", {"text": "hi"}, id="x1")
    (call,) = turn.calls
    assert (call.id, call.tool, call.arguments) == ("x1", "echo",
                                                     {"text": "hi"})
    assert toolgate.renders("anthropic") and not toolgate.renders("nope")


def test_versions_name_the_libraries_it_runs_with():
    v = toolgate.versions()
    assert v["toolgate"] == toolgate.library_version() == toolgate.__version__
    for lib in ("jansson", "libuv", "sqlite", "openssl", "pcre2", "libcurl"):
        assert v[lib][0].isdigit(), (lib, v[lib])
