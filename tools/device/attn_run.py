#!/usr/bin/env python3
"""attn_run.py GOLDEN_DIR OUT_DIR [--bug page_walk|head_dim_half|p_regroup_none] [--lanemap HEADER]

Build attn_sm80.cu with nvcc and run the QK^T tiles of a case on real
tensor cores; attn_sm80 reads GOLDEN_DIR itself (fragsim_golden.h) and
writes OUT_DIR through fragsim_dump.h: acc.npy [tiles, 32, 4] int32 in
register order, acc_tiles.npy (the tiles run), scores.npy and
manifest.json, a dump `fragsim diff CASE --dump OUT_DIR` reads. A case
with pv: {mode: int8} runs the PV half too (pv_tile.h: mma.m16n8k32 for
PV as well, the case's regroup, lds or v_permuted) and adds p_int8.npy,
p_scale.npy, pv_acc.npy, pv_tiles.npy and out.npy; --bug p_regroup_none
plants INT8 PV's missing exchange (the C registers fed as A).

GOLDEN_DIR is `fragsim run CASE --emulate-only --out GOLDEN_DIR` of a
case on the sm80-mma-m16n8k32-s8 profile with golden [inputs, acc]: the
device reads its inputs and its tile list, nothing of its results.

The kernel's lane map is the header of `fragsim lanemap --isa
sm80-mma-m16n8k32-s8 --format c`, which this script writes with
$FRAGSIM (default: fragsim on the PATH, else build/fragsim of this
checkout). On a machine without fragsim, write the header where fragsim
is and pass it with --lanemap HEADER (any map of the instruction's
shape: the one `fragsim probe solve --yaml` found, say).

nvcc ($NVCC, default nvcc) builds for FRAGSIM_NVCC_ARCH (default sm_90,
an H100 or H200; sm_80 for an A100), as probe_run.py does. Exit status: attn_sm80's (0 written,
2 bad input or usage, 3 the GPU or the write failed); 2 when the header
is missing or not a fragsim lane map, 3 when fragsim or nvcc fails.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ISA = "sm80-mma-m16n8k32-s8"


def fail(msg, status):
    print("attn_run: " + msg, file=sys.stderr)
    return status


def option(args, name):
    """Remove `name VALUE` from args; VALUE, None when absent, False when
    VALUE is missing."""
    if name not in args:
        return None
    i = args.index(name)
    if i + 1 >= len(args):
        return False
    value = args[i + 1]
    del args[i:i + 2]
    return value


def fragsim_binary():
    env = os.environ.get("FRAGSIM")
    if env:
        return env
    on_path = shutil.which("fragsim")
    if on_path:
        return on_path
    return os.path.join(HERE, "..", "..", "build", "fragsim")


def write_header(gen, lanemap):
    """The lane-map header in gen/; (file name, FS_<NAME> prefix) or an
    exit status."""
    if lanemap:
        try:
            with open(lanemap) as f:
                text = f.read()
        except OSError as e:
            return fail("--lanemap %s: %s" % (lanemap, e.strerror), 2)
        src = lanemap
    else:
        cmd = [fragsim_binary(), "lanemap", "--isa", ISA, "--format", "c"]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
        except OSError as e:
            return fail("%s: %s (set FRAGSIM, or pass --lanemap HEADER)"
                        % (cmd[0], e.strerror), 3)
        if p.returncode != 0:
            return fail("%s failed (exit %d)" % (" ".join(cmd), p.returncode), 3)
        text, src = p.stdout, " ".join(cmd)
    m = re.search(r"^#define (FS_[A-Z0-9_]+)_NAME ", text, re.M)
    if not m:
        return fail("%s: not a header of fragsim lanemap --format c" % src, 2)
    name = "fragsim_lanemap_run.h"
    with open(os.path.join(gen, name), "w") as f:
        f.write(text)
    return name, m.group(1)


def main():
    args = sys.argv[1:]
    bug, lanemap = option(args, "--bug"), option(args, "--lanemap")
    if bug is False or lanemap is False or len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gold, out = args
    arch = os.environ.get("FRAGSIM_NVCC_ARCH", "sm_90")
    with tempfile.TemporaryDirectory() as tmp:
        header = write_header(tmp, lanemap)
        if isinstance(header, int):
            return header
        name, upper = header
        exe = os.path.join(tmp, "attn_sm80")
        # -fmad=false: the score recovery is fragsim's separate f32
        # roundings (qk_tile.h), never one fused multiply-add.
        cmd = [os.environ.get("NVCC", "nvcc"), "-O2", "-fmad=false", "-arch=" + arch,
               "-I" + tmp, "-I" + HERE,
               '-DFSQ_LANEMAP="%s"' % name, "-DFSQ_LM=" + upper.lower(),
               "-DFSQ_LMU=" + upper, "-o", exe, os.path.join(HERE, "attn_sm80.cu")]
        try:
            built = subprocess.run(cmd).returncode == 0
        except OSError as e:
            print("attn_run: %s: %s" % (cmd[0], e.strerror), file=sys.stderr)
            built = False
        if not built:
            return fail("nvcc failed", 3)
        return subprocess.run([exe, gold, out] + ([bug] if bug else [])).returncode


if __name__ == "__main__":
    sys.exit(main())
