#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_docs_citations.sh - every document a comment of the code cites is in
# the repository: a markdown file named in a comment of src/, include/, tests/,
# bench/, scripts/ or a CMakeLists.txt must exist under docs/, at the root,
# or at the path the comment gives (bench/RESULTS.md). Only comments are
# read (C /* */ and //, # in shell, CMake and Python), not strings: test
# data names markdown files that are no citations.
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
. "$(dirname "$0")/lib.sh"

python3 - "$TG_SOURCE_DIR" > report.txt <<'PY'
import os, re, sys

root = sys.argv[1]
cite = re.compile(r'(?<![\w./-])((?:[\w.-]+/)*[A-Za-z0-9_-]+\.md)\b')

def c_comments(text):
    """(line, comment text) of every C comment, skipping literals."""
    i, n, line, out = 0, len(text), 1, []
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append((line, text[i:j]))
            line += text.count('\n', i, j)
            i = j
            continue
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
            continue
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            line += text.count('\n', i, j)
            i = j + 1
            continue
        i += 1
    return out

def hash_comments(text):
    """(line, comment text) of # comments outside quotes and heredocs."""
    out, heredoc = [], None
    for no, l in enumerate(text.split('\n'), 1):
        if heredoc is not None:
            if l.strip() == heredoc:
                heredoc = None
            continue
        q, prev = None, ' '
        for k, ch in enumerate(l):
            if q:
                if ch == q and prev != '\\':
                    q = None
            elif ch in '"\'':
                q = ch
            elif ch == '#' and (prev.isspace() or k == 0):
                out.append((no, l[k:]))
                break
            prev = ch
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", l.split('#')[0])
        if m:
            heredoc = m.group(1)
    return out

bad = 0
count = 0
for top in ('src', 'include', 'tests', 'bench', 'scripts', '.'):
    base = os.path.join(root, top)
    for d, dirs, files in os.walk(base):
        rel = os.path.relpath(d, root)
        if top == '.':
            dirs[:] = []  # the root's own files only
        dirs[:] = [x for x in dirs if not (rel == 'tests' and x in ('data', 'fuzz'))
                   and x not in ('node_modules', 'build') and not x.startswith('.')]
        for f in files:
            p = os.path.join(d, f)
            if f.endswith(('.c', '.h', '.mjs', '.js', '.cc')):
                kind = c_comments
            elif f.endswith(('.sh', '.py', '.cmake')) or f == 'CMakeLists.txt' \
                    or (top == 'scripts' and '.' not in f):
                kind = hash_comments
            else:
                continue
            try:
                text = open(p, encoding='utf-8', errors='replace').read()
            except OSError:
                continue
            for line, comment in kind(text):
                for m in cite.finditer(comment):
                    name = m.group(1)
                    count += 1
                    at = line + comment.count('\n', 0, m.start())
                    cands = [os.path.join(root, name), os.path.join(d, name)]
                    if '/' not in name:
                        cands.append(os.path.join(root, 'docs', name))
                    if not any(os.path.isfile(c) for c in cands):
                        print('%s:%d: cites %s, which is not in the repository'
                              % (os.path.relpath(p, root), at, name))
                        bad += 1
print('citations: %d, missing: %d' % (count, bad))
PY
cat report.txt
summary=$(tail -1 report.txt)
contains "citations were found" "$summary" "citations: "
case "$summary" in "citations: 0,"*) fail "no citation found: the scan reads nothing" ;; esac
eq "every cited document exists" "$(grep -c 'which is not in the repository' report.txt || true)" 0

# The scan itself: a comment citing a missing file is caught, a string is not.
mkdir -p fake/src fake/docs
printf '/* see absent_doc.md */\nconst char *s = "notes/todo.md";\n' > fake/src/a.c
printf '# docs/present.md and missing_too.md\necho "not a citation: x.md"\n' > fake/src/b.sh
: > fake/docs/present.md
sed -n '/^python3 - /,/^PY$/p' "$SELF" | sed '1d;$d' > scan.py
out=$(python3 scan.py "$WORK/fake")
contains "a C comment citing a missing file is caught" "$out" "src/a.c:1: cites absent_doc.md"
contains "a shell comment citing a missing file is caught" "$out" "src/b.sh:1: cites missing_too.md"
case "$out" in *todo.md* | *x.md* | *present.md*) fail "strings or existing files reported: $out" ;; *) pass ;; esac

[ "$FAILS" -eq 0 ] || exit 1
echo "ok ($CHECKS checks)"
