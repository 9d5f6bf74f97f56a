#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Python function served to any MCP client through toolgate's gate: the
tool `stats` (count, sum, smallest and largest of numbers), its arguments
checked against its JSON Schema before it runs.

    python3 examples/python/mcp_server.py            # MCP over stdio
    python3 examples/python/mcp_server.py --http 0   # Streamable HTTP, any free port

Over HTTP it prints "serving MCP on URL" on stderr. SIGTERM or SIGINT stops
it (running calls get their grace period, every request is answered)."""
from __future__ import annotations

import pathlib
import signal
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]
                       / "bindings" / "python"))
import toolgate  # noqa: E402

SCHEMA = {"type": "object", "required": ["numbers"],
          "properties": {"numbers": {"type": "array", "minItems": 1,
                                     "items": {"type": "number"}}},
          "additionalProperties": False}


def stats(args):
    """Count, sum, smallest and largest of numbers"""
    xs = args["numbers"]
    return {"count": len(xs), "sum": sum(xs), "min": min(xs), "max": max(xs)}


def main(argv):
    if argv not in ([], ) and not (len(argv) == 2 and argv[0] == "--http"
                                  and argv[1].isdigit()):
        print("usage: mcp_server.py [--http PORT]", file=sys.stderr)
        return 2
    # only this tool; neither journal nor spool: the example leaves no files
    cfg = toolgate.Config(settings={"builtin_tools": [], "journal": None,
                                    "spool": None})
    with toolgate.Runtime(cfg) as rt:
        rt.register("stats", stats, schema=SCHEMA)
        with toolgate.Server(rt, caller="python-example") as srv:
            srv.stop_on_signal(signal.SIGTERM)
            srv.stop_on_signal(signal.SIGINT)
            if argv:
                url = srv.listen_http("127.0.0.1", int(argv[1]))
                print(f"mcp_server: serving MCP on {url}", file=sys.stderr,
                      flush=True)
                srv.run()
            else:
                srv.run_stdio(0, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
