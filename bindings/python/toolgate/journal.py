# SPDX-License-Identifier: MIT
"""The journal, read back: history, one call with its result, per-tool
statistics and the hash chain's verification — the same queries as
``toolgate history / show / stats / journal verify``."""
from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, List, Optional, Union

from ._native import TgError, TgHistoryQuery, arg, lib, take_str
from .errors import raise_for

PathLike = Union[str, os.PathLike]


def _query(tool: Optional[str], outcome: Optional[str], caller: Optional[str],
           since: Optional[str], limit: int) -> TgHistoryQuery:
    return TgHistoryQuery(arg(tool), arg(outcome), arg(caller), arg(since),
                          limit)


def history(journal: PathLike, tool: Optional[str] = None,
            outcome: Optional[str] = None, caller: Optional[str] = None,
            since: Optional[str] = None, limit: int = 20) -> List[Dict[str, Any]]:
    """The journal's results matching the filters, newest first, each a
    result record with its call under "call". `since`: RFC 3339 or Unix
    seconds / milliseconds."""
    q = _query(tool, outcome, caller, since, limit)
    out = ctypes.c_void_p()
    err = TgError()
    raise_for(lib.tg_journal_history(arg(os.fspath(journal)), ctypes.byref(q),
                                     ctypes.byref(out), ctypes.byref(err)),
              err)
    return json.loads(take_str(out.value))


def show(journal: PathLike, call_id: str) -> Dict[str, Any]:
    """One call and its result: {"call": ..., "result": ... or None}.
    Raises NotFound when the journal has no such call."""
    out = ctypes.c_void_p()
    err = TgError()
    raise_for(lib.tg_journal_show(arg(os.fspath(journal)), arg(call_id),
                                  ctypes.byref(out), ctypes.byref(err)), err)
    return json.loads(take_str(out.value))


def stats(journal: PathLike, tool: Optional[str] = None,
          outcome: Optional[str] = None, caller: Optional[str] = None,
          since: Optional[str] = None) -> List[Dict[str, Any]]:
    """Per-tool statistics: calls, outcomes, replayed, duration p50/p95/max."""
    q = _query(tool, outcome, caller, since, 0)
    out = ctypes.c_void_p()
    err = TgError()
    raise_for(lib.tg_journal_stats(arg(os.fspath(journal)), ctypes.byref(q),
                                   ctypes.byref(out), ctypes.byref(err)), err)
    return json.loads(take_str(out.value))


def verify(journal: PathLike, hmac_key: Optional[bytes] = None) -> Dict[str, Any]:
    """Checks the journal's hash chain: {"ok": True, ...} or the first bad
    row ({"ok": False, "problem", "seq", "id", ...})."""
    out = ctypes.c_void_p()
    err = TgError()
    raise_for(lib.tg_journal_verify(arg(os.fspath(journal)), hmac_key,
                                    len(hmac_key) if hmac_key else 0,
                                    ctypes.byref(out), ctypes.byref(err)), err)
    return json.loads(take_str(out.value))


__all__ = ["history", "show", "stats", "verify"]
