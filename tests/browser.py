#!/usr/bin/env python3
"""browser.py - fragsim's pictures and pages, checked as XML and rendered
in a real browser.

Usage: tests/browser.py --fragsim BIN [--keep DIR] [-v]
       (make test runs it with build/fragsim)

Every kind of picture and page fragsim writes (PAGES below) is made with
BIN, then:

* always: each SVG parses as XML (xml.etree) with an <svg> root in the
  SVG namespace, width, height and viewBox; no picture is wider than
  1400 px (FIT_W); no page holds a <script>, an
  event handler or an http(s) address but the SVG namespace; the lane
  map pictures have one cell per matrix entry, and each cell's owner
  (its <title>) is the one the published layout gives (formulas below,
  from docs/design.md 1.1, written out here, not read from fragsim);
* README's picture, docs/img/gfx936-c.svg, is byte for byte what BIN
  draws now (make pictures redraws it);
* when /usr/bin/chromium (or $CHROMIUM) exists: each page is opened with
  headless Chromium, which writes a screenshot and the DOM. The
  screenshot must not be blank (at least MIN_COLOURS colours), the DOM
  must hold the expected elements (cell counts, caption text), and the
  browser's log must have no console message (the pages have no script,
  so any message is an error). Two planted pages, one blank and one with
  a script error, must fail those checks: the checker's must-fail cases.

Without chromium it says "skipped: chromium not installed" for the
browser half. Exit 0 when all checks pass, 1 otherwise.
"""
import argparse
import concurrent.futures
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "http://www.w3.org/2000/svg"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PICTURE = "docs/img/gfx936-c.svg"  # README's, from make pictures
ODD = "a <b> & 'c' \"d\" ]]> </svg>"
MIN_COLOURS = 8
TIMEOUT_S = 60
WINDOW = (1200, 800)
FIT_W = 1400  # the widest window a picture may need

# --- the published layouts (docs/design.md 1.1), entry -> (lane, element)


def gfx936(op, r, c):
    """gfx936 (Hygon CK port): A[lane % 16][8*(lane / 16) + 4*reg + byte],
    B the same with n for m, C row = lane % 16, col = lane / 16 + 4*reg."""
    if op == "A":  # r = m, c = k
        return r + 16 * (c // 8), c % 8
    if op == "B":  # r = k, c = n
        return c + 16 * (r // 8), r % 8
    return r + 16 * (c % 4), c // 4  # C: r = m, c = n


def gfx936_quad(op, r, c):
    """gfx936-quad: A and B as gfx936; C row = lane / 4, col = lane % 4 + 4*reg."""
    if op != "C":
        return gfx936(op, r, c)
    return 4 * r + c % 4, c // 4


SHAPE = {"A": (16, 32), "B": (32, 16), "C": (16, 16)}  # gfx936, M=N=16, K=32

# --- the pages: (file, fragsim arguments, exit status wanted, checks)


def pages():
    return [
        ("gfx936.svg", ["lanemap", "--isa", "gfx936", "--format", "svg"], 0,
         {"matrices": {"A": 512, "B": 512, "C": 256}, "text": ["v_mmac_i32_16x16x32_i8"]}),
        ("gfx936-c.svg", ["lanemap", "--isa", "gfx936", "--format", "svg", "--matrix", "C"], 0,
         {"matrices": {"C": 256}}),
        ("rdna3-w32-a.svg", ["lanemap", "--isa", "rdna3-wmma-i32-16x16x16-iu8-w32",
                             "--format", "svg", "--matrix", "a"], 0,
         {"matrices": {"A": 256}}),
        ("diff.svg", ["lanemap", "diff", "gfx936", "gfx936-quad", "--format", "svg"], 1,
         {"matrices": {"C": 512}, "differ": 480,
          "text": ["lanes interleaved by 4", "bits: lane bits permuted",
                   "C lane 1 e 0: gfx936 C[1][0], gfx936-quad C[0][1]"]}),
        ("diff.html", ["lanemap", "diff", "gfx936", "gfx936-quad", "--format", "html"], 1,
         {"matrices": {"C": 512}, "differ": 480, "tags": {"figcaption": 1, "li": 5},
          "text": ["lanes interleaved by 4", "bits: lane bits permuted",
                   "C lane 1 e 0: gfx936 C[1][0], gfx936-quad C[0][1]"]}),
        # --report pages ({out} is the page's path). The default case asks
        # for 4 key buckets (its check: buckets: 4), so each plot has 4 bars.
        ("run.html", ["run", "cases/qwen35-27b/decode-4097-shuffled.yaml", "--report", "{out}"], 0,
         {"bars": {"score_max_abs": 4, "rms_dp": 4}, "tags": {"table": 2, "details": 1},
          "text": ["OK", "Exact checks", "Quantization", "error by key position",
                   "q_heads: 24"]}),
        ("check.html", ["check"] + CHECKED + ["--report", "{out}"], 0,
         {"rows": len(CHECKED), "sections": len(CHECKED), "files": len(CHECKED),
          "text": [f"{len(CHECKED)} passed, 0 failed"]}),
        # tests/data/dumps/c-columns: the c_columns=contiguous bug planted
        # (its plant.yaml); gfx936 C is 64 lanes x 4 registers.
        ("diff-report.html", ["diff", "tests/data/dumps/c-columns/case.yaml", "--dump",
                              "tests/data/dumps/c-columns", "--report", "{out}"], 1,
         {"heat": {"lane_reg": 64 * 4}, "tags": {"figcaption": 1},
          "text": ["diagnosis: matches kernel assumption c_columns=contiguous exactly"]}),
        ("mutate.html", ["mutate", "cases/edge", "--report", "{out}"], 0,
         {"rows": 51, "text": ["0 of 51 applicable bug classes survive"]}),
    ]


# Small and quick cases for check's page; every one passes.
CHECKED = ["cases/edge/one-token.yaml", "cases/edge/saturate.yaml", "cases/edge/sm80-decode.yaml"]


# --- a DOM, from an SVG file or Chromium's --dump-dom, as a list of elements


class Dom(html.parser.HTMLParser):
    """Every element as [tag, attrs, text inside], in document order."""

    VOID = {"meta", "br", "link", "img", "input", "hr", "col", "area", "base", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elems, self.stack = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elems.append(e)
        if tag not in self.VOID:
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        self.elems.append([tag, dict(attrs), ""])

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e[2] += data

    def with_class(self, cls, tag=None):
        return [e for e in self.elems if cls in e[1].get("class", "").split()
                and (tag is None or e[0] == tag)]


def check_dom(dom, want, where):
    """The expected elements of `want` in dom; a list of problems."""
    bad = []
    cells = {}
    for m in dom.with_class("matrix", "g"):
        cells[m[1]["data-matrix"]] = cells.get(m[1]["data-matrix"], 0)
    # A cell belongs to the last matrix opened before it (document order).
    current = None
    for e in dom.elems:
        if e[0] == "g" and "matrix" in e[1].get("class", "").split():
            current = e[1]["data-matrix"]
        elif e[0] == "g" and "cell" in e[1].get("class", "").split() and current:
            cells[current] += 1
    for m, n in want.get("matrices", {}).items():
        if cells.get(m) != n:
            bad.append(f"{where}: {n} cells of {m} wanted, {cells.get(m, 0)} found")
    if "differ" in want:
        n = len(dom.with_class("differ", "g"))
        if n != want["differ"]:
            bad.append(f"{where}: {want['differ']} differing cells wanted, {n} found")
    for tag, n in want.get("tags", {}).items():
        got = sum(1 for e in dom.elems if e[0] == tag)
        if got < n:
            bad.append(f"{where}: at least {n} <{tag}> wanted, {got} found")
    plots = {}
    current = None
    for e in dom.elems:
        if e[0] == "g" and "plot" in e[1].get("class", "").split():
            current = e[1].get("data-plot")
            plots.setdefault(current, 0)
        elif e[0] == "rect" and e[1].get("class") in ("bar", "heat") and current:
            plots[current] += 1
    for kind in ("bars", "heat"):
        for name, n in want.get(kind, {}).items():
            if plots.get(name) != n:
                bad.append(f"{where}: plot {name}: {n} {kind} wanted, {plots.get(name, 0)} found")
    if "rows" in want:
        tables = [i for i, e in enumerate(dom.elems) if e[0] == "table" and e[1].get("class") == "cases"]
        rows = 0
        for e in dom.elems[tables[0] + 1 if tables else len(dom.elems):]:
            if e[0] in ("table", "div", "section"):
                break
            rows += e[0] == "tr"
        rows -= 1  # the header
        if len(tables) != 1 or rows != want["rows"]:
            bad.append(f"{where}: {want['rows']} table rows wanted, {rows} found")
    if "sections" in want:
        links = {e[1]["href"][1:] for e in dom.elems if e[0] == "a" and e[1].get("href", "").startswith("#")}
        ids = {e[1]["id"] for e in dom.elems if "id" in e[1]}
        n = len(dom.with_class("case", "section"))
        if n != want["sections"] or len(links) != n or not links <= ids:
            bad.append(f"{where}: {want['sections']} case sections each linked wanted, "
                       f"{n} sections, {len(links)} links, {len(links - ids)} dangling")
    if "files" in want:
        files = {e[1]["href"] for e in dom.elems if e[0] == "a" and e[1].get("href", "").startswith("file://")}
        gone = [f for f in files if not os.path.exists(f[len("file://"):])]
        if len(files) != want["files"] or gone:
            bad.append(f"{where}: {want['files']} linked case files wanted, {len(files)} found, "
                       f"missing: {gone}")
    alltext = " ".join(e[2] for e in dom.elems if e[0] in ("svg", "html", "body"))
    if not alltext:
        alltext = " ".join(e[2] for e in dom.elems)
    for t in want.get("text", []):
        if t not in alltext:
            bad.append(f"{where}: text '{t}' not found")
    return bad


# --- checks that need no browser

OWNER = re.compile(r"^([ABC])\[(\d+)\]\[(\d+)\]: lane (\d+), element (\d+) \(register (\d+), byte (\d+)\)")


def check_static(path):
    """XML validity of SVGs, self-containment of every page; problems."""
    bad = []
    text = open(path, encoding="utf-8").read()
    name = os.path.basename(path)
    if path.endswith(".svg"):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            return [f"{name}: not valid XML: {e}"]
        if root.tag != "{%s}svg" % SVG_NS:
            bad.append(f"{name}: root is {root.tag}, not an SVG <svg>")
        for a in ("width", "height", "viewBox"):
            if a not in root.attrib:
                bad.append(f"{name}: <svg> has no {a}")
    # Every picture, standalone or inline, fits a 1400 px window (a diff
    # of two 16-column grids side by side was 1924 px).
    for svg in re.findall(r"<svg [^>]*>", text):
        m = re.search(r'\swidth="(\d+)"', svg)
        if m and int(m.group(1)) > FIT_W:
            bad.append(f"{name}: a picture {m.group(1)} px wide, over {FIT_W}")
    low = text.lower()
    if "<script" in low or re.search(r"\son[a-z]+\s*=", low):
        bad.append(f"{name}: holds a script or an event handler")
    for url in re.findall(r"https?://[^\s\"'<>]+", text):
        if url != SVG_NS:
            bad.append(f"{name}: refers to {url}")
            break
    return bad


def check_owners(path, layout, ops):
    """Each cell's first owner in the SVG against the published layout."""
    bad, seen = [], 0
    for title in ET.parse(path).getroot().iter("{%s}title" % SVG_NS):
        m = OWNER.match(title.text or "")
        if not m or m.group(1) not in ops:
            continue
        op, r, c, lane, e, reg, byte = m.group(1), *map(int, m.groups()[1:])
        want_lane, want_e = layout(op, r, c)
        # 8-bit A and B: 4 elements a register; C is int32, one.
        want_reg, want_byte = (want_e // 4, want_e % 4) if op != "C" else (want_e, 0)
        if (lane, e, reg, byte) != (want_lane, want_e, want_reg, want_byte):
            bad.append(f"{os.path.basename(path)}: {op}[{r}][{c}] drawn as lane {lane} "
                       f"e {e} (reg {reg}, byte {byte}), published lane {want_lane} "
                       f"e {want_e} (reg {want_reg}, byte {want_byte})")
        seen += 1
    want = sum(SHAPE[o][0] * SHAPE[o][1] for o in ops)
    if seen != want:
        bad.append(f"{os.path.basename(path)}: {seen} owner titles, {want} wanted")
    return bad[:8]


def check_current(path):
    """README's picture is this one, made by `make pictures`: current?"""
    with open(os.path.join(REPO, PICTURE), "rb") as f1, open(path, "rb") as f2:
        if f1.read() != f2.read():
            return [f"{PICTURE} is not what fragsim draws now: run make pictures"]
    return []


def check_c_columns(path):
    """The c_columns=contiguous bug on gfx936: slot (lane, e) holds C
    column lane/16 + 4e, and the kernel reads it as column 4*(lane/16) + e;
    the two agree exactly when e == lane/16. So the heat map's (lane,
    register) cells with register == lane/16 must be 0, and others not all."""
    bad, off = [], 0
    for e in Dom(open(path, encoding="utf-8").read()).elems:
        if e[0] == "rect" and e[1].get("class") == "heat":
            m = re.match(r"lane (\d+), register (\d+): (\d+)$", e[2].strip())
            if not m:
                continue
            lane, reg, n = map(int, m.groups())
            if reg == lane // 16 and n:
                bad.append(f"{os.path.basename(path)}: lane {lane} register {reg}: {n} "
                           "mismatches where the bug reads the right column")
            off += n if reg != lane // 16 else 0
    if not off:
        bad.append(f"{os.path.basename(path)}: no mismatch off the diagonal register == lane/16")
    return bad[:4]


def check_replicated(path):
    """RDNA3 wave32 holds A twice: A[m][k] in lanes m and m + 16."""
    bad = []
    for cell in ET.parse(path).getroot().iter("{%s}g" % SVG_NS):
        if "cell" not in cell.get("class", ""):
            continue
        t = cell.find("{%s}title" % SVG_NS).text
        m = re.match(r"A\[(\d+)\]\[(\d+)\]: lane (\d+),.*; lane (\d+),", t)
        if not m or (int(m.group(3)), int(m.group(4))) != (int(m.group(1)), int(m.group(1)) + 16):
            bad.append(f"rdna3-w32-a.svg: cell '{t}' is not held by lanes m and m + 16")
            break
    return bad


# --- the browser


def png_colours(path):
    """Distinct colours of an 8-bit RGB or RGBA PNG (zlib + struct)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError(f"{path}: PNG colour type {ctype} depth {depth}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:  # every fourth row is plenty to tell blank from drawn
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 2))
        prev = line
    return len(colours)


def render(chromium, path, shot):
    """Screenshot and DOM of file `path`: (dom text, console lines)."""
    cmd = ["timeout", str(TIMEOUT_S), chromium, "--headless=new", "--no-sandbox",
           "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--enable-logging=stderr", "--v=0", f"--window-size={WINDOW[0]},{WINDOW[1]}",
           f"--screenshot={shot}", "--dump-dom", "file://" + os.path.abspath(path)]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    if p.returncode:
        console.append(f"chromium exited {p.returncode}")
    return p.stdout, console


def browser_problems(chromium, path, want):
    shot = path + ".png"
    dom, console = render(chromium, path, shot)
    name = os.path.basename(path)
    bad = [f"{name}: console: {l}" for l in console]
    if not os.path.exists(shot):
        return bad + [f"{name}: no screenshot"]
    n = png_colours(shot)
    if n < MIN_COLOURS:
        bad.append(f"{name}: screenshot blank ({n} colours)")
    if "parsererror" in dom or "This page contains the following errors" in dom:
        bad.append(f"{name}: the browser could not parse it")
    return bad + check_dom(Dom(dom), want, name)


# One page, two faults: nothing drawn, and a script that throws.
PLANTED = {
    "planted.html": "<!DOCTYPE html><html><head><title>planted</title></head>"
                    "<body><script>no_such_function();</script></body></html>\n",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fragsim", required=True)
    ap.add_argument("--keep", help="write the pages here and keep them")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    out = a.keep or tempfile.mkdtemp(prefix="fragsim-browser.")
    os.makedirs(out, exist_ok=True)
    bad, made = [], []
    # A profile whose text needs escaping: the picture must stay XML and
    # show the text as written.
    odd = os.path.join(out, "odd.yaml")
    with open(os.path.join(REPO, "profiles/gfx936.yaml")) as f:
        text = re.sub(r"(?m)^name: .*$", "name: odd", f.read())
    with open(odd, "w") as f:
        f.write(re.sub(r"(?m)^source: .*$", 'source: "' + ODD.replace('"', '\\"') + '"', text))
    for name, args, status, want in pages() + [
            ("odd.svg", ["lanemap", "--isa", odd, "--format", "svg", "--matrix", "C"], 0,
             {"matrices": {"C": 256}, "render": False, "text": [ODD]})]:
        path = os.path.join(out, name)
        if "{out}" in args:
            args = [path if x == "{out}" else x for x in args]
            p = subprocess.run([a.fragsim] + args, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=REPO)
        else:
            with open(path, "w") as f:
                p = subprocess.run([a.fragsim] + args, stdout=f, stderr=subprocess.PIPE,
                                   text=True, cwd=REPO)
        if p.returncode != status:
            bad.append(f"{name}: fragsim {' '.join(args)} exited {p.returncode}, "
                       f"want {status}: {p.stderr.strip()}")
            continue
        bad += check_static(path)
        bad += check_dom(Dom(open(path, encoding="utf-8").read()), want, name + " (file)")
        if want.get("render", True):
            made.append((path, want))
    # The checks below read files an older fragsim may not have written.
    for fn, args in ((check_owners, ("gfx936.svg", gfx936, "ABC")),
                     (check_owners, ("gfx936-c.svg", gfx936, "C")),
                     (check_replicated, ("rdna3-w32-a.svg",)),
                     (check_diff_owners, ("diff.svg",)),
                     (check_current, ("gfx936-c.svg",)),
                     (check_c_columns, ("diff-report.html",))):
        try:
            bad += fn(os.path.join(out, args[0]), *args[1:])
        except (OSError, ET.ParseError, AttributeError) as e:
            bad.append(f"{args[0]}: {fn.__name__}: {e}")
    print(f"browser: {len(pages())} pictures and pages made, XML and owners checked")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not (shutil.which(chromium) and os.access(chromium, os.X_OK)):
        print("browser: skipped: chromium not installed")
    else:
        for name, text in PLANTED.items():
            with open(os.path.join(out, name), "w") as f:
                f.write(text)
        jobs = made + [(os.path.join(out, n), {}) for n in PLANTED]
        with concurrent.futures.ThreadPoolExecutor(3) as ex:
            found = list(ex.map(lambda j: browser_problems(chromium, *j), jobs))
        for (path, _), problems in zip(jobs, found):
            name = os.path.basename(path)
            if name in PLANTED:
                for kind in ("blank", "console"):
                    if not any(kind in p for p in problems):
                        bad.append(f"{name}: the planted {kind} fault went unnoticed: {problems}")
            else:
                bad += problems
            if a.v:
                print(f"  {name}: {'ok' if not problems or name in PLANTED else problems}")
        print(f"browser: {len(made)} pages rendered in {chromium}, planted faults caught")
    for b in bad:
        print("FAIL " + b)
    if not a.keep:
        shutil.rmtree(out, ignore_errors=True)
    print(f"browser: {'FAILED' if bad else 'passed'}")
    return 1 if bad else 0


def check_diff_owners(path):
    """In the diff of gfx936 and gfx936-quad, the C cells outlined are
    exactly those whose owner differs between the published layouts: 240
    of 256 (equal where m + 16*(n % 4) = 4*m + n % 4), in each of X and Y."""
    want = {(r, c) for r in range(16) for c in range(16)
            if gfx936("C", r, c) != gfx936_quad("C", r, c)}
    bad, side = [], 0
    for g in ET.parse(path).getroot().iter("{%s}g" % SVG_NS):
        cls = g.get("class", "").split()
        if "matrix" in cls:
            side += 1
            layout = gfx936 if side == 1 else gfx936_quad
            got = set()
            for cell in g.iter("{%s}g" % SVG_NS):
                m = OWNER.match(cell.findtext("{%s}title" % SVG_NS) or "")
                if not m:
                    continue
                r, c, lane = int(m.group(2)), int(m.group(3)), int(m.group(4))
                if lane != layout("C", r, c)[0]:
                    bad.append(f"diff.svg: side {side} C[{r}][{c}] lane {lane}")
                if "differ" in cell.get("class", "").split():
                    got.add((r, c))
            if got != want or len(want) != 240:
                bad.append(f"diff.svg: side {side}: {len(got)} entries outlined, "
                           f"{len(want)} differ in the published layouts")
    if side != 2:
        bad.append(f"diff.svg: {side} grids, 2 wanted")
    return bad[:8]


if __name__ == "__main__":
    sys.exit(main())
