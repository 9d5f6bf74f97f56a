# SPDX-License-Identifier: MIT
"""The C library, loaded with ctypes, and the prototypes of the functions the
binding calls.

The library is found, in order: the path in $TOOLGATE_LIBRARY; the loader's
search path (``libtoolgate.so.0``); the lib directory the package was
installed under (``make install``); what ``ctypes.util.find_library``
finds. A foreign call through ``ctypes.CDLL`` releases the GIL while it
runs, and a callback from one of toolgate's threads takes it back, so Python
threads go on while tools run and a Python tool may run on any thread.

Strings the library hands over as ``char *`` are the caller's: `take_str`
copies one into Python and frees it with ``tg_free``.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double,
                    c_int, c_int64, c_long, c_size_t, c_uint, c_ulong,
                    c_void_p)
import sys
from typing import Any, Callable, Optional


class TgError(Structure):
    """struct tg_error of toolgate.h."""

    _fields_ = [("code", c_int), ("message", c_char * 512),
                ("pointer", c_char * 256), ("line", c_long),
                ("column", c_long)]


HANDLER_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p)
EV_CALL_FN = CFUNCTYPE(None, c_void_p, c_void_p)
EV_OUTPUT_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_int, c_void_p, c_size_t)
EV_FINISHED_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_void_p)


class TgEvents(Structure):
    """struct tg_events of toolgate.h."""

    _fields_ = [("accepted", EV_CALL_FN), ("started", EV_CALL_FN),
                ("output", EV_OUTPUT_FN), ("finished", EV_FINISHED_FN)]


class TgHistoryQuery(Structure):
    """struct tg_history_query of toolgate.h."""

    _fields_ = [("tool", c_char_p), ("outcome", c_char_p),
                ("caller", c_char_p), ("since", c_char_p), ("limit", c_int)]


_E = POINTER(TgError)
_OUT = POINTER(c_void_p)

# name: (restype, argtypes)
_PROTOTYPES = {
    "tg_version": (c_char_p, []),
    "tg_versions_json": (c_int, [_OUT, _E]),
    "tg_strerror": (c_char_p, [c_int]),
    "tg_err_name": (c_char_p, [c_int]),
    "tg_free": (None, [c_void_p]),
    "tg_outcome_name": (c_char_p, [c_int]),
    "tg_execution_name": (c_char_p, [c_int]),
    "tg_format_renders": (c_int, [c_char_p]),
    # calls
    "tg_call_id": (c_char_p, [c_void_p]),
    "tg_call_tool": (c_char_p, [c_void_p]),
    "tg_call_args_json": (c_char_p, [c_void_p]),
    "tg_call_args_raw": (c_char_p, [c_void_p]),
    "tg_call_checksum": (c_char_p, [c_void_p]),
    "tg_call_caller_id": (c_char_p, [c_void_p]),
    "tg_call_format": (c_char_p, [c_void_p]),
    "tg_call_index": (c_size_t, [c_void_p]),
    "tg_call_to_json": (c_void_p, [c_void_p]),
    # results
    "tg_result_id": (c_char_p, [c_void_p]),
    "tg_result_tool": (c_char_p, [c_void_p]),
    "tg_result_outcome": (c_int, [c_void_p]),
    "tg_result_execution": (c_int, [c_void_p]),
    "tg_result_succeeded": (c_int, [c_void_p]),
    "tg_result_payload_json": (c_char_p, [c_void_p]),
    "tg_result_data_json": (c_char_p, [c_void_p]),
    "tg_result_error_message": (c_char_p, [c_void_p]),
    "tg_result_error_code": (c_char_p, [c_void_p]),
    "tg_result_duration_ms": (c_double, [c_void_p]),
    "tg_result_exit_status": (c_int, [c_void_p]),
    "tg_result_replayed": (c_int, [c_void_p]),
    "tg_result_structured": (c_int, [c_void_p]),
    "tg_result_content_json": (c_char_p, [c_void_p]),
    "tg_result_to_json": (c_void_p, [c_void_p]),
    # turns
    "tg_turn_parse": (c_int, [c_char_p, c_size_t, c_char_p, c_char_p, _OUT,
                              _E]),
    "tg_turn_new_call": (c_int, [c_char_p, c_char_p, c_char_p, c_char_p,
                                 c_size_t, _OUT, _E]),
    "tg_turn_free": (None, [c_void_p]),
    "tg_turn_format": (c_char_p, [c_void_p]),
    "tg_turn_warning_count": (c_size_t, [c_void_p]),
    "tg_turn_warning": (c_char_p, [c_void_p, c_size_t]),
    "tg_turn_call_count": (c_size_t, [c_void_p]),
    "tg_turn_call": (c_void_p, [c_void_p, c_size_t]),
    "tg_turn_result": (c_void_p, [c_void_p, c_size_t]),
    "tg_turn_set_caller": (c_int, [c_void_p, c_char_p, _E]),
    "tg_turn_cancel_all": (c_int, [c_void_p, c_char_p, c_char_p, _E]),
    "tg_turn_render": (c_int, [c_void_p, c_char_p, _OUT, POINTER(c_size_t),
                               _E]),
    # streams
    "tg_stream_new": (c_int, [c_char_p, _OUT, _E]),
    "tg_stream_feed": (c_int, [c_void_p, c_char_p, c_size_t, _E]),
    "tg_stream_ended": (c_int, [c_void_p]),
    "tg_stream_next_call": (c_void_p, [c_void_p]),
    "tg_stream_finish": (c_int, [c_void_p, _OUT, _E]),
    "tg_stream_free": (None, [c_void_p]),
    # configuration
    "tg_config_new": (c_void_p, []),
    "tg_config_free": (None, [c_void_p]),
    "tg_config_load": (c_int, [c_void_p, c_char_p, c_size_t, c_char_p, _E]),
    "tg_config_load_file": (c_int, [c_void_p, c_char_p, _E]),
    "tg_config_journal": (c_char_p, [c_void_p]),
    # schemas
    "tg_schema_compile": (c_int, [c_char_p, c_size_t, c_void_p, _OUT, _E]),
    "tg_schema_validate": (c_int, [c_void_p, c_char_p, c_size_t, _OUT, _E]),
    "tg_schema_free": (None, [c_void_p]),
    # runtime
    "tg_runtime_new": (c_int, [c_void_p, _OUT, _E]),
    "tg_runtime_free": (None, [c_void_p]),
    "tg_runtime_register": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p,
                                    HANDLER_FN, c_void_p, c_uint, _E]),
    "tg_runtime_set_events": (None, [c_void_p, POINTER(TgEvents), c_void_p]),
    "tg_runtime_set_approve": (None, [c_void_p, c_int]),
    "tg_runtime_run_turn": (c_int, [c_void_p, c_void_p, _E]),
    "tg_runtime_cancel": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p,
                                  _E]),
    "tg_runtime_journal": (c_char_p, [c_void_p]),
    "tg_runtime_tools": (c_int, [c_void_p, c_char_p, _OUT, _E]),
    "tg_runtime_warning": (c_char_p, [c_void_p]),
    # handlers (called from inside a Python tool)
    "tg_handler_write": (c_int, [c_void_p, c_char_p, c_size_t, _E]),
    "tg_handler_set_json": (c_int, [c_void_p, c_char_p, c_size_t, _E]),
    "tg_handler_fail": (c_int, [c_void_p, c_char_p, c_char_p, _E]),
    "tg_handler_deny": (c_int, [c_void_p, c_char_p, _E]),
    "tg_handler_canceled": (c_int, [c_void_p]),
    "tg_handler_call": (c_void_p, [c_void_p]),
    "tg_handler_cwd": (c_char_p, [c_void_p]),
    "tg_handler_workspace": (c_char_p, [c_void_p]),
    # journal
    "tg_journal_history": (c_int, [c_char_p, POINTER(TgHistoryQuery), _OUT,
                                   _E]),
    "tg_journal_show": (c_int, [c_char_p, c_char_p, _OUT, _E]),
    "tg_journal_stats": (c_int, [c_char_p, POINTER(TgHistoryQuery), _OUT,
                                 _E]),
    "tg_journal_verify": (c_int, [c_char_p, c_char_p, c_size_t, _OUT, _E]),
}



def _load() -> ctypes.CDLL:
    path = os.environ.get("TOOLGATE_LIBRARY")
    names = [path] if path else ["libtoolgate.so.0"]
    if not path:
        # installed by `make install`: PREFIX/lib/pythonX.Y/dist-packages/
        # toolgate beside PREFIX/lib/libtoolgate.so.0
        beside = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "..", "..", "libtoolgate.so.0")
        if os.path.exists(beside):
            names.append(os.path.normpath(beside))
        found = ctypes.util.find_library("toolgate")
        if found:
            names.append(found)
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
    raise ImportError(
        "toolgate: cannot load the C library libtoolgate.so.0 (install "
        "toolgate, or set TOOLGATE_LIBRARY to the library's path): "
        + "; ".join(errors))


lib = _load()
for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


class Handle:
    """An owned C handle (a `void *` in `_ptr`), freed with the library
    function named by the subclass's `_free_name` on close(), when the
    object is collected, or at the end of a `with` block."""

    _free_name = ""
    _what = "handle"
    _ptr: Optional[int] = None
    _owned = True

    @property
    def _p(self) -> int:
        if not self._ptr:
            raise ValueError(f"toolgate: the {self._what} is closed")
        return self._ptr

    def close(self) -> None:
        """Frees the C object now (views taken from it go with it)."""
        ptr, self._ptr = self._ptr, None
        if ptr and self._owned:
            getattr(lib, self._free_name)(ptr)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: modules gone
            pass

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def guard(callback: Callable[..., None]) -> Callable[..., None]:
    """`callback` made safe to call from C: an exception it raises is
    reported (sys.excepthook) instead of crossing into the library."""

    def guarded(*args: Any) -> None:
        try:
            callback(*args)
        except BaseException as e:  # noqa: BLE001 - cannot cross into C
            sys.excepthook(type(e), e, e.__traceback__)

    return guarded


def take_str(ptr: Optional[int], length: Optional[int] = None) -> str:
    """Copies a `char *` the library handed over into a str and frees it."""
    if not ptr:
        return ""
    try:
        raw = (ctypes.string_at(ptr, length) if length is not None
               else ctypes.string_at(ptr))
    finally:
        lib.tg_free(ptr)
    return raw.decode("utf-8", "surrogateescape")


def text(b: Optional[bytes]) -> Optional[str]:
    """A borrowed `const char *` (bytes from ctypes) as str; None stays."""
    return None if b is None else b.decode("utf-8", "surrogateescape")


def arg(s: Optional[str]) -> Optional[bytes]:
    """A Python str as the C string a function takes; None stays NULL."""
    return None if s is None else s.encode("utf-8", "surrogateescape")


__all__ = ["Handle", "guard", "lib", "TgError", "TgEvents", "TgHistoryQuery", "HANDLER_FN",
           "EV_CALL_FN", "EV_OUTPUT_FN", "EV_FINISHED_FN", "take_str", "text",
           "arg", "c_int64", "c_ulong"]
