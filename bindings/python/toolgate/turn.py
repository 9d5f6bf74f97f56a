# SPDX-License-Identifier: MIT
"""Turns, calls and results: a model's turn parsed from any wire format, the
normalized call records in it, one result per call once run, rendered back
into a wire format. Also the incremental reader of a streamed turn.

A Call or Result is a view into its Turn (it keeps the turn alive); its
properties copy out of the C record on each access."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._native import Handle, TgError, arg, lib, take_str, text
from .errors import raise_for

JsonText = Union[str, bytes, bytearray, Dict[str, Any], List[Any]]


def _as_bytes(doc: JsonText) -> bytes:
    if isinstance(doc, (bytes, bytearray)):
        return bytes(doc)
    if isinstance(doc, str):
        return doc.encode("utf-8", "surrogateescape")
    return json.dumps(doc).encode()


def _json(s: Optional[bytes]) -> Any:
    return None if s is None else json.loads(s)


def _text(fn: Any, doc: str = "") -> Any:
    return property(lambda self: text(fn(self._ptr)), doc=doc)


def _decoded(fn: Any, doc: str = "") -> Any:
    return property(lambda self: _json(fn(self._ptr)), doc=doc)


def _flag(fn: Any, doc: str = "") -> Any:
    return property(lambda self: bool(fn(self._ptr)), doc=doc)


class Call:
    """A normalized tool call: id, tool, arguments (a dict, even when the
    wire carried a JSON string), checksum, caller, format, index."""

    __slots__ = ("_ptr", "_owner")

    def __init__(self, ptr: int, owner: object) -> None:
        self._ptr = ptr
        self._owner = owner  # keeps the turn (or handler scope) alive

    id = _text(lib.tg_call_id)
    tool = _text(lib.tg_call_tool)
    arguments = _decoded(lib.tg_call_args_json, """The arguments as a dict;
        None when they did not decode to an object (the call then ends with
        an error result).""")
    arguments_json = _text(lib.tg_call_args_json)
    arguments_raw = _text(lib.tg_call_args_raw, """The arguments as the
        wire carried them when that was a string.""")
    checksum = _text(lib.tg_call_checksum)
    caller_id = _text(lib.tg_call_caller_id)
    format = _text(lib.tg_call_format)
    index = property(lambda self: int(lib.tg_call_index(self._ptr)))

    def to_dict(self) -> Dict[str, Any]:
        """The whole call record (docs/records.md)."""
        return json.loads(take_str(lib.tg_call_to_json(self._ptr)))

    def __repr__(self) -> str:
        return f"<toolgate.Call {self.id!r} {self.tool!r}>"


class Result:
    """The result of one call: exactly one outcome of success, error,
    canceled, timeout, denied, with its payload and how far the call got."""

    __slots__ = ("_ptr", "_owner")

    def __init__(self, ptr: int, owner: object) -> None:
        self._ptr = ptr
        self._owner = owner

    id = _text(lib.tg_result_id)
    tool = _text(lib.tg_result_tool)
    outcome = property(
        lambda self: lib.tg_outcome_name(
            lib.tg_result_outcome(self._ptr)).decode(),
        doc='"success", "error", "canceled", "timeout" or "denied".')
    execution = property(
        lambda self: lib.tg_execution_name(
            lib.tg_result_execution(self._ptr)).decode(),
        doc='"not_started", "started" or "finished".')
    succeeded = _flag(lib.tg_result_succeeded)
    is_error = property(lambda self: not self.succeeded)
    payload = _decoded(lib.tg_result_payload_json,
                       "The result's JSON payload (docs/records.md).")
    data = _decoded(lib.tg_result_data_json,
                    "The payload of a success, else None.")
    error_message = _text(lib.tg_result_error_message, """The error message
        (or the reason of denied / canceled, the budget of a timeout); None
        on success.""")
    error_code = _text(lib.tg_result_error_code)
    duration_ms = property(
        lambda self: float(lib.tg_result_duration_ms(self._ptr)))
    exit_status = property(
        lambda self: (lambda s: None if s < 0 else s)(
            int(lib.tg_result_exit_status(self._ptr))),
        doc="A command tool's exit status, None when there is none.")
    replayed = _flag(lib.tg_result_replayed,
                     "Whether the result came from the journal.")
    structured = _flag(lib.tg_result_structured)
    content = _decoded(lib.tg_result_content_json,
                       "The result's MCP content blocks, None when none.")

    def to_dict(self) -> Dict[str, Any]:
        """The whole result record (its decisions included)."""
        return json.loads(take_str(lib.tg_result_to_json(self._ptr)))

    def __repr__(self) -> str:
        return f"<toolgate.Result {self.id!r} {self.outcome}>"


class Turn(Handle):
    """A model turn: its calls and, once run, one result per call. Frees the
    C turn when closed or collected."""

    _free_name = "tg_turn_free"
    _what = "turn"

    def __init__(self, ptr: int, owned: bool = True) -> None:
        self._ptr = ptr
        self._owned = owned  # False: a turn lent to a callback

    @property
    def format(self) -> str:
        return text(lib.tg_turn_format(self._p)) or ""

    @property
    def warnings(self) -> List[str]:
        """What reading the turn ignored (events after the end of a stream,
        pieces for a complete call)."""
        n = lib.tg_turn_warning_count(self._p)
        return [text(lib.tg_turn_warning(self._p, i)) or "" for i in range(n)]

    @property
    def calls(self) -> List[Call]:
        n = lib.tg_turn_call_count(self._p)
        return [Call(lib.tg_turn_call(self._p, i), self) for i in range(n)]

    @property
    def results(self) -> List[Optional[Result]]:
        """One entry per call, in call order: its Result, or None while the
        call has none."""
        out: List[Optional[Result]] = []
        for i in range(lib.tg_turn_call_count(self._p)):
            r = lib.tg_turn_result(self._p, i)
            out.append(Result(r, self) if r else None)
        return out

    def __len__(self) -> int:
        return int(lib.tg_turn_call_count(self._p))

    def __iter__(self) -> Iterator[Call]:
        return iter(self.calls)

    def set_caller(self, caller_id: str) -> None:
        """Sets the caller id of every call that has none."""
        err = TgError()
        raise_for(lib.tg_turn_set_caller(self._p, arg(caller_id),
                                         ctypes.byref(err)), err)

    def cancel_all(self, by: str = "user", reason: str = "") -> None:
        """Makes every call without a result end canceled (by "user",
        "policy" or "system") without running when the turn is run."""
        err = TgError()
        raise_for(lib.tg_turn_cancel_all(self._p, arg(by), arg(reason),
                                         ctypes.byref(err)), err)

    def render(self, format: Optional[str] = None) -> str:
        """The results as text in `format` (None: the turn's own)."""
        out = ctypes.c_void_p()
        n = ctypes.c_size_t()
        err = TgError()
        rc = lib.tg_turn_render(self._p, arg(format), ctypes.byref(out),
                                ctypes.byref(n), ctypes.byref(err))
        raise_for(rc, err)
        return take_str(out.value, n.value)

    def render_json(self, format: Optional[str] = None) -> Any:
        """The rendered results parsed (a list of tool messages for
        openai-chat, a message for anthropic, ...); JSON Lines (the toolgate
        format) gives a list of records."""
        s = self.render(format)
        try:
            return json.loads(s)
        except ValueError:
            return [json.loads(line) for line in s.splitlines() if line]


def parse(doc: JsonText, format: Optional[str] = "auto",
          source: str = "python") -> Turn:
    """Parses a model turn (text, bytes, or an already decoded dict / list,
    such as an SDK response's ``model_dump()``) in `format` ("auto" detects:
    openai-chat, openai-responses, anthropic, gemini, mcp, toolgate, fenced;
    streamed SSE transcripts too). Raises ParseError (line, column) or
    FormatError. `source` names the input in error messages."""
    data = _as_bytes(doc)
    out = ctypes.c_void_p()
    err = TgError()
    rc = lib.tg_turn_parse(data, len(data), arg(format), arg(source),
                           ctypes.byref(out), ctypes.byref(err))
    raise_for(rc, err)
    return Turn(out.value)  # type: ignore[arg-type]


def new_call(tool: str, arguments: Union[Dict[str, Any], str, None] = None,
             id: str = "call_1", format: str = "toolgate") -> Turn:
    """A turn of one call made from its parts."""
    args = arguments if isinstance(arguments, (str, type(None))) \
        else json.dumps(arguments)
    data = arg(args) if args is not None else None
    out = ctypes.c_void_p()
    err = TgError()
    rc = lib.tg_turn_new_call(arg(format), arg(id), arg(tool), data,
                              len(data) if data else 0, ctypes.byref(out),
                              ctypes.byref(err))
    raise_for(rc, err)
    return Turn(out.value)  # type: ignore[arg-type]


class Stream(Handle):
    """The incremental reader of a streamed model turn (SSE of OpenAI Chat
    Completions or Responses, Anthropic, Gemini): feed bytes as they arrive;
    each call is handed out the moment its arguments are complete."""

    _free_name = "tg_stream_free"
    _what = "stream"

    def __init__(self, format: str = "auto") -> None:
        out = ctypes.c_void_p()
        err = TgError()
        raise_for(lib.tg_stream_new(arg(format), ctypes.byref(out),
                                    ctypes.byref(err)), err)
        self._ptr = out.value

    def feed(self, data: Union[bytes, str]) -> List[Call]:
        """Reads more of the stream; returns the calls completed by it
        (views valid until finish() or close())."""
        b = data.encode() if isinstance(data, str) else bytes(data)
        err = TgError()
        raise_for(lib.tg_stream_feed(self._p, b, len(b),
                                     ctypes.byref(err)), err)
        calls = []
        while True:
            c = lib.tg_stream_next_call(self._ptr)
            if not c:
                return calls
            calls.append(Call(c, self))

    @property
    def ended(self) -> bool:
        return bool(self._ptr) and bool(lib.tg_stream_ended(self._ptr))

    def finish(self) -> Turn:
        """Ends the stream: the turn of every call it carried."""
        out = ctypes.c_void_p()
        err = TgError()
        rc = lib.tg_stream_finish(self._p, ctypes.byref(out),
                                  ctypes.byref(err))
        self.close()
        raise_for(rc, err)
        return Turn(out.value)  # type: ignore[arg-type]



def renders(format: str) -> bool:
    """Whether results can be rendered in `format`."""
    return bool(lib.tg_format_renders(arg(format)))


__all__: Sequence[str] = ["Call", "Result", "Turn", "Stream", "parse",
                          "new_call", "renders"]
