# SPDX-License-Identifier: MIT
"""Exceptions: a failing library function raises one of these, carrying the
tg_error it filled (code, name, message, JSON pointer, line and column)."""
from __future__ import annotations

from typing import Dict, Type

from ._native import TgError, lib


class Error(Exception):
    """A toolgate library failure: `code` (a negative TG_E* value), `name`
    ("TG_EPARSE"), `message` (with context: a file, line and column, a
    configuration key), `pointer` (the JSON pointer of the bad input, "" when
    none), `line` and `column` (1-based; 0 when unknown)."""

    def __init__(self, code: int, message: str, pointer: str = "",
                 line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.name = lib.tg_err_name(code).decode()
        self.message = message
        self.pointer = pointer
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return self.message


class InvalidArgument(Error):
    """TG_EINVAL."""


class ParseError(Error):
    """TG_EPARSE: the input is not readable (line and column say where)."""


class FormatError(Error):
    """TG_EFORMAT: an unsupported or unrecognised wire format."""


class ConfigError(Error):
    """TG_ECONFIG: the configuration is invalid (the message names the key)."""


class JournalError(Error):
    """TG_EJOURNAL: the journal failed."""


class NotFound(Error):
    """TG_ENOTFOUND."""


class AlreadyExists(Error):
    """TG_EEXIST (a tool name already registered)."""


class SchemaError(Error):
    """TG_ESCHEMA: an invalid JSON Schema (pointer names the keyword)."""


class LimitExceeded(Error):
    """TG_ELIMIT."""


_BY_NAME: Dict[str, Type[Error]] = {
    "TG_EINVAL": InvalidArgument, "TG_EPARSE": ParseError,
    "TG_EFORMAT": FormatError, "TG_ECONFIG": ConfigError,
    "TG_EJOURNAL": JournalError, "TG_ENOTFOUND": NotFound,
    "TG_EEXIST": AlreadyExists, "TG_ESCHEMA": SchemaError,
    "TG_ELIMIT": LimitExceeded,
}


def raise_for(rc: int, err: TgError) -> None:
    """Raises the exception of a failed call (rc < 0) from the tg_error it
    filled; returns when rc >= 0."""
    if rc >= 0:
        return
    code = err.code or rc
    cls = _BY_NAME.get(lib.tg_err_name(code).decode(), Error)
    message = err.message.decode("utf-8", "replace") or \
        lib.tg_strerror(code).decode()
    raise cls(code, message, err.pointer.decode("utf-8", "replace"),
              err.line, err.column)


class ToolError(Exception):
    """Raised by a Python tool to end its call with outcome error, `code`
    (UPPER_SNAKE, default TOOL_FAILED) and the message."""

    def __init__(self, message: str, code: str = "TOOL_FAILED") -> None:
        super().__init__(message)
        self.code = code


class Denied(Exception):
    """Raised by a Python tool, before it does anything, to refuse its call:
    the call ends denied (execution not_started) with this reason."""
