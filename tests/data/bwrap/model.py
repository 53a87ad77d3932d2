#!/usr/bin/env python3
"""model.py - an independent model of a decode kernel whose block address
is computed in 32-bit signed bytes (bug class block_offset: int32) or
whose block id is kept in 16 bits (block_offset: u16), for
tests/test_diffcase.c.

It shares no code with fragsim's sim/: it reads a golden written by
`fragsim run CASE --emulate-only --out GOLDEN` (golden [inputs, acc]) of
a sparse pool (pool_blocks.npy: the ascending physical ids of the stored
rows of k_cache), recomputes every QK^T tile acc_tiles.npy lists as the
kernel would, and writes DUMP/acc.npy and DUMP/acc_tiles.npy.

The kernel: gfx936 v_mmac_i32_16x16x32_i8, decode rows replicated (row m
of kv head g's tile holds q head g * G + m % G), C entry (lane L, register
e) = row L % 16, key token_base + L / 16 + 4 e. K[key][g][d] is byte
((g * D/16 + d / 16) * BS + key % BS) * 16 + d % 16 of its block, whose
start is blk * B bytes (B = Hkv * D * BS), blk = block_table[s][key /
BS]; a key past the table's blocks loads 0. The three kernels:

  pool   the block's start as it is;
  int32  the start taken modulo 2^32 as a signed 32-bit number: negative
         is an address before the pool (every byte the poison -128),
         otherwise the block it falls in (B divides 2^32 here);
  u16    blk & 0xffff.

A block the pool does not store reads as poison.

usage: model.py GOLDEN DUMP pool|int32|u16
"""
import os
import sys

import numpy as np


def main(golden, dump, kind):
    q = np.load(os.path.join(golden, "q_int8.npy")).astype(np.int64)
    kc = np.load(os.path.join(golden, "k_cache.npy")).astype(np.int64)
    ids = [int(x) for x in np.load(os.path.join(golden, "pool_blocks.npy"))]
    bt = np.load(os.path.join(golden, "block_table.npy"))
    lens = np.load(os.path.join(golden, "context_lens.npy"))
    tiles = np.load(os.path.join(golden, "acc_tiles.npy"))
    _, hkv, d16, bs, _ = kc.shape
    _, _, hq, d = q.shape
    grp = hq // hkv
    blk_bytes = hkv * d * bs
    assert (1 << 32) % blk_bytes == 0
    row_of = {b: m for m, b in enumerate(ids)}      # a dict, not a search
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
                blk = int(bt[s, key // bs])
                if kind == "int32":
                    off = blk * blk_bytes % (1 << 32)
                    blk = -1 if off >= 1 << 31 else off // blk_bytes
                elif kind == "u16":
                    blk &= 0xffff
                m = row_of.get(blk, -1)
                if m < 0:
                    k = np.full(d, -128, np.int64)
                else:
                    k = kc[m, int(g), dims // 16, key % bs, dims % 16]
                acc[t, lane, e] = int((q[s, 0, qh] * k).sum())
    os.makedirs(dump, exist_ok=True)
    np.save(os.path.join(dump, "acc.npy"), acc)
    np.save(os.path.join(dump, "acc_tiles.npy"), tiles.astype(np.int32))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("pool", "int32", "u16"):
        sys.exit("usage: model.py GOLDEN DUMP pool|int32|u16")
    main(*sys.argv[1:])
