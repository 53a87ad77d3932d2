#!/usr/bin/env python3
"""model.py - an independent model of a decode kernel with a dense block
offset (bug class block_offset: dense), for tests/test_diffcase.c.

It shares no code with fragsim's sim/: it reads a golden written by
`fragsim run CASE --emulate-only --out GOLDEN` (golden [inputs, acc]),
recomputes every QK^T tile the golden's acc_tiles.npy lists as the
buggy kernel would, and writes DUMP/acc.npy and DUMP/acc_tiles.npy.

The kernel: gfx936 v_mmac_i32_16x16x32_i8, decode rows replicated (row m
of kv head g's tile holds q head g * G + m % G, G <= 16), C entry (lane L,
register e) = row L % 16, key token_base + L / 16 + 4 e. K[key][g][d]
lives in the pool at blk * STRIDE + ((g * D/16 + d / 16) * BS + key % BS)
* 16 + d % 16, blk = block_table[s][key / BS]; a key in a block past the
table's blocks loads 0. The correct kernel takes STRIDE = the pool's
(k_cache.npy [NB, block_stride]); `dense` takes Hkv * D * BS.

usage: model.py GOLDEN DUMP pool|dense
"""
import os
import sys

import numpy as np


def main(golden, dump, kind):
    q = np.load(os.path.join(golden, "q_int8.npy")).astype(np.int64)
    kc = np.load(os.path.join(golden, "k_cache.npy"))
    ks = np.load(os.path.join(golden, "k_scale.npy"))      # [NB, BS, Hkv]
    bt = np.load(os.path.join(golden, "block_table.npy"))
    lens = np.load(os.path.join(golden, "context_lens.npy"))
    tiles = np.load(os.path.join(golden, "acc_tiles.npy"))
    if kc.ndim != 2 or ks.ndim != 3:
        raise SystemExit("model.py: needs a padded pool and per_token_head K scales")
    _, _, hq, d = q.shape
    nb, bs, hkv = ks.shape
    grp = hq // hkv
    stride = kc.shape[1] if kind == "pool" else hkv * d * bs
    pool = kc.reshape(-1).astype(np.int64)
    acc = np.zeros((len(tiles), 64, 4), np.int32)
    dims = np.arange(d)
    for t, (s, g, _, kb, _) in enumerate(tiles):
        nblk = (int(lens[s]) + bs - 1) // bs
        for lane in range(64):
            for e in range(4):
                key = int(kb) + lane // 16 + 4 * e
                if key // bs >= nblk:
                    continue
                qh = int(g) * grp + (lane % 16) % grp
                at = (int(bt[s, key // bs]) * stride +
                      ((int(g) * (d // 16) + dims // 16) * bs + key % bs) * 16 + dims % 16)
                acc[t, lane, e] = int((q[s, 0, qh] * pool[at]).sum())
    os.makedirs(dump, exist_ok=True)
    np.save(os.path.join(dump, "acc.npy"), acc)
    np.save(os.path.join(dump, "acc_tiles.npy"), tiles.astype(np.int32))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("pool", "dense"):
        sys.exit("usage: model.py GOLDEN DUMP pool|dense")
    main(*sys.argv[1:])
