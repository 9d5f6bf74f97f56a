# SPDX-License-Identifier: MIT
"""Running turns: Python functions as in-process tools behind the gate
(schema, policy, journal), the five outcomes with the seeds' accessors,
concurrency with the GIL released, cancel from another thread, events, and
rendering back."""
from __future__ import annotations

import threading

import pytest

import toolgate

ADD_SCHEMA = {"type": "object",
              "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
              "required": ["a", "b"], "additionalProperties": False}


def chat(*calls):
    """An OpenAI Chat Completions response (as the SDK's model_dump gives)."""
    return {"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": cid, "type": "function",
         "function": {"name": name, "arguments": args}}
        for cid, name, args in calls]}}]}


def test_a_python_tool_runs_behind_the_gate(runtime, journal):
    @runtime.tool(schema=ADD_SCHEMA, description="Add two numbers")
    def add(args):
        return {"sum": args["a"] + args["b"]}

    turn = toolgate.parse(chat(("c1", "add", '{"a": 1, "b": 41}'),
                               ("c2", "add", '{"a": 1}'),
                               ("c3", "send_email", "{}"),
                               ("c4", "add", '{"a": 1, "b": }')))
    ok, bad, unknown, malformed = runtime.run(turn, caller="pytest")
    assert ok.succeeded and ok.outcome == "success"
    assert ok.execution == "finished" and ok.data == {"sum": 42}
    assert ok.error_message is None and ok.duration_ms > 0
    assert bad.is_error and bad.error_code == "INVALID_ARGUMENTS"
    assert "missing required property 'b'" in bad.error_message
    assert bad.execution == "not_started" and bad.data is None
    assert unknown.error_code == "UNKNOWN_TOOL"
    assert malformed.outcome == "error"
    messages = turn.render_json("openai-chat")
    assert [m["tool_call_id"] for m in messages] == ["c1", "c2", "c3", "c4"]
    assert all(m["role"] == "tool" for m in messages)
    assert '{"sum":42}' in messages[0]["content"]
    # the journal has them, with the caller
    shown = toolgate.show(journal, "c1")
    assert shown["call"]["caller_id"] == "pytest"
    assert shown["result"]["outcome"] == "success"
    assert {h["call"]["id"] for h in toolgate.history(journal)} == \
        {"c1", "c2", "c3", "c4"}
    (add_stats,) = [s for s in toolgate.stats(journal) if s["tool"] == "add"]
    assert add_stats["calls"] == 3
    assert toolgate.verify(journal)["ok"] is True


def test_failures_of_a_python_tool_are_results(runtime):
    def boom(args):
        raise ValueError("no such row")

    def refuse(args):
        raise toolgate.Denied("outside the workspace")

    def fail(args):
        raise toolgate.ToolError("quota used up", code="QUOTA")

    def text(args, ctx):
        ctx.write("line 1\n")
        return "line 2\n"

    for name, fn in [("boom", boom), ("refuse", refuse), ("fail", fail),
                     ("text", text)]:
        runtime.register(name, fn)
    turn = toolgate.parse(chat(("b", "boom", "{}"), ("r", "refuse", "{}"),
                               ("f", "fail", "{}"), ("t", "text", "{}")))
    b, r, f, t = runtime.run(turn)
    assert b.outcome == "error" and b.error_code == "TOOL_FAILED"
    assert b.error_message == "ValueError: no such row"
    assert r.outcome == "denied" and r.execution == "not_started"
    assert "outside the workspace" in r.error_message
    assert (f.error_code, f.error_message) == ("QUOTA", "quota used up")
    assert t.succeeded and t.data == "line 1\nline 2\n"


def test_a_name_registered_twice_raises(runtime):
    runtime.register("once", lambda a: 1)
    with pytest.raises(toolgate.AlreadyExists):
        runtime.register("once", lambda a: 2)


def test_tools_run_concurrently_with_the_gil_released(runtime, scale):
    # Both calls must be inside the tool at the same time to pass the
    # barrier: run() holding the GIL, or running them one by one, fails it.
    barrier = threading.Barrier(2, timeout=10 * scale)

    def meet(args):
        barrier.wait()
        return threading.get_ident()

    runtime.register("meet", meet)
    main = threading.get_ident()
    results = runtime.run(toolgate.parse(chat(("m1", "meet", "{}"),
                                              ("m2", "meet", "{}"))))
    assert [r.outcome for r in results] == ["success", "success"]
    idents = {r.data for r in results}
    assert len(idents) == 2 and main not in idents


def test_cancel_from_another_thread(runtime, scale):
    started = threading.Event()

    def wait_for_cancel(args, ctx):
        started.set()
        while not ctx.canceled:
            threading.Event().wait(0.005)
        return "stopped"

    runtime.register("spin", wait_for_cancel)

    def canceler():
        assert started.wait(10 * scale)
        runtime.cancel(None, by="user", reason="enough")

    t = threading.Thread(target=canceler)
    t.start()
    (r,) = runtime.run(toolgate.parse(chat(("s", "spin", "{}"))))
    t.join()
    assert r.outcome == "canceled"
    assert "enough" in r.error_message


def test_command_tools_and_events(tmp_path):
    events = []
    cfg = toolgate.Config(settings={
        "workspace": str(tmp_path), "journal": None,
        "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"],
                   "input_schema": {"type": "object", "properties": {
                       "text": {"type": "string"}}, "required": ["text"]}}]})
    with toolgate.Runtime(cfg, on_event=events.append) as rt:
        assert rt.journal is None
        names = [t["name"] for t in rt.tools("openai-chat")
                 if "name" in t] or \
            [t["function"]["name"] for t in rt.tools("openai-chat")]
        assert "echo" in names
        turn = toolgate.parse(chat(("e", "echo", '{"text": "hello"}')))
        (r,) = rt.run(turn)
    assert r.succeeded and r.exit_status == 0
    assert "hello" in str(r.data)
    kinds = [e.kind for e in events]
    assert kinds[0] == "accepted" and kinds[-1] == "finished"
    assert "started" in kinds
    out = b"".join(e.data for e in events if e.kind == "output")
    assert out == b"hello\n"
    assert events[-1].result["outcome"] == "success"
    assert all(e.call_id == "e" for e in events)


def test_a_bad_configuration_names_the_key():
    with pytest.raises(toolgate.ConfigError) as info:
        toolgate.Config(settings={"limits": {"parallel": 0}})
    assert "limits.parallel" in info.value.message


def test_results_render_in_another_format(runtime):
    runtime.register("one", lambda a: 1, inline=True)
    turn = toolgate.parse(chat(("o", "one", "{}")))
    runtime.run(turn)
    anthropic = turn.render_json("anthropic")
    assert anthropic["role"] == "user"
    assert anthropic["content"][0]["tool_use_id"] == "o"


def test_arun_lets_the_event_loop_go_on(runtime, scale):
    import asyncio

    started, gate = threading.Event(), threading.Event()

    def wait_for_gate(args):
        started.set()
        return gate.wait(30 * scale)  # the coroutine below must open it

    runtime.register("wait_for_gate", wait_for_gate)

    async def main():
        task = asyncio.ensure_future(runtime.arun(toolgate.parse(
            chat(("w", "wait_for_gate", "{}")))))
        while not started.is_set():  # runs only if arun does not block
            await asyncio.sleep(0.001)
        gate.set()
        return await task

    (r,) = asyncio.run(main())
    assert r.succeeded and r.data is True
