# SPDX-License-Identifier: MIT
"""toolgate for Python: the whole gate of the C library libtoolgate, through
ctypes, with no build step beyond the installed library.

    import toolgate
    rt = toolgate.Runtime(toolgate.Config(settings={"journal": None}))

    @rt.tool(schema={"type": "object", "properties": {"a": {"type": "number"},
             "b": {"type": "number"}}, "required": ["a", "b"]})
    def add(args):
        return {"sum": args["a"] + args["b"]}

    turn = toolgate.parse(openai_response_dict)     # any wire format
    for r in rt.run(turn):                          # concurrently, GIL released
        print(r.id, r.outcome, r.data or r.error_message, r.duration_ms)
    messages = turn.render_json("openai-chat")      # the tool messages

Exceptions carry tg_error's message and position (toolgate.Error: code,
name, message, pointer, line, column)."""
from __future__ import annotations

import ctypes as _ctypes
import json as _json
from typing import Any, Dict

from ._native import TgError
from ._native import lib as _lib
from ._native import take_str as _take_str
from .agent import PROVIDERS, Agent, show_loop
from .errors import raise_for
from .errors import (AlreadyExists, ConfigError, Denied, Error, FormatError,
                     InvalidArgument, JournalError, LimitExceeded, NotFound,
                     ParseError, SchemaError, ToolError)
from .journal import history, show, stats, verify
from .runtime import Config, Event, Runtime, ToolContext
from .server import Server
from .turn import Call, Result, Stream, Turn, new_call, parse, renders

__version__ = "0.1.0"


def library_version() -> str:
    """The version of the loaded libtoolgate."""
    return _lib.tg_version().decode()


def versions() -> Dict[str, Any]:
    """The versions of libtoolgate and of the libraries it runs with."""
    out = _ctypes.c_void_p()
    err = TgError()
    raise_for(_lib.tg_versions_json(_ctypes.byref(out), _ctypes.byref(err)),
              err)
    return _json.loads(_take_str(out.value))


__all__ = ["Agent", "PROVIDERS", "show_loop", "AlreadyExists", "Call", "Config", "ConfigError", "Denied",
           "Error", "Event", "FormatError", "InvalidArgument", "JournalError",
           "LimitExceeded", "NotFound", "ParseError", "Result", "Runtime",
           "SchemaError", "Server", "Stream", "ToolContext", "ToolError", "Turn",
           "history", "library_version", "new_call", "parse", "renders",
           "show", "stats", "verify", "versions", "__version__"]
