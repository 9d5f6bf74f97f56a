#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the stream transcripts of tests/data/streams/<provider>/<case>.sse.

Each transcript has the shape of a real capture of the provider's SSE stream
(field order, ids, usage chunks, pings, keep-alive comments), and next to it:
  <case>.calls  the calls it must give, one JSON object per line:
                {"id","tool","args"} plus "pre_error" (a code) for a call
                that cannot run; "args" is null when it did not decode
  <case>.json   for complete streams, the whole-document response the stream
                adds up to (the provider's non-streamed answer), whose calls
                must equal the stream's
The interleaved cases write several calls at once, their pieces taking
turns (interleave()), as providers and OpenAI-compatible servers may; the
calls must still come out whole, in the order the model wrote them.
Run it from anywhere; it rewrites the files. The transcripts are data, not
code: edit this script, not the .sse files.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def pieces(s, sizes=(1, 4, 3, 7, 2, 5, 9, 6)):
    """Splits s the way a model's tokens split a JSON string."""
    out, i, k = [], 0, 0
    while i < len(s):
        n = sizes[k % len(sizes)]
        out.append(s[i:i + n])
        i += n
        k += 1
    return out


def write(provider, case, sse, calls, whole=None, eol="\n"):
    d = os.path.join(HERE, provider)
    os.makedirs(d, exist_ok=True)
    if eol != "\n":
        sse = sse.replace("\n", eol)
    with open(os.path.join(d, case + ".sse"), "w", newline="") as f:
        f.write(sse)
    with open(os.path.join(d, case + ".calls"), "w") as f:
        for c in calls:
            f.write(dumps(c) + "\n")
    p = os.path.join(d, case + ".json")
    if whole is not None:
        with open(p, "w") as f:
            f.write(json.dumps(whole, indent=2, ensure_ascii=False) + "\n")
    elif os.path.exists(p):
        os.remove(p)


def cut_inside(sse, marker, nth=1, extra=0):
    """The transcript cut just after the nth occurrence of marker (plus
    extra bytes): inside the line that holds it."""
    i = -1
    for _ in range(nth):
        i = sse.index(marker, i + 1)
    return sse[: i + len(marker) + extra]


def call(id_, tool, args, pre_error=None):
    c = {"id": id_, "tool": tool, "args": args}
    if pre_error:
        c["pre_error"] = pre_error
    return c


def expect_call(x, cut=False):
    """The expected call of (id, tool, args); cut: the input ended inside
    its arguments."""
    return call(x[0], x[1], None, "MALFORMED_ARGUMENTS") if cut else call(*x)


CALLS = [
    ("read_file", {"path": "src/main.c", "max_bytes": 4096}),
    ("grep", {"pattern": "TODO|FIXME", "path": "src", "ignore_case": True}),
    ("list_dir", {"path": "docs/ü ñ", "depth": 2, "note": "quote \" and \\ and\nnewline"}),
]


def interleave(arg_texts, stagger=2, sizes=(5, 9, 3, 11, 7, 13)):
    """The order in which a model writing several calls at once sends their
    pieces (of the given sizes: larger than pieces()' default, which keeps
    the transcripts, each split at every byte by the tests, short): call k
    starts once stagger * k pieces went out, then the open calls take
    turns, one piece each. Returns [(k, piece)], piece None where call k
    starts."""
    ps = [pieces(t, sizes) for t in arg_texts]
    pos, steps, started, sent, turn = [0] * len(ps), [], 0, 0, 0
    while True:
        open_ = [k for k in range(started) if pos[k] < len(ps[k])]
        if started < len(ps) and (sent >= stagger * started or not open_):
            steps.append((started, None))
            started += 1
            continue
        if not open_:
            return steps
        k = open_[turn % len(open_)]
        turn += 1
        steps.append((k, ps[k][pos[k]]))
        pos[k] += 1
        sent += 1


def last_pieces(steps):
    """The step index at which each call's last piece goes out."""
    last = {}
    for i, (k, p) in enumerate(steps):
        if p is not None:
            last[k] = i
    return last


def cut_two_open(steps, n):
    """The first step after which one call's arguments are complete and at
    least two others' are not: where the interleaved_cut cases end."""
    last = last_pieces(steps)
    for i in range(len(steps)):
        done = [k for k in range(n) if last[k] <= i]
        begun = {k for k, _ in steps[: i + 1]}
        if len(done) == 1 and len(begun - set(done)) >= 2:
            return i
    raise AssertionError("no step with two calls open")


def write_interleaved(provider, calls, stream, expect, **kw):
    """<provider>/interleaved: calls (args last in each tuple) written at
    once by stream(calls, steps=...), each expected whole (expect(x)) in
    the written order; and interleaved_cut, the same transcript ending with
    one call's arguments closed and two open: those two are cut
    (expect(x, cut=True)), the closed one is complete - nothing else for
    its index followed."""
    steps = interleave([dumps(x[-1]) for x in calls])
    sse, whole = stream(calls, steps=steps, **kw)
    write(provider, "interleaved", sse, [expect(x) for x in calls], whole)
    at = cut_two_open(steps, len(calls))
    done = [k for k, i in last_pieces(steps).items() if i <= at]
    sse, _ = stream(calls, steps=steps, cut_after=at)
    write(provider, "interleaved_cut", sse,
          [expect(x, cut=k not in done) for k, x in enumerate(calls)])


# The interleaved cases put the longest arguments first: they complete
# last, so the order calls complete in is not the order they were written.
ILV = [CALLS[2], CALLS[1], CALLS[0]]

# ---------------------------------------------------------------- openai-chat


def chat_stream(calls, text=None, finish=True, done=True, comments=False,
                usage=True, steps=None, cut_after=None):
    cid, created, model = "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", 1741570283, "gpt-4o-2024-08-06"
    fp = "fp_eb9dce56a8"

    def chunk(delta, finish_reason=None, choices=True):
        o = {"id": cid, "object": "chat.completion.chunk", "created": created,
             "model": model, "service_tier": "default",
             "system_fingerprint": fp}
        o["choices"] = [{"index": 0, "delta": delta, "logprobs": None,
                         "finish_reason": finish_reason}] if choices else []
        if usage:
            o["usage"] = None
        return "data: " + dumps(o) + "\n\n"

    out = []
    if comments:
        out.append(": OPENROUTER PROCESSING\n\n")
    first = {"role": "assistant", "content": None if text is None else "",
             "refusal": None}
    if calls and text is None:
        first["tool_calls"] = None
        del first["tool_calls"]
    out.append(chunk(first))
    if text:
        for t in pieces(text, (3, 5, 4)):
            out.append(chunk({"content": t}))
            if comments:
                out.append(": keep-alive\n\n")
    if steps is None:
        steps = [(k, p) for k, (_, _, args) in enumerate(calls)
                 for p in [None] + pieces(dumps(args))]
    sent = [0] * len(calls)
    for i, (k, p) in enumerate(steps):
        id_, name, _ = calls[k]
        if p is None:
            out.append(chunk({"tool_calls": [{"index": k, "id": id_, "type": "function",
                                               "function": {"name": name, "arguments": ""}}]}))
            continue
        out.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": p}}]}))
        if comments and sent[k] == 2:
            out.append(":\n\n")
        sent[k] += 1
        if cut_after == i:
            # The transcript ends inside the next chunk.
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "x"}}]})[:60])
            return "".join(out), None
    if finish:
        out.append(chunk({}, "tool_calls" if calls else "stop"))
        if usage:
            o = {"id": cid, "object": "chat.completion.chunk", "created": created,
                 "model": model, "service_tier": "default",
                 "system_fingerprint": fp, "choices": [],
                 "usage": {"prompt_tokens": 412, "completion_tokens": 57,
                           "total_tokens": 469,
                           "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                           "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                         "accepted_prediction_tokens": 0,
                                                         "rejected_prediction_tokens": 0}}}
            out.append("data: " + dumps(o) + "\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    whole = {"id": cid, "object": "chat.completion", "created": created, "model": model,
             "choices": [{"index": 0, "message": {
                 "role": "assistant", "content": text, "refusal": None,
                 "tool_calls": [{"id": i, "type": "function",
                                 "function": {"name": n, "arguments": dumps(a)}}
                                for i, n, a in calls] or None,
                 "annotations": []},
                 "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}],
             "usage": {"prompt_tokens": 412, "completion_tokens": 57, "total_tokens": 469},
             "service_tier": "default", "system_fingerprint": fp}
    if not calls:
        del whole["choices"][0]["message"]["tool_calls"]
    return "".join(out), whole


def openai_chat():
    ids = ["call_KxS0sXcrS0ZWpGxTHqNkTbdU", "call_0lV2sQ1FgTvxx4TqTUXnEs9u",
           "call_Ym3iGc7TZS1Kc0cDqnRpY4dq"]
    c = [(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(3)]
    sse, whole = chat_stream(c[:1])
    write("openai-chat", "normal", sse, [call(*x) for x in c[:1]], whole)
    sse, whole = chat_stream(c, text="Let me look.")
    write("openai-chat", "parallel", sse, [call(*x) for x in c], whole)
    sse, whole = chat_stream(c, comments=True)
    write("openai-chat", "pings_comments", sse, [call(*x) for x in c], whole)
    sse, whole = chat_stream(c[:2])
    write("openai-chat", "crlf", sse, [call(*x) for x in c[:2]], whole, eol="\r\n")
    # Cut inside the third call's arguments: the first two closed when the
    # next index started, the third never did.
    sse, _ = chat_stream(c, finish=False, done=False)
    sse = cut_inside(sse, '"index":2,"function":{"arguments":"', 5, 1)
    write("openai-chat", "truncated_args",
          sse, [call(*c[0]), call(*c[1]), call(ids[2], "list_dir", None, "MALFORMED_ARGUMENTS")])
    sse, _ = chat_stream([], text="I will read the file", finish=False, done=False)
    sse = cut_inside(sse, '"content":" fil')
    write("openai-chat", "truncated_before_call", sse, [])
    # Three calls written at once; each comes out whole, in index order.
    write_interleaved("openai-chat", [(ids[i], ILV[i][0], ILV[i][1]) for i in range(3)],
                      chat_stream, expect_call, text="Checking.")

# ----------------------------------------------------------- openai-responses


def resp_stream(calls, reasoning=True, comments=False, steps=None, cut_after=None):
    rid = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
    model = "gpt-4.1-2025-04-14"
    seq = [0]
    out = []

    def ev(o):
        o = dict(o)
        t = o["type"]
        o = {"type": t, "sequence_number": seq[0], **{k: v for k, v in o.items() if k != "type"}}
        seq[0] += 1
        out.append("event: " + t + "\ndata: " + dumps(o) + "\n\n")

    base = {"id": rid, "object": "response", "created_at": 1741476542, "status": "in_progress",
            "background": False, "error": None, "incomplete_details": None, "instructions": None,
            "max_output_tokens": None, "model": model, "output": [], "parallel_tool_calls": True,
            "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
            "store": True, "temperature": 1.0, "text": {"format": {"type": "text"}},
            "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
            "usage": None, "user": None, "metadata": {}}
    ev({"type": "response.created", "response": base})
    if comments:
        out.append(": ping\n\n")
    ev({"type": "response.in_progress", "response": base})
    items = []
    oi = 0
    if reasoning:
        r = {"id": "rs_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b", "type": "reasoning", "summary": []}
        ev({"type": "response.output_item.added", "output_index": oi, "item": r})
        ev({"type": "response.output_item.done", "output_index": oi, "item": r})
        items.append(r)
        oi += 1
    if steps is None:
        steps = [(k, p) for k, (_, _, _, args) in enumerate(calls)
                 for p in [None] + pieces(dumps(args))]
    last = last_pieces(steps)
    first_oi = oi
    sent = [0] * len(calls)
    for i, (k, p) in enumerate(steps):
        fid, cid, name, args = calls[k]
        item = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": cid, "name": name}
        if p is None:
            ev({"type": "response.output_item.added", "output_index": first_oi + k, "item": item})
            continue
        n = sent[k]
        sent[k] += 1
        ev({"type": "response.function_call_arguments.delta", "item_id": fid,
            "output_index": first_oi + k, "delta": p, "obfuscation": "k2Lq"[: (n % 4) + 1]})
        if comments and n == 3:
            out.append(": keep-alive\n\n")
        if last[k] == i:
            ev({"type": "response.function_call_arguments.done", "item_id": fid,
                "output_index": first_oi + k, "arguments": dumps(args)})
            ev({"type": "response.output_item.done", "output_index": first_oi + k,
                "item": dict(item, status="completed", arguments=dumps(args))})
        if cut_after == i:
            return "".join(out) + 'event: response.function_call_arguments.delta\ndata: {"type":"resp', None
    for fid, cid, name, args in calls:
        items.append({"id": fid, "type": "function_call", "status": "completed",
                      "arguments": dumps(args), "call_id": cid, "name": name})
    final = dict(base, status="completed", output=items,
                 usage={"input_tokens": 291, "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 23, "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 314})
    ev({"type": "response.completed", "response": final})
    return "".join(out), final


def openai_responses():
    f = ["fc_67ccd2bf4bc48190a6f5fb3f1e6c39fb0bb6a6b452d3795b",
         "fc_67ccd2bf6ab08190b8fbd45f6e4bbfd00bb6a6b452d3795b",
         "fc_67ccd2bf8d50819095d1a8c2df1437f10bb6a6b452d3795b"]
    ids = ["call_AAzqFTgf1C2rzMJJsTGdmbqc", "call_mtmzNN2KsXzY8nvuLx4IoI5c",
           "call_h2ECw5Qo4lJmWMPYp1yUxzrP"]
    c = [(f[i], ids[i], CALLS[i][0], CALLS[i][1]) for i in range(3)]

    def ex(x, pre=None, args=True):
        return call(x[1], x[2], x[3] if args else None, pre)
    sse, whole = resp_stream(c[:1])
    write("openai-responses", "normal", sse, [ex(x) for x in c[:1]], whole)
    sse, whole = resp_stream(c)
    write("openai-responses", "parallel", sse, [ex(x) for x in c], whole)
    sse, whole = resp_stream(c, comments=True)
    write("openai-responses", "pings_comments", sse, [ex(x) for x in c], whole)
    sse, whole = resp_stream(c[:2], reasoning=False)
    write("openai-responses", "crlf", sse, [ex(x) for x in c[:2]], whole, eol="\r\n")
    sse, _ = resp_stream(c)
    sse = cut_inside(sse, '"output_index":3,"delta":"', 5, 1)
    write("openai-responses", "truncated_args", sse,
          [ex(c[0]), ex(c[1]), ex(c[2], "MALFORMED_ARGUMENTS", False)])
    sse, _ = resp_stream(c)
    sse = cut_inside(sse, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":4")
    write("openai-responses", "truncated_before_call", sse, [])
    # Three items written at once; their .done events come in the order
    # their arguments end, the calls in output_index order.
    write_interleaved("openai-responses",
                      [(f[i], ids[i], ILV[i][0], ILV[i][1]) for i in range(3)], resp_stream,
                      lambda x, cut=False: expect_call(x[1:], cut))

# ------------------------------------------------------------------ anthropic


def anth_stream(calls, text="I'll look at that.", pings=True, comments=False, steps=None,
                cut_after=None):
    mid = "msg_01XFDUDYJgAACzvnptvVoYEL"
    model = "claude-sonnet-4-5-20250929"
    out = []

    def ev(o):
        out.append("event: " + o["type"] + "\ndata: " + dumps(o) + "\n\n")
    msg = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
           "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": 472, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0, "output_tokens": 2,
                     "service_tier": "standard"}}
    ev({"type": "message_start", "message": msg})
    content = []
    idx = 0
    if text:
        ev({"type": "content_block_start", "index": idx, "content_block": {"type": "text", "text": ""}})
        if pings:
            ev({"type": "ping"})
        for t in pieces(text, (5, 7)):
            ev({"type": "content_block_delta", "index": idx, "delta": {"type": "text_delta", "text": t}})
        ev({"type": "content_block_stop", "index": idx})
        content.append({"type": "text", "text": text})
        idx += 1
    if steps is None:
        steps = [(k, p) for k, (_, _, args) in enumerate(calls)
                 for p in [None] + pieces(dumps(args))]
    last = last_pieces(steps)
    sent = [0] * len(calls)
    for i, (k, p) in enumerate(steps):
        id_, name, args = calls[k]
        if p is None:
            ev({"type": "content_block_start", "index": idx + k,
                "content_block": {"type": "tool_use", "id": id_, "name": name, "input": {}}})
            ev({"type": "content_block_delta", "index": idx + k,
                "delta": {"type": "input_json_delta", "partial_json": ""}})
            continue
        ev({"type": "content_block_delta", "index": idx + k,
            "delta": {"type": "input_json_delta", "partial_json": p}})
        if comments and sent[k] == 1:
            out.append(": comment inside the stream\n\n")
        sent[k] += 1
        if last[k] == i:
            ev({"type": "content_block_stop", "index": idx + k})
        if cut_after == i:
            return "".join(out) + 'event: content_block_delta\ndata: {"type":"content_bl', None
    for id_, name, args in calls:
        content.append({"type": "tool_use", "id": id_, "name": name, "input": args})
    ev({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 89}})
    ev({"type": "message_stop"})
    whole = dict(msg, content=content, stop_reason="tool_use",
                 usage=dict(msg["usage"], output_tokens=89))
    return "".join(out), whole


def anthropic():
    ids = ["toolu_01T1x1fJ34qAmk2tNTrN7Up6", "toolu_01BpLSXLmFQ7KdGGzyuhFAyN",
           "toolu_01K3e5NbzD6gWYEPWuUMBVzR"]
    c = [(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(3)]
    sse, whole = anth_stream(c[:1])
    write("anthropic", "normal", sse, [call(*x) for x in c[:1]], whole)
    sse, whole = anth_stream(c)
    write("anthropic", "parallel", sse, [call(*x) for x in c], whole)
    sse, whole = anth_stream(c, comments=True)
    write("anthropic", "pings_comments", sse, [call(*x) for x in c], whole)
    sse, whole = anth_stream(c[:2], text=None)
    write("anthropic", "crlf", sse, [call(*x) for x in c[:2]], whole, eol="\r\n")
    sse, _ = anth_stream(c)
    sse = cut_inside(sse, '"index":3,"delta":{"type":"input_json_delta","partial_json":"', 5, 1)
    write("anthropic", "truncated_args", sse,
          [call(*c[0]), call(*c[1]), call(ids[2], "list_dir", None, "MALFORMED_ARGUMENTS")])
    sse, _ = anth_stream(c)
    sse = cut_inside(sse, '"text":"I\'ll ')
    write("anthropic", "truncated_before_call", sse, [])
    # Three tool_use blocks written at once; each stops when its input
    # ends, the calls in block order.
    write_interleaved("anthropic", [(ids[i], ILV[i][0], ILV[i][1]) for i in range(3)],
                      anth_stream, expect_call)

# --------------------------------------------------------------------- gemini


def gemini_stream(chunks, comments=False):
    """chunks: a list of (parts, finish) per streamed response."""
    out = []
    rid = "Yw3MaLnKF4Gf1MkPtc7I-Ac"
    merged = []
    for n, (parts, finish) in enumerate(chunks):
        cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            cand["finishReason"] = "STOP"
        o = {"candidates": [cand],
             "usageMetadata": {"promptTokenCount": 118, "candidatesTokenCount": 12 + n,
                               "totalTokenCount": 130 + n,
                               "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 118}],
                               "thoughtsTokenCount": 44},
             "modelVersion": "gemini-2.5-flash", "responseId": rid}
        out.append("data: " + dumps(o) + "\n\n")
        if comments:
            out.append(": keep-alive\n\n")
        merged.extend(parts)
    whole = {"candidates": [{"content": {"parts": merged, "role": "model"},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 118, "candidatesTokenCount": 14,
                               "totalTokenCount": 132},
             "modelVersion": "gemini-2.5-flash", "responseId": rid}
    return "".join(out), whole


def gemini():
    sig = "CiQB0e2Kb7Yt1v8a0cXyHqkN2mVqW9n3nKpJ4L0aPq9x3j8FZV4KbwEB0e2Kb+"

    def fc(i, with_id=None, signature=False):
        name, args = CALLS[i]
        f = {"name": name, "args": args}
        if with_id:
            f["id"] = with_id
        p = {"functionCall": f}
        if signature:
            p["thoughtSignature"] = sig
        return p
    text = [{"text": "I'll check the file first."}]
    # No ids (Gemini 2.x): the ids are made deterministic; .calls holds
    # null for them (the test checks the gemini-<hash>-<index> shape).
    sse, whole = gemini_stream([(text, False), ([fc(0, signature=True)], True)])
    write("gemini", "normal", sse, [call(None, "read_file", CALLS[0][1])], whole)
    ids = ["fc-7f3a1c20", "fc-91bd0e44", "fc-0c55a9e1"]
    sse, whole = gemini_stream([(text, False), ([fc(0, ids[0]), fc(1, ids[1])], False),
                                ([fc(2, ids[2])], True)])
    write("gemini", "parallel", sse, [call(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(3)], whole)
    sse, whole = gemini_stream([(text, False), ([fc(0, ids[0])], False), ([fc(1, ids[1])], True)],
                               comments=True)
    write("gemini", "pings_comments", sse, [call(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(2)], whole)
    sse, whole = gemini_stream([(text, False), ([fc(0, ids[0]), fc(1, ids[1])], True)])
    write("gemini", "crlf", sse, [call(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(2)], whole,
          eol="\r\n")
    # A functionCall is whole in its event: cut inside the event, the call
    # never arrived; the one before it stands.
    sse, _ = gemini_stream([(text, False), ([fc(0, ids[0])], False), ([fc(1, ids[1])], True)])
    sse = cut_inside(sse, '"pattern":"TODO')
    write("gemini", "truncated_args", sse, [call(ids[0], "read_file", CALLS[0][1])])
    sse, _ = gemini_stream([(text, False), ([fc(0, ids[0])], True)])
    sse = cut_inside(sse, '"text":"I\'ll ch')
    write("gemini", "truncated_before_call", sse, [])
    # Gemini sends each call whole; written at once, calls share events
    # with text and thoughts, and come out in the order of their parts.
    thought = {"text": "The tree first, then the file.", "thought": True}
    chunks = [([thought, fc(0, ids[0]), {"text": "Then "}], False),
              ([fc(1, ids[1]), {"text": "and "}, fc(2, ids[2])], True)]
    sse, whole = gemini_stream(chunks)
    write("gemini", "interleaved", sse, [call(ids[i], CALLS[i][0], CALLS[i][1]) for i in range(3)],
          whole)
    # Cut inside the event that holds two calls: neither arrived, the one
    # before them stands.
    sse = cut_inside(sse, '"pattern":"TODO')
    write("gemini", "interleaved_cut", sse, [call(ids[0], CALLS[0][0], CALLS[0][1])])


if __name__ == "__main__":
    openai_chat()
    openai_responses()
    anthropic()
    gemini()
