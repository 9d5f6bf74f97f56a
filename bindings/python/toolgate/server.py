# SPDX-License-Identifier: MIT
"""The MCP server (toolgate_serve.h) from Python: a Runtime's tools — Python
functions registered on it included — offered to any MCP client over stdio
or Streamable HTTP, every call through the gate.

run() and run_stdio() block with the GIL released; Python tools run on
toolgate's worker threads meanwhile. stop() may be called from any thread;
stop_on_signal() makes SIGTERM / SIGINT stop the server (Python's own
handlers do not run while the server runs)."""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int, c_long, c_size_t, c_void_p
from typing import Optional, Sequence

from ._native import Handle, TgError, arg, lib, text
from .errors import raise_for
from .runtime import Runtime


class _Options(Structure):
    """struct tg_server_options of toolgate_serve.h."""

    _fields_ = [("caller", c_char_p), ("grace_ms", c_long),
                ("trace", c_char_p), ("max_message", c_size_t),
                ("http_endpoint", c_char_p), ("http_token", c_char_p),
                ("http_token_file", c_char_p),
                ("allow_origins", POINTER(c_char_p)),
                ("nallow_origins", c_size_t)]


_E = POINTER(TgError)
for _name, _res, _args in [
    ("tg_server_new", c_int, [c_void_p, POINTER(_Options),
                              POINTER(c_void_p), _E]),
    ("tg_server_listen_http", c_int, [c_void_p, c_char_p, c_int, _E]),
    ("tg_server_port", c_int, [c_void_p]),
    ("tg_server_url", c_char_p, [c_void_p]),
    ("tg_server_run", c_int, [c_void_p, _E]),
    ("tg_server_run_stdio", c_int, [c_void_p, c_int, c_int, _E]),
    ("tg_server_stop", None, [c_void_p]),
    ("tg_server_stop_on_signal", c_int, [c_void_p, c_int, _E]),
    ("tg_server_free", None, [c_void_p]),
]:
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


class Server(Handle):
    """An MCP server over `runtime` (which must outlive it). `caller` is the
    caller id the clients' calls are made under (policy, journal); after a
    stop, running calls get `grace_ms` to end before they are canceled.
    HTTP: `http_token` (or `http_token_file`) requires a bearer token,
    `allow_origins` adds allowed Origin values, `http_endpoint` the path
    (default /mcp). A server runs once."""

    _free_name = "tg_server_free"
    _what = "server"

    def __init__(self, runtime: Runtime, caller: Optional[str] = None,
                 grace_ms: int = 0, trace: Optional[str] = None,
                 max_message: int = 0, http_endpoint: Optional[str] = None,
                 http_token: Optional[str] = None,
                 http_token_file: Optional[str] = None,
                 allow_origins: Sequence[str] = ()) -> None:
        self._runtime = runtime  # borrowed by the server
        o = _Options(arg(caller), grace_ms, arg(trace), max_message,
                     arg(http_endpoint), arg(http_token),
                     arg(http_token_file))
        if allow_origins:
            arr = (c_char_p * len(allow_origins))(
                *[arg(x) for x in allow_origins])
            o.allow_origins = ctypes.cast(arr, POINTER(c_char_p))
            o.nallow_origins = len(allow_origins)
        out = c_void_p()
        err = TgError()
        raise_for(lib.tg_server_new(runtime._p, ctypes.byref(o),
                                    ctypes.byref(out), ctypes.byref(err)),
                  err)
        self._ptr = out.value

    def listen_http(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listens for Streamable HTTP (port 0: any free one); returns the
        URL clients connect to. Serve with run()."""
        err = TgError()
        raise_for(lib.tg_server_listen_http(self._p, arg(host), port,
                                            ctypes.byref(err)), err)
        return self.url or ""

    @property
    def port(self) -> int:
        return int(lib.tg_server_port(self._p))

    @property
    def url(self) -> Optional[str]:
        return text(lib.tg_server_url(self._p))

    def run(self) -> None:
        """Serves the HTTP clients until stop(): blocks."""
        err = TgError()
        raise_for(lib.tg_server_run(self._p, ctypes.byref(err)), err)

    def run_stdio(self, in_fd: int = 0, out_fd: int = 1) -> None:
        """Serves one client over in_fd / out_fd (newline-delimited
        JSON-RPC; nothing else may write out_fd), and the HTTP clients if it
        listens, until EOF on in_fd or stop(): blocks."""
        err = TgError()
        raise_for(lib.tg_server_run_stdio(self._p, in_fd, out_fd,
                                          ctypes.byref(err)), err)

    def stop(self) -> None:
        """Stops the server gracefully (any thread)."""
        lib.tg_server_stop(self._p)

    def stop_on_signal(self, signum: int) -> None:
        """Signal `signum` stops the server while it runs."""
        err = TgError()
        raise_for(lib.tg_server_stop_on_signal(self._p, signum,
                                               ctypes.byref(err)), err)


__all__ = ["Server"]
