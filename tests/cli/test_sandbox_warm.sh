#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sandbox's attack tests (test_sandbox.sh) in the warm sandbox
# (sandbox.mode "warm"): the same attacks must fail the same way.
TG_SANDBOX_TEST_MODE=warm exec bash "$(dirname "$0")/test_sandbox.sh"
