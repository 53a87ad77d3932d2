#!/usr/bin/env python3
"""probe_run.py - answer a fragsim probe plan on an NVIDIA GPU (sm_80+).

    python3 tools/device/probe_run.py PLAN_DIR OUT_DIR

PLAN_DIR is what `fragsim probe plan --isa sm80-mma-m16n8k32-s8 --out
PLAN_DIR` wrote. This script checks the plan, builds probe_sm80.cu with
nvcc (-arch=sm_90 -O2; set FRAGSIM_NVCC_ARCH=sm_80 for an A100), runs one
mma.sync per wave and writes OUT_DIR/probe_c.npy (int32 [W, 32, 4]) and
OUT_DIR/manifest.json. Then:

    fragsim probe solve --plan PLAN_DIR --dump OUT_DIR --isa sm80-mma-m16n8k32-s8

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
ISA = "sm80-mma-m16n8k32-s8"
LANES, EA, EB, EC = 32, 16, 8, 4  # per lane: A, B, C elements (the profile's)


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
    if manifest.get("fragsim_probe") != 1 or manifest.get("isa") != ISA:
        fail("%s: a plan for %r; this harness runs %s"
             % (plan, manifest.get("isa"), ISA))
    waves = int(manifest["waves"])
    a = load_operand(plan, "probe_a.npy", waves, EA)
    b = load_operand(plan, "probe_b.npy", waves, EB)

    arch = os.environ.get("FRAGSIM_NVCC_ARCH", "sm_90")
    with tempfile.TemporaryDirectory(prefix="fragsim-probe-") as tmp:
        exe = os.path.join(tmp, "probe_sm80")
        paths = [os.path.join(tmp, n) for n in ("a.bin", "b.bin", "c.bin")]
        build = ["nvcc", "-arch=" + arch, "-O2", "-o", exe,
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
                   "instruction": manifest.get("instruction"), "plan": ISA,
                   "nvcc_arch": arch}, f, indent=2)
        f.write("\n")
    print("answered %d waves on %s: %s" % (waves, run.stdout.strip(),
                                           os.path.join(out, "probe_c.npy")))
    print("next: fragsim probe solve --plan %s --dump %s --isa %s" % (plan, out, ISA))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
