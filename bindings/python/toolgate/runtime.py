# SPDX-License-Identifier: MIT
"""Configurations and runtimes: the gate that runs a turn's calls (command
tools, built-ins, MCP sources and Python functions registered as in-process
tools), each checked against its schema and the policy, under deadlines,
journaled, with exactly one result per call.

Threads: `Runtime.run` releases the GIL while the turn runs; a Python tool
runs on one of toolgate's worker threads (or on the calling thread when
registered ``inline=True``) and takes the GIL for as long as it runs Python.
`Runtime.cancel` may be called from any thread. Event callbacks run on the
thread that called `run`."""
from __future__ import annotations

import ctypes
import inspect
import json
import os
import threading
from typing import (Any, Callable, Dict, List, Mapping, NamedTuple, Optional,
                    Union)

from ._native import (EV_CALL_FN, EV_FINISHED_FN, EV_OUTPUT_FN, HANDLER_FN,
                      Handle, TgError, guard, TgEvents, arg, lib, take_str, text)
from .errors import Denied, ToolError, raise_for
from .turn import Call, Result, Turn

TG_TOOL_INLINE = 1


class Config(Handle):
    """A configuration: the embedded defaults, then a toolgate.json file
    (`path`), then `settings` (a dict with the file's keys, e.g.
    ``{"journal": None, "limits": {"timeout_ms": 5000}}``). Relative paths
    in `settings` are taken from `base_dir` (default: the current
    directory). Raises ConfigError naming the bad key."""

    _free_name = "tg_config_free"
    _what = "configuration"

    def __init__(self, path: Union[str, os.PathLike, None] = None,
                 settings: Optional[Mapping[str, Any]] = None,
                 base_dir: Union[str, os.PathLike, None] = None) -> None:
        self._ptr = lib.tg_config_new()
        if not self._ptr:
            raise MemoryError("toolgate: tg_config_new")
        if path is not None:
            err = TgError()
            raise_for(lib.tg_config_load_file(self._ptr, arg(os.fspath(path)),
                                              ctypes.byref(err)), err)
        if settings is not None:
            self.update(settings, base_dir)

    def update(self, settings: Mapping[str, Any],
               base_dir: Union[str, os.PathLike, None] = None) -> None:
        """Loads `settings` (toolgate.json keys) over the current ones."""
        data = json.dumps(settings).encode()
        err = TgError()
        base = arg(os.fspath(base_dir)) if base_dir is not None else None
        raise_for(lib.tg_config_load(self._p, data, len(data), base,
                                     ctypes.byref(err)), err)

    @property
    def journal(self) -> Optional[str]:
        """The journal path in force, None when the journal is off."""
        return text(lib.tg_config_journal(self._p))



class ToolContext:
    """What a Python tool may use while it runs (valid during the call):
    the call, whether it was canceled, its directory and workspace, and
    streamed output."""

    __slots__ = ("_ctx", "_done")

    def __init__(self, ctx: int) -> None:
        self._ctx = ctx
        self._done = False

    def _c(self) -> int:
        if self._done:
            raise ValueError("toolgate: the tool's call has ended")
        return self._ctx

    @property
    def call(self) -> Call:
        return Call(lib.tg_handler_call(self._c()), self)

    @property
    def canceled(self) -> bool:
        """True once the call was canceled or its deadline passed: a tool
        that loops should check it and return."""
        return bool(lib.tg_handler_canceled(self._c()))

    @property
    def cwd(self) -> str:
        return text(lib.tg_handler_cwd(self._c())) or ""

    @property
    def workspace(self) -> str:
        return text(lib.tg_handler_workspace(self._c())) or ""

    def write(self, data: Union[str, bytes]) -> None:
        """Appends text output (streamed as chunks tagged with the call)."""
        b = data.encode() if isinstance(data, str) else bytes(data)
        err = TgError()
        raise_for(lib.tg_handler_write(self._c(), b, len(b),
                                       ctypes.byref(err)), err)


class Event(NamedTuple):
    """A runtime event: kind "accepted", "started", "output" or
    "finished"; the call's id and tool; for output the stream (1 stdout, 2
    stderr, 3 progress) and the bytes; for finished the result."""
    kind: str
    call_id: str
    tool: str
    stream: int = 0
    data: bytes = b""
    result: Optional[Dict[str, Any]] = None


ToolFn = Callable[..., Any]


def _report_tool_exception(ctx: int, e: BaseException) -> int:
    err = TgError()
    if isinstance(e, Denied):
        lib.tg_handler_deny(ctx, arg(str(e) or "denied by the tool"),
                            ctypes.byref(err))
    elif isinstance(e, ToolError):
        lib.tg_handler_fail(ctx, arg(e.code), arg(str(e)), ctypes.byref(err))
    else:
        lib.tg_handler_fail(ctx, b"TOOL_FAILED",
                            arg(f"{type(e).__name__}: {e}"),
                            ctypes.byref(err))
    return -1


def _trampoline(fn: ToolFn, wants_ctx: bool) -> Any:
    """The C handler that runs `fn`: arguments as a dict; a str return is
    text output, None leaves what ctx.write wrote, anything else is the JSON
    result; ToolError / Denied / any other exception end the call as error
    / denied / error (TOOL_FAILED, the exception's type and message)."""

    def handler(ctx: int, args: int, args_len: int, ud: int) -> int:
        context = ToolContext(ctx)
        try:
            try:
                kwargs = json.loads(ctypes.string_at(args, args_len))
                value = fn(kwargs, context) if wants_ctx else fn(kwargs)
                err = TgError()
                if isinstance(value, str):
                    b = value.encode("utf-8", "surrogateescape")
                    rc = lib.tg_handler_write(ctx, b, len(b),
                                              ctypes.byref(err))
                elif isinstance(value, (bytes, bytearray)):
                    rc = lib.tg_handler_write(ctx, bytes(value), len(value),
                                              ctypes.byref(err))
                elif value is None:
                    rc = 0
                else:
                    b = json.dumps(value).encode()
                    rc = lib.tg_handler_set_json(ctx, b, len(b),
                                                 ctypes.byref(err))
                if rc < 0:
                    raise ToolError(err.message.decode("utf-8", "replace"),
                                    "OUTPUT_REJECTED")
                return 0
            except BaseException as e:  # noqa: BLE001 - every failure is a result
                return _report_tool_exception(ctx, e)
        finally:
            context._done = True

    return HANDLER_FN(handler)


class Runtime(Handle):
    """A runtime built from a Config (None: the embedded defaults, which
    journal to ./.toolgate/journal.db; pass ``Config(settings={"journal":
    None})`` for none). Use as a context manager or close() it: closing
    cancels what still runs and closes the journal."""

    _free_name = "tg_runtime_free"
    _what = "runtime"

    def __init__(self, config: Optional[Config] = None,
                 on_event: Optional[Callable[[Event], None]] = None) -> None:
        own = config is None
        cfg = Config() if config is None else config
        out = ctypes.c_void_p()
        err = TgError()
        try:
            rc = lib.tg_runtime_new(cfg._p, ctypes.byref(out),
                                    ctypes.byref(err))
        finally:
            if own:
                cfg.close()
        raise_for(rc, err)
        self._ptr = out.value
        self._keep: List[Any] = []  # C callbacks must outlive the runtime
        self._lock = threading.Lock()
        if on_event is not None:
            self._set_events(on_event)

    def register(self, name: str, fn: ToolFn,
                 schema: Optional[Mapping[str, Any]] = None,
                 description: Optional[str] = None,
                 inline: bool = False) -> None:
        """Registers `fn` as the in-process tool `name` with its input JSON
        Schema (None: any object): the gate checks a call's arguments against
        it, the policy decides, the journal records, as for any tool. `fn`
        takes the arguments (a dict), or (arguments, ToolContext). `inline`
        runs it on the thread that called run() (for a tool that never
        blocks). Raises AlreadyExists when the name is taken."""
        try:
            params = inspect.signature(fn).parameters
            wants_ctx = len(params) >= 2
        except (TypeError, ValueError):
            wants_ctx = False
        cfn = _trampoline(fn, wants_ctx)
        desc = description if description is not None else \
            (inspect.getdoc(fn) or "")
        err = TgError()
        rc = lib.tg_runtime_register(
            self._p, arg(name), arg(desc),
            arg(json.dumps(schema)) if schema is not None else None, cfn,
            None, TG_TOOL_INLINE if inline else 0, ctypes.byref(err))
        raise_for(rc, err)
        self._keep.append(cfn)

    def tool(self, name: Optional[str] = None,
             schema: Optional[Mapping[str, Any]] = None,
             description: Optional[str] = None,
             inline: bool = False) -> Callable[[ToolFn], ToolFn]:
        """Decorator form of register(): ``@rt.tool(schema={...})``."""

        def deco(fn: ToolFn) -> ToolFn:
            self.register(name or fn.__name__, fn, schema, description,
                          inline)
            return fn

        return deco

    def run(self, turn: Turn, caller: Optional[str] = None) -> List[Result]:
        """Runs every call of `turn` concurrently (up to the parallel limit)
        until each has its result, and returns the results in call order.
        One failing call never stops the others. The GIL is released while
        the turn runs."""
        if caller is not None:
            turn.set_caller(caller)
        err = TgError()
        raise_for(lib.tg_runtime_run_turn(self._p, turn._p,
                                          ctypes.byref(err)), err)
        return [r for r in turn.results if r is not None]

    async def arun(self, turn: Turn,
                   caller: Optional[str] = None) -> List[Result]:
        """run() for asyncio: the turn runs on a worker thread (the GIL
        released) while the event loop goes on."""
        import asyncio
        return await asyncio.to_thread(self.run, turn, caller)

    def cancel(self, call_id: Optional[str] = None, by: str = "user",
               reason: str = "") -> None:
        """Cancels the running or queued call `call_id` (None: every call);
        it ends canceled by `by`. Safe from any thread."""
        err = TgError()
        raise_for(lib.tg_runtime_cancel(self._p, arg(call_id), arg(by),
                                        arg(reason), ctypes.byref(err)), err)

    def set_approve(self, approve: bool) -> None:
        """With approve set, every call the policy answers `ask` runs;
        otherwise such a call ends denied, saying approval was needed."""
        lib.tg_runtime_set_approve(self._p, 1 if approve else 0)

    def tools(self, format: str = "mcp") -> Any:
        """The tool definitions in `format`'s shape ("mcp", "openai-chat",
        "openai-responses", "anthropic", "gemini"), parsed."""
        out = ctypes.c_void_p()
        err = TgError()
        raise_for(lib.tg_runtime_tools(self._p, arg(format),
                                       ctypes.byref(out), ctypes.byref(err)),
                  err)
        return json.loads(take_str(out.value))

    @property
    def journal(self) -> Optional[str]:
        """The journal's path, None when it is off."""
        return text(lib.tg_runtime_journal(self._p))

    def _set_events(self, on_event: Callable[[Event], None]) -> None:
        def call_event(kind: str) -> Any:
            return EV_CALL_FN(guard(lambda ud, call: on_event(
                Event(kind, *_names(call)))))

        ev = TgEvents(
            call_event("accepted"), call_event("started"),
            EV_OUTPUT_FN(guard(lambda ud, call, stream, data, n: on_event(
                Event("output", *_names(call), stream,
                      ctypes.string_at(data, n))))),
            EV_FINISHED_FN(guard(lambda ud, call, result: on_event(
                Event("finished", *_names(call),
                      result=Result(result, None).to_dict())))))
        self._keep.append(ev)
        lib.tg_runtime_set_events(self._p, ctypes.byref(ev), None)


def _names(call: int) -> tuple:
    """The id and tool of a borrowed call."""
    c = Call(call, None)
    return c.id, c.tool


__all__ = ["Config", "Runtime", "ToolContext", "Event"]
