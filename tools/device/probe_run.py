#!/usr/bin/env python3
"""probe_run.py - answer a fragsim probe plan on an NVIDIA GPU (sm_80+).

    python3 tools/device/probe_run.py PLAN_DIR OUT_DIR

PLAN_DIR is what `fragsim probe plan --isa ISA --out PLAN_DIR` wrote,
ISA sm80-mma-m16n8k32-s8 or sm80-mma-m16n8k16-s8. This script checks the
plan, builds probe_sm80.cu with nvcc (-arch=sm_90 -O2, -DFS_MMA_K=16 for
the k16 shape; set FRAGSIM_NVCC_ARCH=sm_80 for an A100), runs one
mma.sync per wave and writes OUT_DIR/probe_c.npy (int32 [W, 32, 4]) and
OUT_DIR/manifest.json. Then:

    fragsim probe solve --plan PLAN_DIR --dump OUT_DIR --isa ISA

Needs numpy and nvcc only. Exit status: 0 ok, 2 bad input, 3 build or run
failed.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The plans this harness answers: profile -> (K, A, B, C elements a lane).
SHAPES = {"sm80-mma-m16n8k32-s8": (32, 16, 8, 4),
          "sm80-mma-m16n8k16-s8": (16, 8, 4, 4)}
LANES = 32


def fail(msg, status=2):
    print("probe_run: error: " + msg, file=sys.stderr)
    sys.exit(status)


def load_operand(plan, name, waves, elems):
    path = os.path.join(plan, name)
    arr = np.load(path)
    if arr.dtype != np.int8 or arr.shape != (waves, LANES, elems):
        fail("%s: expected int8 %s, found %s %s"
             % (path, [waves, LANES, elems], arr.dtype, list(arr.shape)))
    return np.ascontiguousarray(arr)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    plan, out = argv[1], argv[2]
    try:
        with open(os.path.join(plan, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not a probe plan: %s" % (plan, e))
    isa = manifest.get("isa")
    if manifest.get("fragsim_probe") != 1 or isa not in SHAPES:
        fail("%s: a plan for %r; this harness runs %s"
             % (plan, isa, " and ".join(sorted(SHAPES))))
    K, EA, EB, EC = SHAPES[isa]
    waves = int(manifest["waves"])
    a = load_operand(plan, "probe_a.npy", waves, EA)
    b = load_operand(plan, "probe_b.npy", waves, EB)

    arch = os.environ.get("FRAGSIM_NVCC_ARCH", "sm_90")
    with tempfile.TemporaryDirectory(prefix="fragsim-probe-") as tmp:
        exe = os.path.join(tmp, "probe_sm80")
        paths = [os.path.join(tmp, n) for n in ("a.bin", "b.bin", "c.bin")]
        build = ["nvcc", "-arch=" + arch, "-O2", "-DFS_MMA_K=%d" % K, "-o", exe,
                 os.path.join(HERE, "probe_sm80.cu")]
        if subprocess.run(build).returncode != 0:
            fail("nvcc failed: " + " ".join(build), 3)
        a.tofile(paths[0])  # C order: wave, lane, element = register order
        b.tofile(paths[1])
        run = subprocess.run([exe, str(waves)] + paths,
                             stdout=subprocess.PIPE, universal_newlines=True)
        if run.returncode != 0:
            fail("probe_sm80 exited with %d" % run.returncode, 3)
        c = np.fromfile(paths[2], dtype="<i4")
    if c.size != waves * LANES * EC:
        fail("probe_sm80 wrote %d int32, expected %d" % (c.size, waves * LANES * EC), 3)

    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "probe_c.npy"), c.reshape(waves, LANES, EC))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"fragsim_probe_dump": 1, "device": run.stdout.strip(),
                   "instruction": manifest.get("instruction"), "plan": isa,
                   "nvcc_arch": arch}, f, indent=2)
        f.write("\n")
    print("answered %d waves on %s: %s" % (waves, run.stdout.strip(),
                                           os.path.join(out, "probe_c.npy")))
    print("next: fragsim probe solve --plan %s --dump %s --isa %s" % (plan, out, isa))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
