# SPDX-License-Identifier: MIT
"""pty_answer.py - runs a command on a new pseudo-terminal (its controlling
terminal and its stderr) with stdin and stdout from files, answers each
prompt that contains PROMPT with the next of ANSWERS, and prints what the
terminal showed. Exits with the command's status; 124 if it hangs (30 s
times TG_TEST_TIME_SCALE; a run takes well under a second).

usage: pty_answer.py STDIN_FILE STDOUT_FILE PROMPT ANSWERS(comma list) CMD...
"""
import os
import pty
import select
import sys
import time

stdin_file, stdout_file, prompt, answers = sys.argv[1:5]
cmd = sys.argv[5:]
answers = [a for a in answers.split(",") if a] if answers != "-" else []
pid, fd = pty.fork()
if pid == 0:
    i = os.open(stdin_file, os.O_RDONLY)
    o = os.open(stdout_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(i, 0)
    os.dup2(o, 1)
    os.execvp(cmd[0], cmd)
seen = b""
asked = 0
deadline = time.monotonic() + 30 * int(os.environ.get("TG_TEST_TIME_SCALE", "1"))
while time.monotonic() < deadline:
    r, _, _ = select.select([fd], [], [], 0.5)
    if not r:
        continue
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    seen += data
    while seen.count(prompt.encode()) > asked:
        answer = answers[asked] if asked < len(answers) else ""
        asked += 1
        os.write(fd, answer.encode() + b"\n" if answer else b"\x04")
else:
    os.kill(pid, 9)
    sys.stdout.write(seen.decode(errors="replace"))
    sys.exit(124)
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
