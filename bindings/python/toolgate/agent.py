# SPDX-License-Identifier: MIT
"""The agent loop (toolgate_loop.h) from Python: a model API (OpenAI Chat
Completions and every server that speaks it, OpenAI Responses, Anthropic,
Gemini) and a Runtime turned into a loop. Each iteration sends the
conversation and the runtime's tools to the model, runs the calls of its
answer through the gate (every call answered), and adds the results, until
the model answers without calling a tool or a budget stops it. With the
runtime's journal on, the loop is durable: `Agent.resume(rt, loop_id)`
continues a loop whose process died, without running a tool twice.

The loop runs on the thread that calls run() / step(), with the GIL
released; its callbacks (on_text, on_call_started, on_call_finished,
on_iteration, on_retry, prompt_factory) run on that thread. cancel() may be
called from any thread (or a signal handler)."""
from __future__ import annotations

import ctypes
import json
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_long,
                    c_size_t, c_void_p)
from typing import Any, Callable, Dict, List, Optional, Sequence

from ._native import Handle, TgError, arg, guard, lib, take_str, text
from .errors import Error, raise_for
from .runtime import Runtime
from .turn import Call, Result, Turn


class _Skill(Structure):
    _fields_ = [("name", c_char_p), ("text", c_char_p)]


class _Options(Structure):
    """struct tg_loop_options of toolgate_loop.h."""

    _fields_ = [("provider", c_char_p), ("base_url", c_char_p),
                ("model", c_char_p), ("api_key", c_char_p),
                ("system", c_char_p), ("max_iterations", c_int),
                ("max_tool_calls", c_long),
                ("stop_tools", POINTER(c_char_p)), ("nstop_tools", c_size_t),
                ("max_tokens", c_int), ("request_timeout_ms", c_long),
                ("max_attempts", c_int), ("retry_budget_ms", c_long),
                ("retry_base_ms", c_long), ("stream", c_int),
                ("max_time_ms", c_long), ("max_total_tokens", c_long),
                ("skills", POINTER(_Skill)), ("nskills", c_size_t),
                # an in-process model (tg_loop_model_fn): not offered from
                # Python, kept NULL
                ("model_fn", c_void_p), ("model_ud", c_void_p)]


_TEXT = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_size_t)
_CALL = CFUNCTYPE(None, c_void_p, c_int, c_void_p)
_FINISHED = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_void_p)
_ITERATION = CFUNCTYPE(None, c_void_p, c_int, c_size_t)
_RETRY = CFUNCTYPE(None, c_void_p, c_int, c_long, c_char_p)
_RESULTS = CFUNCTYPE(c_int, c_void_p, c_void_p, c_char_p, POINTER(c_void_p),
                     POINTER(TgError))


class _Events(Structure):
    _fields_ = [("text", _TEXT), ("call_started", _CALL),
                ("call_finished", _FINISHED), ("iteration_done", _ITERATION),
                ("retry", _RETRY), ("results", _RESULTS)]


_OUT = POINTER(c_void_p)
for _name, _res, _args in [
    ("tg_loop_stop_name", c_char_p, [c_int]),
    ("tg_loop_new", c_int, [c_void_p, POINTER(_Options), POINTER(_Events),
                            c_void_p, _OUT, POINTER(TgError)]),
    ("tg_loop_resume", c_int, [c_void_p, c_char_p, POINTER(_Options),
                               POINTER(_Events), c_void_p, _OUT,
                               POINTER(TgError)]),
    ("tg_loop_show", c_int, [c_char_p, c_char_p, _OUT, POINTER(TgError)]),
    ("tg_loop_free", None, [c_void_p]),
    ("tg_loop_start", c_int, [c_void_p, c_char_p, POINTER(TgError)]),
    ("tg_loop_step", c_int, [c_void_p, POINTER(TgError)]),
    ("tg_loop_run", c_int, [c_void_p, c_char_p, POINTER(TgError)]),
    ("tg_loop_cancel", None, [c_void_p]),
    ("tg_loop_stop_reason", c_int, [c_void_p]),
    ("tg_loop_answer", c_char_p, [c_void_p]),
    ("tg_loop_id", c_char_p, [c_void_p]),
    ("tg_loop_iteration", c_int, [c_void_p]),
    ("tg_loop_tool_calls", c_long, [c_void_p]),
    ("tg_loop_tokens", c_long, [c_void_p]),
    ("tg_loop_transcript", c_void_p, [c_void_p]),
]:
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args

_libc = ctypes.CDLL(None)
_libc.malloc.restype = c_void_p
_libc.malloc.argtypes = [c_size_t]

PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini")



class Agent(Handle):
    """An agent loop over `runtime` (which must outlive it, and runs no
    other turn while the loop runs) against `provider` at `base_url` with
    `model`. The API key: `api_key`, else the environment variable
    `api_key_env`; never logged, journaled or put in the transcript.
    Budgets: max_iterations (default 20), max_tool_calls, max_time_ms,
    max_total_tokens; stop_tools (a success of one stops the loop).
    `skills` ({name: text}) are prompt modules added to the system prompt,
    their names carried by every call. `stream=True` asks for streamed
    answers: each tool starts the moment its call is complete.

    Callbacks: on_text(iteration, text), on_call_started(iteration, Call),
    on_call_finished(iteration, Call, Result), on_iteration(iteration,
    ncalls), on_retry(attempt, delay_ms, why); prompt_factory(turn, format)
    decides how a turn's results enter the next request (return a list of
    messages / items or one message, in the provider's format; None: the
    runtime's rendering). The Call, Result and Turn given to a callback are
    valid during it only."""

    _free_name = "tg_loop_free"
    _what = "agent loop"

    def __init__(self, runtime: Runtime, provider: str, base_url: str,
                 model: str, *, api_key: Optional[str] = None,
                 api_key_env: Optional[str] = None,
                 system: Optional[str] = None, max_iterations: int = 0,
                 max_tool_calls: int = 0, stop_tools: Sequence[str] = (),
                 max_tokens: int = 0, request_timeout_ms: int = 0,
                 max_attempts: int = 0, retry_budget_ms: int = 0,
                 retry_base_ms: int = 0, stream: bool = False,
                 max_time_ms: int = 0, max_total_tokens: int = 0,
                 skills: Optional[Dict[str, str]] = None,
                 on_text: Optional[Callable[[int, str], None]] = None,
                 on_call_started: Optional[Callable[[int, Call], None]] = None,
                 on_call_finished: Optional[
                     Callable[[int, Call, Result], None]] = None,
                 on_iteration: Optional[Callable[[int, int], None]] = None,
                 on_retry: Optional[Callable[[int, int, str], None]] = None,
                 prompt_factory: Optional[Callable[[Turn, str], Any]] = None,
                 _resume: Optional[str] = None) -> None:
        self._runtime = runtime  # the loop borrows it
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env)
            if api_key is None:
                raise Error(-1, f"toolgate: the environment variable "
                                f"{api_key_env} holding the API key is not set")
        self._keep: List[Any] = []
        opts = _Options()
        opts.provider = arg(provider)
        opts.base_url = arg(base_url)
        opts.model = arg(model)
        opts.api_key = arg(api_key)
        opts.system = arg(system)
        opts.max_iterations = max_iterations
        opts.max_tool_calls = max_tool_calls
        if stop_tools:
            arr = (c_char_p * len(stop_tools))(*[arg(t) for t in stop_tools])
            self._keep.append(arr)
            opts.stop_tools = ctypes.cast(arr, POINTER(c_char_p))
            opts.nstop_tools = len(stop_tools)
        opts.max_tokens = max_tokens
        opts.request_timeout_ms = request_timeout_ms
        opts.max_attempts = max_attempts
        opts.retry_budget_ms = retry_budget_ms
        opts.retry_base_ms = retry_base_ms
        opts.stream = 1 if stream else 0
        opts.max_time_ms = max_time_ms
        opts.max_total_tokens = max_total_tokens
        if skills:
            sk = (_Skill * len(skills))(*[_Skill(arg(n), arg(t))
                                          for n, t in skills.items()])
            self._keep.append(sk)
            opts.skills = ctypes.cast(sk, POINTER(_Skill))
            opts.nskills = len(skills)
        events = self._events(on_text, on_call_started, on_call_finished,
                              on_iteration, on_retry, prompt_factory)
        out = c_void_p()
        err = TgError()
        if _resume is None:
            rc = lib.tg_loop_new(runtime._p, ctypes.byref(opts),
                                 ctypes.byref(events), None,
                                 ctypes.byref(out), ctypes.byref(err))
        else:
            rc = lib.tg_loop_resume(runtime._p, arg(_resume),
                                    ctypes.byref(opts), ctypes.byref(events),
                                    None, ctypes.byref(out),
                                    ctypes.byref(err))
        opts.api_key = None
        raise_for(rc, err)
        self._ptr = out.value

    @classmethod
    def resume(cls, runtime: Runtime, loop_id: str,
               **options: Any) -> "Agent":
        """The loop `loop_id` of the runtime's journal, made again where it
        stopped (cut short, failed or canceled): options not given are the
        journaled ones (the API key is never journaled: give it again).
        Then run() with no prompt, or step()."""
        defaults = {"provider": None, "base_url": None, "model": None}
        for k, v in defaults.items():
            options.setdefault(k, v)
        return cls(runtime, _resume=loop_id, **options)

    def _events(self, on_text: Any, on_call_started: Any,
                on_call_finished: Any, on_iteration: Any, on_retry: Any,
                prompt_factory: Any) -> _Events:
        ev = _Events()
        if on_text:
            ev.text = _TEXT(guard(lambda ud, it, s, n: on_text(
                it, ctypes.string_at(s, n).decode("utf-8", "replace"))))
        if on_call_started:
            ev.call_started = _CALL(guard(lambda ud, it, call: on_call_started(
                it, Call(call, None))))
        if on_call_finished:
            ev.call_finished = _FINISHED(guard(
                lambda ud, it, call, result: on_call_finished(
                    it, Call(call, None), Result(result, None))))
        if on_iteration:
            ev.iteration_done = _ITERATION(guard(
                lambda ud, it, n: on_iteration(it, n)))
        if on_retry:
            ev.retry = _RETRY(guard(lambda ud, attempt, delay, why: on_retry(
                attempt, delay, text(why) or "")))
        if prompt_factory:
            def res(ud: int, turn: int, fmt: bytes, out: Any,
                    err: Any) -> int:
                t = Turn(turn, owned=False)
                try:
                    value = prompt_factory(t, fmt.decode())
                    if value is None:
                        value = t.render_json(fmt.decode())
                    data = (value if isinstance(value, str)
                            else json.dumps(value)).encode()
                    buf = _libc.malloc(len(data) + 1)
                    if not buf:
                        raise MemoryError("malloc")
                    ctypes.memmove(buf, data, len(data))
                    ctypes.memset(buf + len(data), 0, 1)
                    out[0] = buf
                    return 0
                except BaseException as e:  # noqa: BLE001
                    msg = f"prompt factory: {type(e).__name__}: {e}"
                    err[0].code = -1
                    err[0].message = msg.encode()[:511]
                    return -1
                finally:
                    t.close()
            ev.results = _RESULTS(res)
        self._keep.append(ev)
        return ev

    def run(self, prompt: Optional[str]) -> str:
        """Starts the loop with `prompt` (None for a resumed loop) and runs
        it until it stops; returns the model's last text. A failed request
        raises Error; any other stop returns (see `stop`)."""
        err = TgError()
        raise_for(lib.tg_loop_run(self._p, arg(prompt), ctypes.byref(err)),
                  err)
        return self.answer

    async def arun(self, prompt: Optional[str]) -> str:
        """run() for asyncio: the loop runs on a worker thread while the
        event loop goes on (its callbacks run on that thread)."""
        import asyncio
        return await asyncio.to_thread(self.run, prompt)

    def start(self, prompt: str) -> None:
        """Sets the user prompt; once, before the first step()."""
        err = TgError()
        raise_for(lib.tg_loop_start(self._p, arg(prompt), ctypes.byref(err)),
                  err)

    def step(self) -> bool:
        """One iteration: a model request, then its calls through the gate.
        True while the loop goes on."""
        err = TgError()
        rc = lib.tg_loop_step(self._p, ctypes.byref(err))
        raise_for(rc, err)
        if rc == 0 and self.stop == "failed":
            raise_for(-1, err)
        return rc == 1

    def cancel(self) -> None:
        """Stops the loop as soon as it can (any thread)."""
        lib.tg_loop_cancel(self._p)

    @property
    def stop(self) -> str:
        """Why the loop stopped: "answered", "max_iterations",
        "tool_budget", "stop_tool", "canceled", "failed", "time_budget",
        "token_budget"; "running" before."""
        return lib.tg_loop_stop_name(lib.tg_loop_stop_reason(self._p)).decode()

    @property
    def answer(self) -> str:
        return text(lib.tg_loop_answer(self._p)) or ""

    @property
    def id(self) -> str:
        return text(lib.tg_loop_id(self._p)) or ""

    @property
    def iterations(self) -> int:
        return int(lib.tg_loop_iteration(self._p))

    @property
    def tool_calls(self) -> int:
        return int(lib.tg_loop_tool_calls(self._p))

    @property
    def tokens(self) -> int:
        return int(lib.tg_loop_tokens(self._p))

    def transcript(self) -> Dict[str, Any]:
        """The conversation in the provider's format (no key in it)."""
        return json.loads(take_str(lib.tg_loop_transcript(self._p)))


def show_loop(journal: str, loop_id: str) -> Dict[str, Any]:
    """Loop `loop_id` of a journal as its transcript, with "stop",
    "answer" and "steps". Raises NotFound."""
    out = c_void_p()
    err = TgError()
    raise_for(lib.tg_loop_show(arg(os.fspath(journal)), arg(loop_id),
                               ctypes.byref(out), ctypes.byref(err)), err)
    return json.loads(take_str(out.value))


__all__ = ["Agent", "PROVIDERS", "show_loop"]
