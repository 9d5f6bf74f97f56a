# SPDX-License-Identifier: MIT
"""Shared fixtures of the binding's tests: the repository's example turns,
a runtime with no journal or a journal in the test's directory, and the
time scale of slow machines (TG_TEST_TIME_SCALE)."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bindings" / "python"))

import toolgate  # noqa: E402

TURNS = ROOT / "examples" / "turns"
SCALE = float(os.environ.get("TG_TEST_TIME_SCALE", "1") or 1)


@pytest.fixture
def turns() -> pathlib.Path:
    return TURNS


@pytest.fixture
def scale() -> float:
    return SCALE


@pytest.fixture
def journal(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "state").mkdir()
    return tmp_path / "state" / "journal.db"


@pytest.fixture
def runtime(tmp_path: pathlib.Path, journal: pathlib.Path):
    (tmp_path / "ws").mkdir()
    cfg = toolgate.Config(settings={"workspace": str(tmp_path / "ws"),
                                    "journal": str(journal),
                                    "limits": {"parallel": 4}})
    with toolgate.Runtime(cfg) as rt:
        yield rt
    cfg.close()
