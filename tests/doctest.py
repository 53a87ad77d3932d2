#!/usr/bin/env python3
"""doctest.py - run every command shown in README.md and docs/*.md and
compare what it prints with what the document shows.

Usage: tests/doctest.py [--fragsim BIN] [-v] FILE.md...
       (make test runs it on README.md docs/*.md with build/fragsim)

The convention (docs/README.md says the same for writers):

* A fenced block whose info string is `console` is a session. Each line
  starting with `$ ` is a command (a line ending in a backslash continues
  on the next one); the lines after it, up to the next command or the end
  of the block, are what it prints: stdout and stderr together, as a
  terminal shows them.
* A fenced block whose info string carries `file=NAME` (```yaml
  file=decode.yaml) is written to NAME before the commands after it run.
* Any other block (```sh, ```yaml, ```python, no language) is not run.
  Use `sh` only for what a test cannot run: make targets, steps on a
  device.

How the commands run:

* Each document gets a fresh scratch directory, shared by its blocks in
  order, holding links to the repository's cases/, profiles/, tests/,
  tools/, docs/, sim/, ref/, lib/, cli/, include/ and examples/ (so
  `cases/edge/x.yaml` works and `--out out` writes into the scratch
  directory). The directory of BIN comes
  first on PATH, so `fragsim` is the binary under test.
* Each command runs in its own `sh -c` there (no `cd` carries over); `$?`
  is the exit status of the previous command. A command that exits with
  2 or more (bad input, internal error, not found, a crash) fails the
  test unless the next command is `echo $?`, which shows that status.

How output is compared, line by line:

* A time is masked on both sides: a number followed by `s` or `ms` (with
  or without a space, e.g. `0.261 s`, `12ms`) reads as `<time>`.
* A line that is `...` alone (indentation allowed) matches any number of
  lines, none included. `...` inside a line matches any text within that
  line (`time      inputs 0.261 s, emulation 0.040 s (...)`).
* Trailing spaces, and blank lines at the end of an output, are ignored.
* Progress lines on stderr (`fragsim: NAME: reference 25% (...) at 2.1 s`
  and the note of a run predicted to take over a minute, docs/cli.md)
  appear only when a run is slow on this machine (an ASan build, a busy
  CI host), so they are dropped from what is printed unless the document
  shows one for that command.

The front page, README.md at the repository root (or any FILE given as
--front-page FILE), is held to two more rules, each a check counted like
a command: it has fewer than FRONT_PAGE_LINES lines (detail belongs in
docs/), and the first commands it shows are `make run` then `make test`.

The last line is "N passed, N failed" (one per command); exit 1 when any
failed.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINKED = ("cases", "profiles", "tests", "tools", "docs", "sim", "ref", "lib", "cli",
          "include", "examples")
TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)? ?m?s\b")
PROGRESS = re.compile(r"^fragsim: (?:note: [^:\s]+: predicted to take |[^:\s]+: "
                      r"(?:starting|inputs|emulation|reference|exact acc|done)(?: \d+% \([^)]*\))? at )")
TIMEOUT_S = 600
FRONT_PAGE_LINES = 200
FRONT_PAGE_FIRST = ["make run", "make test"]


class Command:
    def __init__(self, doc, line, text):
        self.doc, self.line, self.text = doc, line, text
        self.expected = []


def parse(path):
    """The document's steps in order: ('file', name, text), ('cmd', Command)
    or ('bad', line, why) for a block that breaks the convention."""
    steps, fence, info, body, start = [], None, "", [], 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        m = re.match(r"^(\s*)(`{3,}|~{3,})(.*)$", line)
        if fence is None:
            # CommonMark: a backtick fence's info string holds no backtick,
            # so ```` ```yaml ```` inside a paragraph opens nothing
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence, info, body, start = m.group(2), m.group(3).strip(), [], n
            continue
        if m and m.group(2).startswith(fence) and not m.group(3).strip():
            steps += block_steps(path, info, body, start)
            fence = None
            continue
        body.append(line)
    if fence is not None:
        steps.append(("bad", start, "fenced block never closed"))
    return steps


def block_steps(path, info, body, start):
    words = info.split()
    files = [w[5:] for w in words if w.startswith("file=")]
    if files:
        return [("file", files[0], "\n".join(body) + "\n")]
    if not words or words[0] != "console":
        return []
    steps, cmd = [], None
    i = 0
    while i < len(body):
        line, n = body[i], start + 1 + i
        if line.startswith("$ "):
            text = line[2:]
            while text.endswith("\\") and i + 1 < len(body):
                i += 1
                text = text + "\n" + body[i]
            cmd = Command(path, n, text)
            steps.append(("cmd", cmd))
        elif cmd is None:
            if line.strip():
                steps.append(("bad", n, "a console block's first line must be a '$ ' command"))
                return steps
        else:
            cmd.expected.append(line)
        i += 1
    return steps


def norm(lines):
    out = [TIME.sub("<time>", l.rstrip()) for l in lines]
    while out and not out[-1]:
        out.pop()
    return out


def line_matches(want, got):
    if "..." not in want:
        return want == got
    pattern = ".*".join(re.escape(p) for p in want.split("..."))
    return re.fullmatch(pattern, got) is not None


def matches(want, got):
    """Do the expected lines (with `...` wildcards) match the actual ones?"""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(want):
            r = j == len(got)
        elif want[i].strip() == "...":
            r = m(i + 1, j) or (j < len(got) and m(i, j + 1))
        else:
            r = j < len(got) and line_matches(want[i], got[j]) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    sys.setrecursionlimit(max(10000, 4 * (len(want) + len(got))))
    return m(0, 0)


def scratch_dir():
    d = tempfile.mkdtemp(prefix="fragsim-doctest-")
    for name in LINKED:
        if os.path.exists(os.path.join(REPO, name)):
            os.symlink(os.path.join(REPO, name), os.path.join(d, name))
    return d


def run_doc(path, env, verbose):
    steps = parse(path)
    passed = failed = 0
    for s in steps:
        if s[0] == "bad":
            failed += 1
            print(f"FAIL {path}:{s[1]}: {s[2]}")
    cmds = [s[1] for s in steps if s[0] == "cmd"]
    if not cmds:
        return 0, failed
    d = scratch_dir()
    prev = 0
    try:
        for k, step in enumerate(steps):
            if step[0] == "bad":
                continue
            if step[0] == "file":
                target = os.path.join(d, step[1])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w", encoding="utf-8") as f:
                    f.write(step[2])
                continue
            c = step[1]
            try:
                p = subprocess.run(["sh", "-c", f"(exit {prev}); {c.text}"], cwd=d, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=TIMEOUT_S)
                got, prev = p.stdout.decode("utf-8", "replace"), p.returncode
            except subprocess.TimeoutExpired:
                got, prev = f"(timed out after {TIMEOUT_S} s)\n", 124
            nxt = next((s[1] for s in steps[k + 1:] if s[0] == "cmd"), None)
            shown = nxt is not None and nxt.text.strip() == "echo $?"
            want, have = norm(c.expected), norm(got.split("\n"))
            if not any(PROGRESS.match(l) for l in want):
                have = [l for l in have if not PROGRESS.match(l)]
            why = None
            if not matches(want, have):
                why = "output differs"
            elif prev >= 2 and not shown:
                why = f"exit status {prev} (show it with '$ echo $?' to expect it)"
            if why:
                failed += 1
                print(f"FAIL {c.doc}:{c.line}: $ {c.text}\n  {why}")
                diff = [] if why != "output differs" else list(
                    difflib.unified_diff(want, have, "shown", "printed", lineterm="", n=2))
                for l in diff[:40]:
                    print("  " + l)
                if len(diff) > 40:
                    print(f"  ... {len(diff) - 40} more diff lines")
            else:
                passed += 1
                if verbose:
                    print(f"ok   {c.doc}:{c.line}: $ {c.text}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return passed, failed


def first_commands(path):
    """The commands of the document's first fenced block: a console
    block's `$ ` lines, or an sh block's lines without their comments."""
    fence, cmds = None, []
    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            m = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
            if fence is None:
                if m:
                    fence, info = m.group(1), m.group(2).split()
                continue
            if m and m.group(1).startswith(fence) and not m.group(2).strip():
                return cmds
            if info[:1] == ["console"]:
                if line.startswith("$ "):
                    cmds.append(line[2:].strip())
            elif line.split("#")[0].strip():
                cmds.append(" ".join(line.split("#")[0].split()))
    return cmds


def front_page(path):
    """The front-page rules on path: (passed, failed), failures printed."""
    with open(path, encoding="utf-8") as f:
        n = len(f.read().rstrip("\n").split("\n"))
    failed = 0
    if n >= FRONT_PAGE_LINES:
        failed += 1
        print(f"FAIL {path}: {n} lines; a front page has at most "
              f"{FRONT_PAGE_LINES - 1} (move detail to docs/)")
    first = first_commands(path)[:len(FRONT_PAGE_FIRST)]
    if first != FRONT_PAGE_FIRST:
        failed += 1
        print(f"FAIL {path}: the first commands shown are "
              f"{', '.join(repr(c) for c in first) or 'none'}, not "
              f"{' then '.join(repr(c) for c in FRONT_PAGE_FIRST)}")
    return 2 - failed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fragsim", default=os.path.join(REPO, "build", "fragsim"))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--front-page", action="append", default=[], metavar="FILE",
                    help="hold FILE to README.md's front-page rules too")
    ap.add_argument("docs", nargs="*")
    a = ap.parse_args()
    binary = os.path.abspath(a.fragsim)
    if not os.access(binary, os.X_OK):
        sys.exit(f"doctest: {binary}: not an executable; build it first")
    env = dict(os.environ, LC_ALL="C", PATH=os.path.dirname(binary) + os.pathsep +
               os.environ.get("PATH", ""))
    docs = a.docs + [d for d in a.front_page if d not in a.docs]
    if not docs:
        ap.error("give at least one document")
    print("doctest: the commands of " + " ".join(docs))
    passed = failed = 0
    readme = os.path.realpath(os.path.join(REPO, "README.md"))
    for doc in docs:
        p, f = run_doc(doc, env, a.verbose)
        passed, failed = passed + p, failed + f
        if doc in a.front_page or os.path.realpath(doc) == readme:
            p, f = front_page(doc)
            passed, failed = passed + p, failed + f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
