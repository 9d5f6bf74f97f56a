#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""From an OpenAI Chat Completions response (the dict the OpenAI SDK's
``response.model_dump()`` gives) to the tool messages of the next request,
with every call through toolgate's gate: arguments checked against each
tool's JSON Schema, the policy, deadlines, the journal, one result per call.

    python3 examples/python/openai_tool_messages.py [RESPONSE.json]

prints the tool messages on stdout (and, on stderr, the tools to send with
the request and what became of each call). Without
a file it uses a response with three calls: one good, one with bad
arguments, one to a tool that does not exist (each gets its answer)."""
from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
from typing import Any, Dict, List

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]
                       / "bindings" / "python"))
import toolgate  # noqa: E402

WEATHER = {"type": "object",
           "properties": {"city": {"type": "string", "minLength": 1},
                          "unit": {"enum": ["C", "F"]}},
           "required": ["city"], "additionalProperties": False}


def make_runtime(state_dir: str) -> toolgate.Runtime:
    """A runtime with one Python tool; calls journaled under state_dir."""
    cfg = toolgate.Config(settings={
        "journal": os.path.join(state_dir, "journal.db"),
        "builtin_tools": [], "limits": {"timeout_ms": 5000}})
    rt = toolgate.Runtime(cfg)
    cfg.close()

    @rt.tool(schema=WEATHER)
    def get_weather(args: Dict[str, Any]) -> Dict[str, Any]:
        """The current weather of a city."""
        celsius = 21.5
        if args.get("unit") == "F":
            return {"city": args["city"], "temperature": celsius * 9 / 5 + 32}
        return {"city": args["city"], "temperature": celsius}

    return rt


def tool_messages(rt: toolgate.Runtime,
                  response: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Runs the calls of `response` and returns one {"role": "tool",
    "tool_call_id", "content"} message per call, in the calls' order."""
    with toolgate.parse(response, "openai-chat") as turn:
        for result in rt.run(turn):
            state = "ok" if result.succeeded else result.outcome
            print(f"# {result.id} {result.tool}: {state} "
                  f"{result.data if result.succeeded else result.error_message}"
                  f" ({result.duration_ms:.3f} ms)", file=sys.stderr)
        return turn.render_json("openai-chat")


SAMPLE = {
    "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_paris", "type": "function", "function": {
                "name": "get_weather",
                "arguments": "{\"city\": \"Paris\", \"unit\": \"C\"}"}},
            {"id": "call_bad", "type": "function", "function": {
                "name": "get_weather", "arguments": "{\"town\": \"Oslo\"}"}},
            {"id": "call_mail", "type": "function", "function": {
                "name": "send_email", "arguments": "{\"to\": \"x@y.z\"}"}}]}}],
}


def main() -> int:
    response = json.loads(pathlib.Path(sys.argv[1]).read_text()) \
        if len(sys.argv) > 1 else SAMPLE
    with tempfile.TemporaryDirectory() as state, make_runtime(state) as rt:
        tools = rt.tools("openai-chat")  # the request's "tools"
        print("# tools:", ", ".join(t["function"]["name"] for t in tools),
              file=sys.stderr)
        print(json.dumps(tool_messages(rt, response), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
