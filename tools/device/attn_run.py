#!/usr/bin/env python3
"""attn_run.py GOLDEN_DIR OUT_DIR [--bug page_walk|head_dim_half]

Build attn_sm80.cu with nvcc and run the QK^T tiles of a case on real
tensor cores; attn_sm80 reads GOLDEN_DIR itself (fragsim_golden.h) and
writes OUT_DIR through fragsim_dump.h: acc.npy [tiles, 32, 4] int32 in
register order, acc_tiles.npy (the tiles run), scores.npy and
manifest.json, a dump `fragsim diff CASE --dump OUT_DIR` reads.

GOLDEN_DIR is `fragsim run CASE --emulate-only --out GOLDEN_DIR` of a
case on the sm80-mma-m16n8k32-s8 profile with golden [inputs, acc]: the
device reads its inputs and its tile list, nothing of its results.

nvcc builds for FRAGSIM_NVCC_ARCH (default sm_90, an H100 or H200; sm_80
for an A100), as probe_run.py does. Exit status: attn_sm80's (0 written,
2 bad input or usage, 3 the GPU or the write failed); 3 when nvcc fails.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = sys.argv[1:]
    bug = []
    if "--bug" in args:
        i = args.index("--bug")
        if i + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        bug = [args[i + 1]]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gold, out = args
    arch = os.environ.get("FRAGSIM_NVCC_ARCH", "sm_90")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "attn_sm80")
        cmd = ["nvcc", "-O2", "-arch=" + arch, "-I" + HERE, "-o", exe,
               os.path.join(HERE, "attn_sm80.cu")]
        try:
            built = subprocess.run(cmd).returncode == 0
        except OSError as e:
            print("attn_run: %s: %s" % (cmd[0], e), file=sys.stderr)
            built = False
        if not built:
            print("attn_run: nvcc failed", file=sys.stderr)
            return 3
        return subprocess.run([exe, gold, out] + bug).returncode


if __name__ == "__main__":
    sys.exit(main())
