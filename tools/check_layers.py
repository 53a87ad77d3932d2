#!/usr/bin/env python3
"""check_layers.py - the layering rules of sim/, ref/, lib/, include/ and cli/,
checked.

Usage: tools/check_layers.py [-v] [ROOT]  (make check-layers; ROOT: .)
       -v also lists each line a known exception excuses

The layers (docs/design.md 5): sim/ is the pure emulation (no I/O, no
printing); ref/ is the independent oracle, which may share sim/'s plain
types but not its mapping or addressing code; lib/ is the rest of the
library (what runs a case, reads and writes files); include/ is the
public header, installed alone, so it includes only the C library; cli/
is the command line (main, the commands, what they print). Only the
command line prints.

Each rule below is one row: a name, the files it applies to, and what
those files must not do. A violation prints as

    file:line: rule: text

and the exit status is 1 (0 when there is none, 2 on bad usage). Known
exceptions sit in one table, EXCEPTIONS, each with its reason: when the
code they excuse is gone, delete the row and the rule is whole. Only
the standard library: this runs wherever make does.
"""

import fnmatch
import glob
import os
import re
import sys

# The command line, and the library part outside sim/ and ref/: lib/
# and the public header (include/fragsim.h, what programs include).
CLI = ["cli/*.[ch]"]
LIB = ["lib/*.[ch]", "include/*.h"]

# A CLI header, as a library file would include it: by path, or by the
# name of a header that only cli/ has.
CLI_HEADERS = r'(^|/)cli/|^(cli|cmds|report|lmprint)\.h$'

# sim/ headers the oracle (ref/ but compare) may include: plain types,
# and the one place the CPU is asked what it runs (no mapping code).
REF_ORACLE_SIM = r'^\.\./sim/(attn/case|attn/inputs|common/cpu)\.h$'
# compare.[ch] reads the sim's result (attn.h, fs.h) and walks its
# accumulators in register order (lanemap.h); it computes nothing the
# oracle needs, so the oracle stays independent of the mapping code.
REF_COMPARE_SIM = r'^\.\./sim/(attn/attn|attn/case|common/fs|common/progress|attn/inputs|lanemap/lanemap)\.h$'

# Calls that write text, or any bytes, to a stream.
TEXT_OUT = (r'\b(printf|vprintf|fprintf|vfprintf|dprintf|puts|fputs|'
            r'putchar|fputc|putc|perror)\s*\(|\b(stdout|stderr)\b')
ANY_OUT = TEXT_OUT + r'|\bfwrite\s*\('

# (name, files, kind, pattern): kind "include" matches the path of each
# #include "..." line, "include-not" flags an include of a sim/ header
# that does NOT match (an allow list), "code" matches code with the
# comments and string literals blanked out.
RULES = [
    ("sim-includes-outside", ["sim/*/*.[ch]"], "include",
     r'(^|/)(ref|lib|cli|tools)/'),
    # sim/ holds two subsystems over common basics: the lane-map engine
    # (sim/lanemap: maps, probes, loads) knows nothing of the attention
    # emulation (sim/attn), which uses it; sim/common uses neither.
    ("lanemap-includes-attn", ["sim/lanemap/*.[ch]"], "include", r'(^|/)attn/'),
    ("common-includes-subsystem", ["sim/common/*.[ch]"], "include",
     r'(^|/)(attn|lanemap)/'),
    ("ref-includes-lib-or-cli", ["ref/*.[ch]"], "include", r'(^|/)(lib|cli|tools)/'),
    ("ref-oracle-includes-sim", ["ref/*.[ch]", "!ref/compare.[ch]"],
     "include-not", REF_ORACLE_SIM),
    ("ref-compare-includes-sim", ["ref/compare.[ch]"], "include-not",
     REF_COMPARE_SIM),
    ("library-includes-cli", ["sim/*/*.[ch]", "ref/*.[ch]"] + LIB,
     "include", CLI_HEADERS),
    ("pure-does-io", ["sim/*/*.[ch]", "ref/*.[ch]"], "code", ANY_OUT),
    ("library-prints", LIB, "code", TEXT_OUT),
    # Installed alone: a quoted include would name a file not installed.
    ("public-header-includes-project", ["include/*.h"], "include", r'.'),
]

# Known exceptions: (rule, file pattern, where, why). `where` is a
# regular expression matched against "FUNCTION: LINE" (FUNCTION: the
# definition the line is in, empty outside one).
EXCEPTIONS = [
    ("library-prints", "lib/caseprint.c", r'.',
     "caseprint.c renders a resolved case as YAML for `fragsim show`, to "
     "the FILE* it is given: the schema table's print column, one "
     "function per key, kept next to the table rather than in the CLI"),
    ("library-prints", "lib/caseschema.c",
     r'^(range_doc|default_doc|table_head|row_doc|kernel_doc|section_doc|'
     r'case_schema_md):',
     "the schema table writes itself out as docs/case-schema.md, to the "
     "FILE* it is given, for `fragsim show --schema`"),
]


def files_of(root, patterns):
    """The files under root that the patterns name, sorted; !PATTERN
    takes files out."""
    out = set()
    for p in patterns:
        if p.startswith("!"):
            out = {f for f in out if not fnmatch.fnmatch(f, p[1:])}
        else:
            out.update(os.path.relpath(f, root)
                       for f in glob.glob(os.path.join(root, p)))
    return sorted(out)


# A comment, or a string or character literal (escapes inside).
LEXEME = re.compile(r'/\*.*?(\*/|\Z)|//[^\n]*|"(\\.|[^"\\\n])*"?|'
                    r"'(\\.|[^'\\\n])*'?", re.S)


def blank_comments(text):
    """The text with comments, string and character literals replaced
    by spaces (newlines kept, so line numbers hold; quotes kept)."""
    def blank(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + re.sub(r'[^\n]', ' ', s[1:-1]) + s[-1]
        return re.sub(r'[^\n]', ' ', s)
    return LEXEME.sub(blank, text)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# A function definition starts in column 0 (STYLE.md's kernel style):
# "enum fs_rc case_load(const char *path, ..." with no ';' after it.
DEFINITION = re.compile(r'^[A-Za-z_][^;(]*?\b(\w+)\s*\([^;]*$')


def violations(root):
    found, cache = [], {}
    for name, pats, kind, pattern in RULES:
        rx = re.compile(pattern)
        for f in files_of(root, pats):
            if f not in cache:
                with open(os.path.join(root, f), encoding="utf-8") as fp:
                    text = fp.read()
                cache[f] = (text.split("\n"),
                            blank_comments(text).split("\n"))
            lines, code = cache[f]
            func = ""
            for no, line in enumerate(lines, 1):
                d = DEFINITION.match(code[no - 1])
                if d:
                    func = d.group(1)
                if kind == "code":
                    bad = rx.search(code[no - 1])
                else:
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    if kind == "include":
                        bad = rx.search(m.group(1))
                    else:
                        bad = (m.group(1).startswith("../sim/")
                               and not rx.search(m.group(1)))
                if bad:
                    found.append((f, no, name, line.strip(), func))
    return found


def excuse(v):
    """The index in EXCEPTIONS of the row that excuses v, or None."""
    f, _, rule, text, func = v
    for i, (r, ef, where, _) in enumerate(EXCEPTIONS):
        if rule == r and fnmatch.fnmatch(f, ef) and \
                re.search(where, func + ": " + text):
            return i
    return None


def main(argv):
    args = argv[1:]
    verbose = args[:1] == ["-v"]
    if verbose:
        args = args[1:]
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write("usage: check_layers.py [-v] [ROOT]\n")
        return 2
    root = args[0] if args else "."
    if not os.path.isdir(os.path.join(root, "sim")):
        sys.stderr.write("check_layers.py: error: %s: no sim/ directory\n"
                         % root)
        return 2
    found = violations(root)
    bad = [v for v in found if excuse(v) is None]
    used = {excuse(v) for v in found}
    if verbose:
        for v in found:
            if excuse(v) is not None:
                print("%s:%d: %s: %s (known exception)" % v[:4])
    for i, (rule, ef, _, why) in enumerate(EXCEPTIONS):
        if i not in used:
            print("check-layers: note: the %s exception for %s excuses "
                  "nothing now: delete it" % (rule, ef))
    for f, no, rule, text, _ in bad:
        print("%s:%d: %s: %s" % (f, no, rule, text))
    if bad:
        print("check-layers: %d violation(s)" % len(bad))
        return 1
    print("check-layers: %d rules, no violation (%d line(s) excused by "
          "%d known exception(s))" % (len(RULES), len(found), len(used)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
