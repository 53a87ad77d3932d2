#!/usr/bin/env python3
"""bench.py - the driver of `make bench`: time fragsim on the Qwen3.5-27B
workloads and hold the times against ceilings and a baseline measured in
the same invocation.

  1. peak (tools/bench/peak.c): int8 MAC/s ceiling (VNNI vpdpbusd, or AVX2),
     f64 and f32 FMA/s (vfmadd) and DRAM read bandwidth, on 1..max threads;
     again at the end, and the better of the two is the ceiling
  2. for each workload and thread count (1, 2 and every core by default):
     the numpy float32 baseline (tools/bench/numpy_ref.py, OpenBLAS,
     kernel printed) and, when torch imports, the same attention in torch
     on the CPU; then fragsim `run --emulate-only` and `run` (full check),
     --runs times each, each run a child process whose wall time and peak
     RSS (wait4) are kept; then one run of tools/bench/stages.c (the
     library on the same case) for the reference's stage times
  3. one table, the stage table (each stage's time against its ceiling),
     the context-scaling lines (4k -> 32k -> 128k) and the targets of
     issues 12 and 25 and of issue 23 point 14 (INT8 PV beside f32 PV),
     each met or not met with its figures (and, not met, what would move it)

A run that fails, times out or is killed shows as such in its row; the
bench goes on. Columns (also in notes/README-bench.md):

  wall med/min/max  seconds of the whole `fragsim run` process
  kernel s          median of what fragsim reports for the attention
                    itself: seconds_emulation (emul), + seconds_reference
                    (full); input generation is outside it, as the
                    baseline's data preparation is outside its timing
  GMAC/s            QK^T MMAC work / kernel s, counting every row the
                    hardware executes: tiles x 16 x 16 x head_dim (decode
                    fills 16 rows per kv head though only 6 are distinct)
  %VNNI             GMAC/s as a share of the measured int8 peak, same threads
  x mem             kernel s / (bytes that must be read / measured read
                    bandwidth, same threads): 1.0 is the streaming bound
  RSS MiB / budget  peak RSS against 1.25 x (input tensors + requested
                    outputs) + 64 MiB; "?" after it: of a run that failed
  x numpy           numpy median / kernel s (> 1: fragsim is faster)
  x torch           torch median / kernel s, when torch is installed

Stage table (full rows): each stage's seconds, the seconds it would take
at its ceiling, and the share (ceiling s / stage s, 100% = at the
ceiling). The work counted: inputs, the input tensors' bytes at the DRAM
read bandwidth; emulation, the largest of its int8 MACs at the int8 peak,
its PV's f32 FMAs (one per visible key, dim and row) at the f32 peak and
its must-read bytes at the DRAM bandwidth; the reference's exact product,
one int8 MAC per visible (row, key) pair and dim; its quantized PV (o and
sum p |v|), two f64 FMAs a pair and dim; the float path (its q.k and PV),
two f64 FMAs a pair and dim; softmax (two exps a pair) has no measured
ceiling.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1024 * 1024

# The workloads: the case file and the shape numpy_ref.py and the byte
# counts need. Keep in step with the case files beside this script.
WORKLOADS = [
    {"name": "decode-4096", "case": "decode-4096.yaml", "mode": "decode",
     "context": 4096, "history": 0, "tokens": 1},
    {"name": "decode-32768", "case": "decode-32768.yaml", "mode": "decode",
     "context": 32768, "history": 0, "tokens": 1},
    {"name": "decode-131072", "case": "decode-131072.yaml", "mode": "decode",
     "context": 131072, "history": 0, "tokens": 1},
    {"name": "prefill-1024-4096", "case": "prefill-1024-after-4096.yaml",
     "mode": "prefill", "context": 5120, "history": 4096, "tokens": 1024},
    {"name": "prefill-2048-8192", "case": "prefill-2048-after-8192.yaml",
     "mode": "prefill", "context": 10240, "history": 8192, "tokens": 2048},
    # INT8 PV (issue 23 point 14): an f32 workload's case plus pv: {mode:
    # int8}; "base" names that workload, whose numpy and torch baselines
    # (the same attention) serve both; its stage-timer row is its own
    # run: the check of INT8 PV runs the f32 reference's passes too (out
    # against the float path), and ref/pv_int8.c's own check (Pq, pv_acc,
    # the out slack) falls in "compare and rest"
    {"name": "decode-131072-pv-int8", "case": "decode-131072-pv-int8.yaml",
     "mode": "decode", "context": 131072, "history": 0, "tokens": 1,
     "base": "decode-131072"},
    {"name": "prefill-1024-4096-pv-int8", "case": "prefill-1024-after-4096-pv-int8.yaml",
     "mode": "prefill", "context": 5120, "history": 4096, "tokens": 1024,
     "base": "prefill-1024-4096"},
]
HQ, HKV, D, BS, SPARE_BLOCKS = 24, 4, 256, 16, 2
TILE_N = 16		# key columns per MMAC tile (gfx936 16x16x32)


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description="time fragsim on the Qwen3.5-27B workloads")
    p.add_argument("--fragsim", default="build-bench/fragsim")
    p.add_argument("--peak", default="build-bench/bench/peak")
    p.add_argument("--runs", type=int, default=5, help="timed runs per row [5]")
    p.add_argument("--quick", action="store_true",
                   help="1 run per row (numpy keeps its warm-up: a cold baseline is a weak one)")
    p.add_argument("--only", action="append", default=[],
                   help="workload name or substring (repeatable, or comma separated)")
    p.add_argument("--threads", default="1,2,all",
                   help="thread counts; all is this machine's cores [1,2,all]")
    p.add_argument("--stages", default="build-bench/bench/stages",
                   help="the reference's stage timer (tools/bench/stages.c); '' to skip")
    p.add_argument("--no-torch", action="store_true", help="skip the torch CPU baseline")
    p.add_argument("--modes", default="emul,full", help="emul, full or both [emul,full]")
    p.add_argument("--timeout", type=float, default=900, help="seconds per run [900]")
    p.add_argument("--exec", dest="exec_", default=None,
                   help="pass --exec MODE to fragsim run (when it has the flag)")
    p.add_argument("--no-numpy", action="store_true", help="skip the numpy baseline")
    p.add_argument("--numpy-gather", action="store_true",
                   help="numpy gathers K/V pages through the block table inside its timing")
    p.add_argument("--python", default=None,
                   help="python with numpy for the baseline [this one, else /usr/bin/python3]")
    p.add_argument("--peak-mib", type=int, default=0,
                   help="bandwidth buffer in MiB [max(1024, 16 x LLC)]")
    p.add_argument("--json", default=None, help="also write every figure to this file")
    a = p.parse_args()
    if a.quick:
        a.runs = 1
    ncpu = os.cpu_count() or 1
    a.threads = sorted({ncpu if t == "all" else int(t) for t in a.threads.split(",") if t})
    a.modes = [m for m in a.modes.split(",") if m]
    if not a.threads or min(a.threads) < 1 or any(m not in ("emul", "full") for m in a.modes):
        p.error("--threads takes counts >= 1, --modes emul and/or full")
    only = [o for arg in a.only for o in arg.split(",") if o]
    a.workloads = [w for w in WORKLOADS if not only or any(o in w["name"] for o in only)]
    if not a.workloads:
        p.error("--only matches none of: " + ", ".join(w["name"] for w in WORKLOADS))
    return a


# ---- sizes ---------------------------------------------------------------

def blocks(w):
    return -(-w["context"] // BS)


def input_bytes(w):
    """The golden `inputs` tensors (docs/design.md 3.3) of one sequence."""
    t, nb = w["tokens"], blocks(w) + SPARE_BLOCKS
    q = t * HQ * D * 4 + t * HQ * D + t * HQ * 4		# q, q_int8, q_scale
    kv = 2 * (nb * HKV * D * BS + nb * BS * HKV * 4)	# caches + scales
    return q + kv + blocks(w) * 4 + 4 + t * 4		# table, lens, q_pos


def generated_values(w):
    """Logical values the generator makes: Q rows, and K and V of the context."""
    return w["tokens"] * HQ * D + 2 * w["context"] * HKV * D


def output_bytes(w):
    return w["tokens"] * HQ * D * 4			# out: the only one requested


def rss_budget(w):
    return 1.25 * (input_bytes(w) + output_bytes(w)) + 64 * MIB


def must_read_bytes(w):
    """Bytes the attention cannot avoid reading: K, V and their scales for
    the context, and Q (as the f32 the kernel is given)."""
    ctx = w["context"]
    return 2 * (ctx * HKV * D + ctx * HKV * 4) + w["tokens"] * HQ * D * 4


def expected_tiles(w):
    """Tiles the hardware executes when fragsim's JSON is not there: decode
    one per kv head per 16 keys; prefill per q head, 16-row block and
    16-key block not wholly in the causal future."""
    if w["mode"] == "decode":
        return HKV * blocks(w)
    n = 0
    for r0 in range(0, w["tokens"], 16):
        last = w["history"] + min(w["tokens"], r0 + 16) - 1
        n += last // TILE_N + 1
    return HQ * n


def visible_pairs(w):
    """(row, key) pairs the reference computes: every q head of every
    token against each key it sees (decode: the whole context; prefill:
    the history and the chunk's keys up to its own, causal)."""
    if w["mode"] == "decode":
        return HQ * w["context"]
    t, h = w["tokens"], w["history"]
    return HQ * (t * h + t * (t + 1) // 2)


def macs(w, res):
    tiles = res.get("tiles") or expected_tiles(w)
    rows = res.get("rows") or 16
    return tiles * rows * TILE_N * D


# ---- child processes -----------------------------------------------------

def run_child(argv, timeout, env=None):
    """Run argv; return dict(rc, status, wall, rss, out, err). rss from
    wait4 is the peak RSS of that child alone (KiB on Linux)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(argv, stdout=fo, stderr=fe, env=env)
        except OSError as e:
            return {"rc": None, "status": "cannot start: %s" % e, "wall": None,
                    "rss": None, "out": "", "err": ""}
        status, ru, timed_out = None, None, False
        while True:
            pid, st, r = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status, ru = st, r
                break
            if time.perf_counter() - t0 > timeout:
                timed_out = True
                os.kill(p.pid, signal.SIGKILL)
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)	# already reaped
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode(errors="replace")
        err = fe.read().decode(errors="replace")
    rc = p.returncode
    if timed_out:
        st = "TIMEOUT %gs" % timeout
    elif rc < 0:
        st = "killed %s" % signal.Signals(-rc).name
    else:
        st = "ok"
    return {"rc": rc, "status": st, "wall": wall, "rss": ru.ru_maxrss * 1024,
            "out": out, "err": err}


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def fragsim_flags(fragsim):
    r = run_child([fragsim, "run", "-h"], 30)
    text = r["out"] + r["err"]
    return {"emulate_only": "--emulate-only" in text, "exec": "--exec" in text}


class FragsimRow:
    """The runs of one (workload, mode, threads), one step() at a time, so
    that main can take every row's runs in turns (see fragsim_rows)."""

    def __init__(self, a, w, mode, threads, flags):
        self.a, self.w, self.mode, self.threads = a, w, mode, threads
        self.argv = [a.fragsim, "run", os.path.join(HERE, w["case"]), "--threads",
                     str(threads), "--json"]
        self.note = ""
        if mode == "emul":
            if flags["emulate_only"]:
                self.argv.append("--emulate-only")
            else:
                self.note = "no --emulate-only in this fragsim: wall/RSS are a full run's"
        if a.exec_ and flags["exec"]:
            self.argv += ["--exec", a.exec_]
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.runs, self.fails, self.done, self.i = [], [], False, 0

    def step(self):
        a, w, mode = self.a, self.w, self.mode
        if self.done:
            return
        r = run_child(self.argv, a.timeout, self.env)
        res = {}
        if r["rc"] in (0, 1):		# 1 is a mismatch verdict: timings hold
            try:
                res = json.loads(r["out"])
            except ValueError:
                r["status"] = "bad JSON"
        elif r["status"] == "ok":
            last = (r["err"].strip().splitlines() or [""])[-1]
            r["status"] = "FAIL rc=%d %s" % (r["rc"], last[:60])
        if r["rc"] == 1 and res:
            r["status"] = "MISMATCH"
        if res and r["status"] in ("ok", "MISMATCH"):
            r["kernel"] = res.get("seconds_emulation", 0.0)
            if mode == "full":
                r["kernel"] += res.get("seconds_reference", 0.0)
            r["json"] = res
            r["round"] = self.i
            self.runs.append(r)
        self.i += 1
        log("%s %s %dt run %d/%d: %s, %.2f s wall" % (w["name"], mode, self.threads, self.i,
            a.runs, r["status"], r["wall"] or 0))
        if "kernel" not in r:
            self.fails.append(r)
            # one failure of this kind says enough: do not spend 5 timeouts
            if r["status"].startswith(("TIMEOUT", "killed", "FAIL")):
                self.done = True
        if self.i >= a.runs:
            self.done = True

    def row(self):
        return row_of(self.a, self.w, self.mode, self.threads, self.note, self.runs,
                      self.fails)


def fragsim_rows(a, specs, flags):
    """The rows of specs [(workload, mode, threads)], their runs taken in
    turns: run 1 of every row, then run 2, ... A host whose speed drifts
    during the invocation then moves every row alike, so that two rows'
    ratio (INT8 PV against f32 PV, 16 threads against 1) holds the code's
    difference, not the minute each ran in (one 16-core host drifted by
    40 % within one invocation)."""
    rs = [FragsimRow(a, w, mode, t, flags) for w, mode, t in specs]
    while not all(r.done for r in rs):
        for r in rs:
            r.step()
    return [r.row() for r in rs]


def row_of(a, w, mode, threads, note, runs, fails):
    """One row's figures from its runs."""
    row = {"workload": w["name"], "mode": mode, "threads": threads, "note": note,
           "n_ok": len(runs), "n_runs": a.runs}
    if fails:
        row["status"] = fails[0]["status"]
    elif any(r["status"] == "MISMATCH" for r in runs):
        row["status"] = "MISMATCH"
    else:
        row["status"] = "ok"
    if runs:
        walls = [r["wall"] for r in runs]
        res = runs[0]["json"]
        row.update(wall_med=median(walls), wall_min=min(walls), wall_max=max(walls),
                   kernel=median([r["kernel"] for r in runs]),
                   inputs_s=median([r["json"].get("seconds_inputs", 0.0) for r in runs]),
                   kernel_emul=median([r["json"].get("seconds_emulation", 0.0) for r in runs]),
                   kernel_emul_min=min(r["json"].get("seconds_emulation", 0.0) for r in runs),
                   kernel_ref=median([r["json"].get("seconds_reference", 0.0) for r in runs])
                   if mode == "full" else None,
                   # per round, for paired(): {round: seconds}
                   by_round={k: {r["round"]: f(r) for r in runs} for k, f in (
                       ("wall", lambda r: r["wall"]),
                       ("emul", lambda r: r["json"].get("seconds_emulation", 0.0)))},
                   rss=max(r["rss"] for r in runs), macs=macs(w, res),
                   tiles=res.get("tiles"), exec=res.get("exec"))
    if fails and fails[0]["rss"]:
        row["rss_failed"] = fails[0]["rss"]
    return row


def find_python(a):
    cands = [a.python] if a.python else [sys.executable, "/usr/bin/python3"]
    for py in cands:
        if py and shutil.which(py) or (py and os.path.exists(py)):
            r = run_child([py, "-c", "import numpy"], 60)
            if r["rc"] == 0:
                return py, None
    return None, ("numpy not importable by %s: install python3-numpy and "
                  "libopenblas0-pthread (Debian) for the x numpy column" % " or ".join(
                      c for c in cands if c))


def numpy_env(threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    if cpu_flags() & {"avx512f"}:
        # OpenBLAS 0.3.21 reads it at load time, and without it may pick a
        # slow kernel (or a site default such as Haswell) on new AMD cores.
        env["OPENBLAS_CORETYPE"] = "SkylakeX"
    return env


# BLAS libraries whose sgemm is a tuned kernel (threadpoolctl's internal_api
# names, and numpy_ref.py's when it asks OpenBLAS itself).
FAST_BLAS = ("openblas", "mkl", "blis")


def numpy_row(a, py, w, threads, backend="numpy"):
    argv = [py, os.path.join(HERE, "numpy_ref.py"), "--backend", backend, "--mode", w["mode"],
            "--threads", str(threads), "--runs", str(a.runs), "--coretype", "keep",
            "--q-heads", str(HQ), "--kv-heads", str(HKV), "--head-dim", str(D)]
    if w["mode"] == "decode":
        argv += ["--context", str(w["context"])]
    else:
        argv += ["--history", str(w["history"]), "--chunk", str(w["tokens"])]
    if a.numpy_gather and backend == "numpy":
        argv.append("--gather")
    if backend == "numpy":
        argv.append("--whole")
    # every run plus the warm-up, each within the per-run timeout
    r = run_child(argv, a.timeout * (2 * a.runs + 1), numpy_env(threads))
    if r["status"] != "ok" or r["rc"] != 0:
        last = (r["err"].strip().splitlines() or [""])[-1]
        return {"status": "%s %s" % (r["status"] if r["status"] != "ok" else
                                     "FAIL rc=%s" % r["rc"], last[:80])}
    try:
        res = json.loads(r["out"])
    except ValueError:
        return {"status": "bad JSON from numpy_ref.py"}
    res["status"] = "ok"
    res["rss"] = r["rss"]
    if backend == "torch":
        log("%s torch %dt: median %.3f s (torch %s)" % (w["name"], threads, res["median_s"],
            res["torch"]["version"]))
        return res
    lib = res["blas"].get("library") or ""
    if lib not in FAST_BLAS:
        # Debian's numpy falls back to the reference BLAS (libblas3), 10-20x
        # slower than OpenBLAS: a ratio against it would flatter fragsim.
        res["status"] = ("not a baseline: numpy calls %s (%s), not an optimised BLAS; "
                         "install libopenblas0-pthread" % (
                             lib or "an unknown BLAS",
                             ", ".join(res["blas"].get("loaded") or []) or "path unknown"))
    log("%s numpy %dt: median %.3f s (%s, %s)" % (w["name"], threads, res["median_s"],
        res["blas"].get("library"), res["blas"].get("corename")))
    return res


def find_torch(a, py):
    """A python that imports torch: the numpy one, else python3 on PATH."""
    for cand in [py, shutil.which("python3"), "/usr/bin/python3"]:
        if cand and os.path.exists(cand):
            if run_child([cand, "-c", "import torch"], 120)["rc"] == 0:
                return cand
    return None


def stage_row(a, w, threads):
    """One run of the stage timer on the workload: the reference's stages."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = run_child([a.stages, os.path.join(HERE, w["case"])], a.timeout, env)
    if r["rc"] != 0:
        last = (r["err"].strip().splitlines() or [""])[-1]
        log("%s stages %dt: %s rc=%s %s" % (w["name"], threads, r["status"], r["rc"], last))
        return None
    try:
        res = json.loads(r["out"])
    except ValueError:
        return None
    log("%s stages %dt: %s" % (w["name"], threads, ", ".join(
        "%s %.3f s" % kv for kv in res["ref"].items())))
    return res


# ---- the machine ---------------------------------------------------------

def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown cpu"


def llc_bytes():
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for idx in os.listdir(base):
            with open(os.path.join(base, idx, "size")) as f:
                s = f.read().strip()
            m = re.match(r"(\d+)([KMG]?)", s)
            if m:
                best = max(best, int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20,
                                                   "G": 1 << 30}[m.group(2)])
    except OSError:
        pass
    return best


def run_peak(a, max_threads):
    mib = a.peak_mib or max(1024, 16 * llc_bytes() // MIB)
    r = run_child([a.peak, str(max_threads), str(mib),
                   ",".join(str(t) for t in a.threads)], 600)
    if r["rc"] != 0:
        log("peak failed (%s): %s" % (r["status"], r["err"].strip()[-200:]))
        return None
    pk = json.loads(r["out"])
    log("peak: %s" % peak_text(pk))
    return pk


def peak_merge(p, q):
    """Both ceilings at their best of the two measurements: on a shared
    machine a neighbour only ever pulls a ceiling down."""
    if not p or not q:
        return p or q
    for key in ("int8_gmacs", "read_gbs", "f64_gfma", "f32_gfma"):
        for t, v in q.get(key, {}).items():
            p.setdefault(key, {})
            p[key][t] = max(p[key].get(t, 0), v)
    for t, v in q.get("gen_ns", {}).items():	# a time: the lower
        p.setdefault("gen_ns", {})[t] = min(p.get("gen_ns", {}).get(t, v), v)
    return p


def peak_text(pk):
    by_t = lambda d: ", ".join("%st %s" % (t, v) for t, v in sorted(d.items(), key=lambda x: int(x[0])))
    return ("int8 %s: %s GMAC/s; %s: f64 %s, f32 %s G FMA/s; DRAM read %s GB/s (%d MiB "
            "buffer); input generator %s ns/value/thread" % (
                pk["int8_isa"], by_t(pk["int8_gmacs"]), pk.get("fma_isa", "fma ?"),
                by_t(pk.get("f64_gfma", {})) or "?", by_t(pk.get("f32_gfma", {})) or "?",
                by_t(pk["read_gbs"]), pk["read_buffer_mib"],
                by_t(pk.get("gen_ns", {})) or "?"))


# ---- the report ----------------------------------------------------------

def fmt(x, spec, missing="-"):
    return missing if x is None else format(x, spec)


def derived(row, w, pk, npy, tch=None):
    """The ratio columns of one row (None where an input is missing)."""
    t = str(row["threads"])
    k = row.get("kernel")
    d = {"gmacs": None, "pct_vnni": None, "x_mem": None, "x_numpy": None, "x_torch": None}
    if k:
        d["gmacs"] = row["macs"] / k / 1e9
        if pk and t in pk["int8_gmacs"]:
            d["pct_vnni"] = 100 * d["gmacs"] / pk["int8_gmacs"][t]
        if pk and t in pk["read_gbs"]:
            d["x_mem"] = k / (must_read_bytes(w) / (pk["read_gbs"][t] * 1e9))
        if npy and npy.get("status") == "ok":
            d["x_numpy"] = npy["median_s"] / k
        if tch and tch.get("status") == "ok":
            d["x_torch"] = tch["median_s"] / k
    d["budget"] = rss_budget(w)
    return d


def print_table(rows, wmap, pk, numpy_res, out, torch_res=None):
    torch_res = torch_res or {}
    hdr = ["workload", "mode", "thr", "wall med s", "min s", "max s", "kernel s",
           "GMAC/s", "% VNNI", "x mem bound", "RSS / budget MiB", "x numpy", "x torch",
           "status"]
    lines = []
    for row in rows:
        w = wmap[row["workload"]]
        npy = numpy_res.get((w["name"], row["threads"]))
        tch = torch_res.get((w["name"], row["threads"]))
        d = derived(row, w, pk, npy, tch)
        row.update(d)
        rss = row.get("rss") or row.get("rss_failed")
        status = row["status"]
        if row.get("n_ok", 0) < row.get("n_runs", 0) and row.get("n_ok"):
            status += " (%d/%d ok)" % (row["n_ok"], row["n_runs"])
        if row.get("note"):
            status += " *"
        if row.get("exec"):
            status += " exec=%s" % row["exec"]
        npy_cell = fmt(d["x_numpy"], ".2f")
        if d["x_numpy"] is None and npy is not None and npy.get("status") != "ok":
            npy_cell = "n/a"
        lines.append([w["name"], row["mode"], str(row["threads"]),
                      fmt(row.get("wall_med"), ".3f"), fmt(row.get("wall_min"), ".3f"),
                      fmt(row.get("wall_max"), ".3f"), fmt(row.get("kernel"), ".3f"),
                      fmt(d["gmacs"], ".2f"), fmt(d["pct_vnni"], ".2f"),
                      fmt(d["x_mem"], ".1f"),
                      "%s%s / %.0f%s" % (fmt(rss and rss / MIB, ".0f", "?"),
                                         "" if row.get("rss") else "?", d["budget"] / MIB,
                                         "" if not rss or rss <= d["budget"] else " OVER"),
                      npy_cell, fmt(d["x_torch"], ".2f") if tch else "n/a", status])
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h)
              for i, h in enumerate(hdr)]
    def emit(cells):
        print("| " + " | ".join(c.ljust(widths[i]) for i, c in enumerate(cells)) + " |", file=out)
    emit(hdr)
    print("|" + "|".join("-" * (n + 2) for n in widths) + "|", file=out)
    for l in lines:
        emit(l)
    if any(r.get("note") for r in rows):
        print("\n* fragsim has no --emulate-only yet: the emul row's kernel s is the "
              "emulation part of a full run; its wall time and RSS are the full run's.",
              file=out)


STAGES = [
    # (name, how the bench gets its seconds, its ceiling)
    ("inputs", "seconds_inputs", "DRAM"),
    ("emulation", "seconds_emulation", "int8 / f32 / DRAM"),
    ("ref exact product", "exact", "int8"),
    ("ref softmax", "softmax", None),
    ("ref quantized PV (f64)", "pv_q", "f64"),
    ("ref float path q.k (f64)", "qk_f", "f64"),
    ("ref float path PV (f64)", "pv_f", "f64"),
    ("ref compare and rest", "rest", None),
]


def stage_ceiling(name, w, res, pk, t):
    """Seconds the stage would take at its ceiling (None: none measured)."""
    t = str(t)
    i8 = (pk or {}).get("int8_gmacs", {}).get(t)
    f64 = (pk or {}).get("f64_gfma", {}).get(t)
    f32 = (pk or {}).get("f32_gfma", {}).get(t)
    bw = (pk or {}).get("read_gbs", {}).get(t)
    pd = visible_pairs(w) * D
    if name == "seconds_inputs":
        return bw and input_bytes(w) / (bw * 1e9)
    if name == "seconds_emulation":
        if not (i8 and f32 and bw):
            return None
        return max(macs(w, res) / (i8 * 1e9), pd / (f32 * 1e9),
                   must_read_bytes(w) / (bw * 1e9))
    if name == "exact":
        return i8 and pd / (i8 * 1e9)
    if name == "pv_q":
        return f64 and 2 * pd / (f64 * 1e9)
    if name in ("qk_f", "pv_f"):
        return f64 and pd / (f64 * 1e9)
    return None


def print_stages(rows, stage_res, wmap, pk, out):
    """Per stage of each full row: seconds, seconds at the ceiling, share."""
    print("\nstages of the full check (one stage-timer run each; ceiling s = the "
          "stage's work at the measured peak, same threads; share = ceiling s / "
          "stage s):", file=out)
    any_ = False
    for row in rows:
        if row["mode"] != "full" or not row.get("n_ok"):
            continue
        w = wmap[row["workload"]]
        st = stage_res.get((row["workload"], row["threads"]))
        res = {"tiles": row.get("tiles")}
        figs = {"seconds_inputs": row.get("inputs_s"),
                "seconds_emulation": row.get("kernel_emul")}
        if st:
            figs.update(st["ref"])
            ref_total = row.get("kernel_ref")
            if ref_total is not None:
                figs["rest"] = max(0.0, ref_total - sum(
                    v for k, v in st["ref"].items() if not k.startswith("regen")))
        cells = []
        for label, key, ceil in STAGES:
            sec = figs.get(key)
            c = stage_ceiling(key, w, res, pk, row["threads"])
            share = "%.0f%%" % (100 * c / sec) if c and sec else "-"
            cells.append("%s %s s (ceiling %s%s, %s)" % (
                label, fmt(sec, ".3f", "?"), fmt(c, ".3f", "-"),
                " s " + ceil if c and ceil else "", share))
        row["stages"] = {k: figs.get(k) for _, k, _ in STAGES}
        print("  %s %dt:" % (row["workload"], row["threads"]), file=out)
        for c in cells:
            print("    " + c, file=out)
        if st:
            fp = st["ref"]["qk_f"] + st["ref"]["pv_f"]
            print("    (float path, q.k + PV: %.3f s; double passes, quantized PV + float "
                  "path: %.3f s)" % (fp, fp + st["ref"]["pv_q"]), file=out)
            if "regen_k" in st["ref"]:
                print("    (float K and V made again instead of kept, the master thread's "
                      "share: K %.3f s of q.k's %.3f s, V %.3f s of PV's %.3f s)" % (
                          st["ref"]["regen_k"], st["ref"]["qk_f"], st["ref"]["regen_v"],
                          st["ref"]["pv_f"]), file=out)
        any_ = True
    if not any_:
        print("  no full rows", file=out)


def peak_scaling(pk, big):
    """How much this machine's own ceilings (peak.c, same invocation) grow
    from 1 to big threads: what target 3's 10x stands beside. A stage at
    its ceiling at both thread counts scales by its ceiling's ratio (the
    16-core host: about 8x for each); one below its ceiling at one thread
    (the prefill reference, 40-60 % of the f64 peak) can scale by more."""
    one, n = "1", str(big)
    parts = []
    for key, name in (("f64_gfma", "f64 FMA"), ("f32_gfma", "f32 FMA"),
                      ("int8_gmacs", "int8 MAC"), ("read_gbs", "DRAM read")):
        d = (pk or {}).get(key, {})
        if d.get(one) and d.get(n):
            parts.append("%s %.2fx" % (name, d[n] / d[one]))
    g = (pk or {}).get("gen_ns", {})
    if g.get(one) and g.get(n):		# ns a value a thread: the rate is big / ns
        parts.append("generator %.2fx" % (big * g[one] / g[n]))
    return ", ".join(parts)


def minima(a, b, key):
    """The ratio of two rows' fastest runs, printed beside the verdict's
    ratio (ratio_verdict): on a shared host the median of a few runs moves
    with the neighbours (a 16-core host's one-thread medians sat 40 %
    above its minima), the fastest run much less, so a ratio near its
    line is read with both."""
    x, y = a and a.get(key), b and b.get(key)
    return "of minima %s / %s s: %sx" % (fmt(x, ".3f", "?"), fmt(y, ".3f", "?"),
                                        fmt(x / y if x and y else None, ".2f", "?"))


def paired(a, b, key):
    """The median over rounds of a's run over b's run of the same round
    (key "wall" or "emul"), and the number of rounds: the rows take their
    runs in turns, so the two runs of a round are seconds apart and a
    drift of the host between rounds (40 % within one invocation on a
    16-core host) divides out, where the ratio of the two medians can
    pair a slow minute of one row with a fast one of the other. None
    when fewer than 3 rounds hold both runs."""
    x = a and a.get("by_round", {}).get(key) or {}
    y = b and b.get("by_round", {}).get(key) or {}
    qs = [x[i] / y[i] for i in sorted(set(x) & set(y)) if y[i] > 0]
    return (median(qs), len(qs)) if len(qs) >= 3 else (None, len(qs))


def ratio_verdict(a, b, key, of_medians):
    """The ratio a ratio target is judged on: the paired one where 3
    rounds or more hold both rows' runs, else the ratio of the medians."""
    q, _ = paired(a, b, key)
    return of_medians if q is None else q


def paired_text(a, b, key):
    q, n = paired(a, b, key)
    return "paired %sx over %d rounds" % (fmt(q, ".2f", "?"), n)


def targets25(rows, numpy_res, torch_res, stage_res, out, pk=None):
    """Issue 25's targets, each met, NOT MET or unknown, with its figures."""
    def find(wl, mode, t):
        return next((r for r in rows if r["workload"] == wl and r["mode"] == mode
                     and r["threads"] == t), None)

    def base(res, wl, t):
        n = res.get((wl, t))
        return n["median_s"] if n and n.get("status") == "ok" else None
    res = []
    thr = sorted({r["threads"] for r in rows})
    big = max(thr) if thr else None
    pf, dc = "prefill-1024-4096", "decode-131072"
    r = find(pf, "full", 1)
    n = base(numpy_res, pf, 1)
    if r:
        x = r["wall_med"] / n if r.get("wall_med") and n else None
        res.append(("1. prefill 1024/4096 full check 1t <= 4x numpy", None if x is None
                    else x <= 4, "%.3f s wall, %sx numpy (%s s)" % (
                        r.get("wall_med") or 0, fmt(x, ".2f", "?"), fmt(n, ".3f", "?"))))
    if big and big >= 16:
        r, n = find(pf, "full", big), base(torch_res, pf, big)
        x = r["wall_med"] / n if r and r.get("wall_med") and n else None
        res.append(("1. prefill 1024/4096 full check %dt <= 8x torch" % big,
                    None if x is None else x <= 8, "%s s wall, %sx torch (%s s)" % (
                        fmt(r and r.get("wall_med"), ".3f", "?"), fmt(x, ".2f", "?"),
                        fmt(n, ".3f", "?"))))
    r, n = find(dc, "full", 1), base(numpy_res, dc, 1)
    if r:
        x = r["wall_med"] / n if r.get("wall_med") and n else None
        res.append(("2. decode 131072 full check 1t <= 1.5x numpy", None if x is None
                    else x <= 1.5, "%.3f s wall, %sx numpy (%s s)" % (
                        r.get("wall_med") or 0, fmt(x, ".2f", "?"), fmt(n, ".3f", "?"))))
    if big and big > 1:
        for wl in (dc, pf):
            o, r = find(wl, "full", 1), find(wl, "full", big)
            if o and r and o.get("wall_med") and r.get("wall_med"):
                sp = o["wall_med"] / r["wall_med"]
                q = ratio_verdict(o, r, "wall", sp)
                ok = q >= 10 if big >= 16 else None
                res.append(("3. %s full check %dt >= 10x 1t%s" % (
                    wl, big, "" if big >= 16 else " (needs 16 threads)"), ok,
                    "%.2fx (%.3f s -> %.3f s; %s; %s)" % (
                        sp, o["wall_med"], r["wall_med"], paired_text(o, r, "wall"),
                        minima(o, r, "wall_min"))))
        for wl in (dc, pf):
            r, n = find(wl, "emul", big), base(torch_res, wl, big)
            if r:
                ok = None if not (r.get("wall_med") and n) else r["wall_med"] <= n
                res.append(("4. %s emulate-only %dt wall <= torch" % (wl, big), ok,
                            "%s s vs torch %s s" % (fmt(r.get("wall_med"), ".3f", "?"),
                                                    fmt(n, ".3f", "?"))))
    res.append(("5. per-stage times and shares printed", bool(stage_res),
                "%d stage-timer rows" % len(stage_res)))
    print("\ntargets (issue 25):", file=out)
    for name, ok, figs in res:
        print("  %-9s %s: %s" % ({True: "met", False: "NOT MET", None: "unknown"}[ok],
                                 name, figs), file=out)
    ps = big and big > 1 and peak_scaling(pk, big)
    if ps:
        print("  (info)    3. this machine's ceilings from 1 to %d threads (peak): %s"
              % (big, ps), file=out)
    return res


def targets2314(rows, out):
    """Issue 23 point 14: INT8 PV emulate-only no slower than f32 PV (the
    emulation's own seconds: the inputs are the same), and the full check
    of INT8 PV at most 1.2x the f32 one (wall), per workload and threads."""
    res = []
    for w in WORKLOADS:
        b = w.get("base")
        if not b:
            continue
        for t in sorted({r["threads"] for r in rows}):
            def find(wl, mode):
                return next((r for r in rows if r["workload"] == wl and r["mode"] == mode
                             and r["threads"] == t), None)
            i8, f = find(w["name"], "emul"), find(b, "emul")
            if i8 or f:
                x, y = i8 and i8.get("kernel_emul"), f and f.get("kernel_emul")
                q = ratio_verdict(i8, f, "emul", x / y if x and y else None)
                res.append(("23.14 %s %dt int8 PV emulate-only <= f32 PV" % (b, t),
                            None if q is None else q <= 1,
                            "%s s vs %s s (%sx; %s; %s)" % (
                                fmt(x, ".3f", "?"), fmt(y, ".3f", "?"),
                                fmt(x / y if x and y else None, ".2f", "?"),
                                paired_text(i8, f, "emul"),
                                minima(i8, f, "kernel_emul_min"))))
            i8, f = find(w["name"], "full"), find(b, "full")
            if i8 or f:
                x, y = i8 and i8.get("wall_med"), f and f.get("wall_med")
                q = ratio_verdict(i8, f, "wall", x / y if x and y else None)
                res.append(("23.14 %s %dt full int8 <= 1.2x full f32" % (b, t),
                            None if q is None else q <= 1.2,
                            "%s s vs %s s wall (%sx; %s)" % (
                                fmt(x, ".3f", "?"), fmt(y, ".3f", "?"),
                                fmt(x / y if x and y else None, ".2f", "?"),
                                paired_text(i8, f, "wall"))))
    print("\ntargets (issue 23 point 14, INT8 PV):", file=out)
    for name, ok, figs in res or [("no INT8 PV rows beside their f32 ones", None, "-")]:
        print("  %-9s %s: %s" % ({True: "met", False: "NOT MET", None: "unknown"}[ok],
                                 name, figs), file=out)
    return res


def scaling(rows, out):
    """Kernel time per key along 4k -> 32k -> 128k, emul rows."""
    lines, verdicts = [], []
    for t in sorted({r["threads"] for r in rows}):
        pts = []
        for name, ctx in (("decode-4096", 4096), ("decode-32768", 32768),
                          ("decode-131072", 131072)):
            r = next((r for r in rows if r["workload"] == name and r["mode"] == "emul"
                      and r["threads"] == t and r.get("kernel")), None)
            if r:
                pts.append((ctx, r["kernel"]))
        if len(pts) < 2:
            continue
        desc = ", ".join("%dk %.3f s (%.1f ns/key)" % (c // 1024, k, 1e9 * k / c) for c, k in pts)
        worst = max(pts[i + 1][1] / pts[i][1] / (pts[i + 1][0] / pts[i][0])
                    for i in range(len(pts) - 1))
        ok = worst <= 1.25
        verdicts.append((t, ok, worst, "->".join("%dk" % (c // 1024) for c, _ in pts)))
        lines.append("  %dt: %s; worst step grows %.2fx the keys' ratio: %s" % (
            t, desc, worst, "linear" if ok else "NOT linear (super-linear growth)"))
    print("\ncontext scaling (emulation kernel time, decode; linear = time per key "
          "grows at most 1.25x from one context to the next):", file=out)
    for l in lines or ["  not enough decode emul rows"]:
        print(l, file=out)
    return verdicts


def targets(rows, scale, numpy_res, pk, out):
    """Issue 12's targets, each met, NOT MET or unknown with its figures,
    and for one not met what would move it."""
    def find(wl, mode, t):
        return next((r for r in rows if r["workload"] == wl and r["mode"] == mode
                     and r["threads"] == t), None)

    def npy(wl, t):
        n = numpy_res.get((wl, t))
        return n["median_s"] if n and n.get("status") == "ok" else None
    res, print_later = [], []

    def add(name, ok, figs, move=""):
        res.append((name, ok, figs + ("" if ok or not move else "; would move it: " + move)))
    thr = sorted({r["threads"] for r in rows})
    for t in thr:
        r, n = find("decode-131072", "emul", t), npy("decode-131072", t)
        if r:
            w = r.get("wall_med")
            add("decode 131072 emul wall <= numpy (%dt)" % t,
                None if w is None or n is None else w <= n,
                "%s s vs numpy %s s (inputs %s s)" % (fmt(w, ".3f", "?"), fmt(n, ".3f", "?"),
                                                    fmt(r.get("inputs_s"), ".3f", "?")),
                "the input stage (268 M values generated, quantized, paged) costs about "
                "numpy's attention time by itself (docs/performance.md, targets that "
                "cannot be met)")
            x = r.get("x_numpy")
            add("decode 131072 emul kernel >= 8x numpy (%dt)" % t,
                None if x is None else x >= 8, "%sx" % fmt(x, ".2f", "?"),
                "the kernel is %s its DRAM streaming bound (x mem bound) and stalls on "
                "the shuffled pages; prefetching further ahead did not move it, reading "
                "a tile's K and V once, fused, might (docs/performance.md)"
                % ("?x" if r.get("x_mem") is None else "%.1fx" % r["x_mem"]))
        r = find("decode-131072", "full", t)
        if r:
            w = r.get("wall_med")
            add("decode 131072 full wall <= 3x numpy (%dt)" % t,
                None if w is None or n is None else w <= 3 * n,
                "%sx numpy" % fmt(w / n if w and n else None, ".2f", "?"),
                "the input stage and the double-precision reference (K and V made again, "
                "three PV sums) each exceed it; a decision on what a full check computes")
        r, n = find("prefill-2048-8192", "emul", t), npy("prefill-2048-8192", t)
        if r:
            x = r.get("x_numpy")
            add("prefill 2048/8192 emul kernel >= 3x numpy (%dt)" % t,
                None if x is None else x >= 3, "%sx" % fmt(x, ".2f", "?"),
                "PV's f32 FMAs in key order and QK^T at this core's peaks bound the ratio "
                "(docs/performance.md works it out)")
        r = find("prefill-2048-8192", "full", t)
        if r:
            w = r.get("wall_med")
            add("prefill 2048/8192 full wall <= 3x numpy (%dt)" % t,
                None if w is None or n is None else w <= 3 * n,
                "%sx numpy" % fmt(w / n if w and n else None, ".2f", "?"),
                "the double-precision reference (three PV sums and the float q.k) at the "
                "double FMA peak nearly fills 3x numpy alone; a decision on what a full "
                "check computes (docs/performance.md)")
    for r in rows:
        if r["mode"] != "full":
            continue
        name = "peak RSS <= 1.25 x (inputs + outputs) + 64 MiB, %s full %dt" % (
            r["workload"], r["threads"])
        if r.get("rss"):
            add(name, r["rss"] <= r["budget"], "%.0f of %.0f MiB" % (
                r["rss"] / MIB, r["budget"] / MIB),
                "smaller reference row blocks (ref/compare.c)")
        else:
            add(name, None, "no run finished")
    for t, ns in sorted((pk or {}).get("gen_ns", {}).items(), key=lambda x: int(x[0])):
        add("input generation <= 1.5 ns/value/thread (%st, peak's gen ns: sim/common/gen.c "
            "rows of 256)" % t, ns <= 1.5, "%.3f ns" % ns,
            "fewer multiplies per word (one h32 round instead of two)")
    wmap = {w["name"]: w for w in WORKLOADS}
    for r in rows:
        if r["mode"] != "emul" or not r.get("inputs_s"):
            continue
        ns = r["inputs_s"] * r["threads"] / generated_values(wmap[r["workload"]]) * 1e9
        print_later.append("  (info)    whole input stage of %s %dt: %.2f ns/value/thread "
                           "(generation, quantization, paging, first-touch page faults)"
                           % (r["workload"], r["threads"], ns))
    for r in rows:
        n = numpy_res.get((r["workload"], r["threads"]))
        ws = n.get("whole_median_s") if n and n.get("status") == "ok" else None
        if ws and r.get("wall_med"):
            print_later.append("  (info)    %s %s %dt, whole process vs numpy's whole script "
                               "(inputs, int8 quantization, attention): %.3f s vs %.3f s, "
                               "%.2fx" % (r["workload"], r["mode"], r["threads"],
                                          r["wall_med"], ws, ws / r["wall_med"]))
    if 1 in thr and 2 in thr:
        for wl in ("decode-131072", "prefill-2048-8192"):
            for mode in ("emul", "full"):
                o, r = find(wl, mode, 1), find(wl, mode, 2)
                if not (o and r):
                    continue
                name = "2 threads >= 1.85x 1 thread, %s %s (wall)" % (wl, mode)
                if o.get("wall_med") and r.get("wall_med"):
                    sp = o["wall_med"] / r["wall_med"]
                    add(name, sp >= 1.85, "%.2fx" % sp,
                        "the serial parts (process start, page faults, block placement)")
                else:
                    add(name, None, "a run failed")
    for t, ok, worst, span in scale:
        add("time per key linear in context %s (%dt)" % (span, t), ok,
            "worst step %.2fx" % worst)
    print("\ntargets (issue 12):", file=out)
    for name, ok, figs in res:
        print("  %-9s %s: %s" % ({True: "met", False: "NOT MET", None: "unknown"}[ok],
                                 name, figs), file=out)
    for line in print_later:
        print(line, file=out)
    n_met = sum(1 for _, ok, _ in res if ok)
    print("  %d of %d met, %d not met, %d unknown" % (
        n_met, len(res), sum(1 for _, ok, _ in res if ok is False),
        sum(1 for _, ok, _ in res if ok is None)), file=out)
    return res


def main():
    a = parse_args()
    for exe in (a.fragsim, a.peak):
        if not os.access(exe, os.X_OK):
            log("error: %s is not built (make bench builds it)" % exe)
            return 2
    out = sys.stdout
    flags = fragsim_flags(a.fragsim)
    pk = run_peak(a, max(a.threads))
    py, why = (None, "skipped (--no-numpy)") if a.no_numpy else find_python(a)
    if not py:
        log(why)
    tpy = None if a.no_torch else find_torch(a, py)
    if not tpy and not a.no_torch:
        log("torch not importable: x torch column skipped")
    stages_ok = a.stages and os.access(a.stages, os.X_OK)
    if a.stages and not stages_ok:
        log("%s is not built: no stage table (make bench builds it)" % a.stages)
    numpy_res, torch_res, stage_res, specs = {}, {}, {}, []
    wmap = {w["name"]: w for w in WORKLOADS}
    for w in a.workloads:
        for t in a.threads:
            b = w.get("base")
            if py:
                numpy_res[(w["name"], t)] = numpy_res.get((b, t)) or numpy_row(a, py, w, t)
            if tpy:
                torch_res[(w["name"], t)] = torch_res.get((b, t)) or \
                    numpy_row(a, tpy, w, t, "torch")
            specs += [(w, mode, t) for mode in a.modes]
            if stages_ok and "full" in a.modes:
                st = stage_row(a, w, t)
                if st:
                    stage_res[(w["name"], t)] = st
    rows = fragsim_rows(a, specs, flags)
    pk = peak_merge(pk, run_peak(a, max(a.threads)))

    print("fragsim bench: %s, %d cpus; %d run(s) per row, timeout %g s" % (
        cpu_model(), os.cpu_count() or 0, a.runs, a.timeout), file=out)
    print("fragsim: %s%s%s" % (a.fragsim,
          "" if flags["emulate_only"] else " (no --emulate-only yet)",
          " --exec %s" % a.exec_ if a.exec_ and flags["exec"] else ""), file=out)
    if pk:
        print("peak (best of before and after): " + peak_text(pk), file=out)
    else:
        print("peak: not measured (peak failed): % VNNI and x mem bound left blank", file=out)
    if py:
        blas = next((r["blas"] for r in numpy_res.values() if r.get("status") == "ok"), None)
        if blas:
            print("numpy: %s via %s, numpy %s, BLAS %s %s, kernel %s (OPENBLAS_CORETYPE=%s), %s" % (
                py, blas.get("source"), blas.get("numpy"), blas.get("library"),
                blas.get("version") or blas.get("config", ""), blas.get("corename"),
                next(iter(numpy_res.values())).get("env", {}).get("OPENBLAS_CORETYPE"),
                next(iter(numpy_res.values())).get("layout")), file=out)
        for (name, t), r in numpy_res.items():
            if r.get("status") == "ok":
                print("numpy %s %dt: median %.3f s, min %.3f, max %.3f (%d runs); whole script %s s" % (
                    name, t, r["median_s"], r["min_s"], r["max_s"], r["runs"],
                    fmt(r.get("whole_median_s"), ".3f", "?")), file=out)
            elif r.get("median_s") is not None:
                print("numpy %s %dt: median %.3f s, %s" % (name, t, r["median_s"], r["status"]),
                      file=out)
            else:
                print("numpy %s %dt: %s" % (name, t, r["status"]), file=out)
    else:
        print("numpy: %s: x numpy column skipped" % why, file=out)
    for (name, t), r in torch_res.items():
        if r.get("status") == "ok":
            print("torch %s %dt: median %.3f s, min %.3f, max %.3f (%d runs), torch %s, %d threads"
                  % (name, t, r["median_s"], r["min_s"], r["max_s"], r["runs"],
                     r["torch"]["version"], r["torch"]["threads"]), file=out)
        else:
            print("torch %s %dt: %s" % (name, t, r.get("status")), file=out)
    print("", file=out)
    print_table(rows, wmap, pk, numpy_res, out, torch_res)
    print_stages(rows, stage_res, wmap, pk, out)
    scale = scaling(rows, out)
    tg = targets(rows, scale, numpy_res, pk, out)
    tg += targets25(rows, numpy_res, torch_res, stage_res, out, pk)
    tg += targets2314(rows, out)
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"peak": pk, "numpy": {"%s/%dt" % k: v for k, v in numpy_res.items()},
                       "torch": {"%s/%dt" % k: v for k, v in torch_res.items()},
                       "stages": {"%s/%dt" % k: v for k, v in stage_res.items()},
                       "rows": rows, "targets": [{"target": n, "met": ok, "figures": f_}
                                                 for n, ok, f_ in tg]}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
