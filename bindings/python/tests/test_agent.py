# SPDX-License-Identifier: MIT
"""The agent loop from Python against the scripted model server of
tests/loop (real HTTP on 127.0.0.1, the providers' wire formats): Python
tools called by the model, every call answered in the next request, events,
the prompt factory, streaming, cancel and resume from the journal."""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import pytest

import toolgate
from conftest import ROOT, SCALE

SERVER = ROOT / "tests" / "loop" / "model_server.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = {"turns": [
    {"text": "looking", "calls": [
        {"id": "call_1", "name": "lookup", "arguments": {"key": "a"}},
        {"id": "call_2", "name": "lookup", "arguments": {"key": "b"}}]},
    {"calls": [{"id": "call_3", "name": "lookup", "arguments": {}}]},
    {"text": "a is 1, b is 2."}]}


class ModelServer:
    def __init__(self, tmp: pathlib.Path, script: dict) -> None:
        (tmp / "script.json").write_text(json.dumps(script))
        self.log = tmp / "requests.jsonl"
        self.proc = subprocess.Popen(
            [NODE, str(SERVER), "--script", str(tmp / "script.json"),
             "--port", "0", "--log", str(self.log)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening "):
            self.proc.kill()
            raise RuntimeError("model server: " + self.proc.stderr.read())
        self.base = line.split()[1]

    def requests(self) -> list:
        return [json.loads(l) for l in self.log.read_text().splitlines()]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30 * SCALE)


@pytest.fixture
def server(tmp_path):
    servers = []

    def start(script=SCRIPT):
        s = ModelServer(tmp_path, script)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


def with_lookup(rt):
    @rt.tool(schema={"type": "object", "properties": {
        "key": {"type": "string"}}, "required": ["key"]})
    def lookup(args):
        """Look a key up."""
        return {"a": 1, "b": 2}[args["key"]]


def base_for(provider, base):
    return base + "/v1" if provider.startswith("openai") else base


@pytest.mark.parametrize("provider", toolgate.PROVIDERS)
def test_a_loop_runs_python_tools_for_every_provider(runtime, server,
                                                     provider):
    srv = server()
    with_lookup(runtime)
    texts, finished, iterations = [], [], []
    agent = toolgate.Agent(
        runtime, provider, base_for(provider, srv.base), "test-model",
        system="Be brief.",
        on_text=lambda it, t: texts.append((it, t)),
        on_call_finished=lambda it, c, r: finished.append(
            (it, c.id, r.outcome, r.error_code)),
        on_iteration=lambda it, n: iterations.append((it, n)))
    assert agent.run("What are a and b?") == "a is 1, b is 2."
    assert agent.stop == "answered" and agent.iterations == 3
    assert agent.tool_calls == 3
    assert (1, "looking") in texts
    ids = {f[1]: f for f in finished}
    assert ids["call_1"][2] == "success"
    assert ids["call_3"][2:] == ("error", "INVALID_ARGUMENTS")
    assert iterations == [(1, 2), (2, 1), (3, 0)]
    transcript = agent.transcript()
    assert transcript["stop"] == "answered"
    assert transcript["loop_id"] == agent.id
    reqs = srv.requests()
    assert len(reqs) == 3
    # the last request carries the three results
    body = json.dumps(reqs[2]["body"])
    for cid in ("call_1", "call_2", "call_3") if provider != "gemini" \
            else ():
        assert cid in body
    assert "INVALID_ARGUMENTS" in body
    agent.close()


def test_the_prompt_factory_decides_what_the_model_sees(runtime, server):
    srv = server()
    with_lookup(runtime)

    def summarise(turn, fmt):
        assert fmt == "openai-chat"
        return [{"role": "tool", "tool_call_id": r.id,
                 "content": f"{r.outcome}:{r.data}"} for r in turn.results]

    with toolgate.Agent(runtime, "openai", srv.base + "/v1", "m",
                        prompt_factory=summarise) as agent:
        agent.run("go")
    tools = [m for m in srv.requests()[1]["body"]["messages"]
             if m["role"] == "tool"]
    assert [m["content"] for m in tools] == ["success:1", "success:2"]


def test_a_failing_prompt_factory_fails_the_loop(runtime, server):
    srv = server()
    with_lookup(runtime)

    def broken(turn, fmt):
        raise KeyError("nope")

    agent = toolgate.Agent(runtime, "openai", srv.base + "/v1", "m",
                           prompt_factory=broken)
    with pytest.raises(toolgate.Error) as info:
        agent.run("go")
    assert "prompt factory: KeyError" in info.value.message
    assert agent.stop == "failed"


def test_streamed_answers(runtime, server):
    srv = server()
    with_lookup(runtime)
    pieces = []
    agent = toolgate.Agent(runtime, "anthropic", srv.base, "m", stream=True,
                           on_text=lambda it, t: pieces.append(t))
    assert agent.run("go") == "a is 1, b is 2."
    assert "".join(pieces).endswith("a is 1, b is 2.")
    assert srv.requests()[0]["body"]["stream"] is True


def test_cancel_then_resume_from_the_journal(runtime, server, journal):
    srv = server()
    holder = {}

    @runtime.tool(schema={"type": "object"})
    def lookup(args):
        if args.get("key") == "b":
            holder["agent"].cancel()  # from the tool's thread
        return 1

    agent = toolgate.Agent(runtime, "openai", srv.base + "/v1", "m")
    holder["agent"] = agent
    agent.run("go")
    assert agent.stop == "canceled"
    loop_id = agent.id
    agent.close()
    shown = toolgate.show_loop(str(journal), loop_id)
    assert shown["loop_id"] == loop_id
    again = toolgate.Agent.resume(runtime, loop_id)
    assert again.id == loop_id
    assert again.run(None) == "a is 1, b is 2."
    assert again.stop == "answered"
    again.close()
    # the calls of the first iteration ran once: canceled or done, not again
    first = [h for h in toolgate.history(str(journal), limit=100)
             if h["call"]["id"] in ("call_1", "call_2")]
    assert len(first) == 2
