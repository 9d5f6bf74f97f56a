# SPDX-License-Identifier: MIT
"""examples/python/openai_tool_messages.py: an OpenAI SDK-shaped response in,
one tool message per call out."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

EXAMPLE = ROOT / "examples" / "python" / "openai_tool_messages.py"


def test_the_example_answers_every_call(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120,
                         check=True)
    messages = json.loads(out.stdout)
    assert [m["tool_call_id"] for m in messages] == \
        ["call_paris", "call_bad", "call_mail"]
    paris, bad, mail = (m["content"] for m in messages)
    assert '{"city":"Paris","temperature":21.5}' in paris
    assert json.loads(bad)["error"]["code"] == "INVALID_ARGUMENTS"
    assert json.loads(mail)["error"]["code"] == "UNKNOWN_TOOL"
    assert "# tools:" in out.stderr and "get_weather" in out.stderr


def test_the_example_reads_a_response_file(tmp_path, turns):
    response = tmp_path / "response.json"
    response.write_text(json.dumps({"choices": [{"message": {
        "role": "assistant", "tool_calls": [{"id": "f1", "type": "function",
            "function": {"name": "get_weather",
                         "arguments": "{\"city\": \"Oslo\", \"unit\": \"F\"}"}}]}}]}))
    out = subprocess.run([sys.executable, str(EXAMPLE), str(response)],
                         cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=True)
    (message,) = json.loads(out.stdout)
    assert '"temperature":70.7' in message["content"]
