# SPDX-License-Identifier: MIT
"""termcheck.py - what reaches a terminal, byte for byte.

usage:
  termcheck.py pty SCREEN_FILE STDOUT_FILE CMD...
      runs CMD on a new pseudo-terminal (its controlling terminal, stdin
      and stderr), stdout to STDOUT_FILE ("-": the terminal too), and
      writes every byte the terminal received to SCREEN_FILE, raw. Exits
      with CMD's status; 124 if it hangs.
  termcheck.py inert FILE [--pty] [--lines]
      fails (exit 1, saying where) when FILE holds a byte a terminal acts
      on: a C0 control (newline and, with --lines, tab allowed), DEL, a C1
      control (U+0080-U+009F), a bidirectional control (U+202A-U+202E,
      U+2066-U+2069) or invalid UTF-8. --pty first removes what the
      terminal itself adds and what toolgate's live block is allowed to
      send: CR before LF, ESC[2K, ESC[nA and ESC[J.
"""
import os
import pty
import re
import select
import sys
import time


def run_pty(screen_file, stdout_file, cmd):
    pid, fd = pty.fork()
    if pid == 0:
        if stdout_file != "-":
            o = os.open(stdout_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(o, 1)
        os.execvp(cmd[0], cmd)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
    else:
        os.kill(pid, 9)
        open(screen_file, "wb").write(seen)
        sys.exit(124)
    _, status = os.waitpid(pid, 0)
    open(screen_file, "wb").write(seen)
    sys.exit(os.waitstatus_to_exitcode(status))


def inert(path, from_pty, lines):
    data = open(path, "rb").read()
    if from_pty:
        data = data.replace(b"\r\n", b"\n")
        data = re.sub(rb"\x1b\[(2K|[0-9]+A|J)", b"", data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{path}: invalid UTF-8 at byte {e.start}: {data[max(0, e.start - 40):e.start + 40]!r}")
        sys.exit(1)
    for i, ch in enumerate(text):
        cp = ord(ch)
        bad = (cp < 0x20 and ch != "\n" and not (lines and ch == "\t")) or \
            cp == 0x7F or 0x80 <= cp <= 0x9F or 0x202A <= cp <= 0x202E or \
            0x2066 <= cp <= 0x2069
        if bad:
            print(f"{path}: U+{cp:04X} reaches the terminal raw at character {i}: {text[max(0, i - 40):i + 40]!r}")
            sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "pty":
        run_pty(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "inert":
        inert(sys.argv[2], "--pty" in sys.argv[3:], "--lines" in sys.argv[3:])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
