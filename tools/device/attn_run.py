#!/usr/bin/env python3
"""attn_run.py GOLDEN_DIR OUT_DIR [--bug page_walk|head_dim_half]

Run the QK^T tiles of a case on real tensor cores (attn_sm80.cu) and
write a dump fragsim diff reads: OUT_DIR/acc.npy [tiles, 32, 4] int32 in
register order, with OUT_DIR/acc_tiles.npy, the tiles run.

GOLDEN_DIR is `fragsim run CASE --emulate-only --out GOLDEN_DIR` of a
case on the sm80-mma-m16n8k32-s8 profile with golden [inputs, acc]: the
device reads its inputs and its tile list, nothing of its results.

nvcc builds attn_sm80.cu for FRAGSIM_NVCC_ARCH (default sm_90, an H100 or
H200; sm_80 for an A100), as probe_run.py does.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = sys.argv[1:]
    bug = ""
    if "--bug" in args:
        i = args.index("--bug")
        bug = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    gold, out = args
    man = json.load(open(os.path.join(gold, "manifest.json")))
    if man["mode"] not in ("decode", "prefill"):
        sys.exit("attn_run: unknown mode")
    q = np.load(os.path.join(gold, "q_int8.npy"))
    kc = np.load(os.path.join(gold, "k_cache.npy"))
    bt = np.load(os.path.join(gold, "block_table.npy"))
    lens = np.load(os.path.join(gold, "context_lens.npy"))
    qpos = np.load(os.path.join(gold, "q_pos.npy"))
    tiles = np.load(os.path.join(gold, "acc_tiles.npy"))
    # (seq, head, row_base, token_base, row_tile): attn_sm80.cu reads the
    # first four; a decode row_tile other than 0 (group > 16) it cannot run
    if man["mode"] == "decode" and tiles.shape[1] > 4 and (tiles[:, 4] != 0).any():
        sys.exit("attn_run: decode groups of more than 16 q heads are not supported")
    tiles4 = np.ascontiguousarray(tiles[:, :4])
    S, T, Hq, D = q.shape
    NB, Hkv, _, BS, _ = kc.shape
    MAXB = bt.shape[1]
    # query tokens of each sequence: q_pos is -1 past a sequence's tokens
    tokens = (qpos >= 0).sum(axis=1).astype(np.int32)
    nblk = (lens + BS - 1) // BS
    seq0 = np.concatenate([[0], np.cumsum(nblk)[:-1]]).astype(np.int32)
    meta = np.array([S, T, Hq, Hkv, D, BS, MAXB, NB, tiles.shape[0],
                     man["mode"] == "prefill"], dtype=np.int32)
    with tempfile.TemporaryDirectory() as tmp:
        for name, a in (("meta.i32", meta), ("q_int8.raw", q), ("k_cache.raw", kc),
                        ("block_table.raw", bt.astype(np.int32)),
                        ("context_lens.raw", lens.astype(np.int32)),
                        ("tokens.raw", tokens), ("seq_block0.raw", seq0),
                        ("acc_tiles.raw", tiles4.astype(np.int32))):
            np.ascontiguousarray(a).tofile(os.path.join(tmp, name))
        exe = os.path.join(tmp, "attn_sm80")
        arch = os.environ.get("FRAGSIM_NVCC_ARCH", "sm_90")
        subprocess.run(["nvcc", "-O2", "-arch=" + arch, "-o", exe,
                        os.path.join(HERE, "attn_sm80.cu")], check=True)
        raw = os.path.join(tmp, "acc.raw")
        subprocess.run([exe, tmp, raw] + ([bug] if bug else []), check=True)
        acc = np.fromfile(raw, dtype=np.int32).reshape(tiles.shape[0], 32, 4)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "acc.npy"), acc)
    np.save(os.path.join(out, "acc_tiles.npy"), tiles.astype(np.int32))
    print("attn_run: wrote %s/acc.npy %s" % (out, acc.shape))


if __name__ == "__main__":
    main()
