#!/usr/bin/env python3
"""fragsim_gen.py - fragsim's input generator in numpy, bit for bit
(docs/generator.md is the definition; sim/common/gen.c and sim/attn/inputs.c the C).

A device test in Python can rebuild a case's logical Q, K and V from the
case alone, without reading fragsim's golden files:

    import fragsim_gen as fg
    case = fg.load_case("decode.shown.yaml")   # `fragsim show case.yaml`
    q = fg.logical(case, "q")                  # [S, T, Hq, D] float32
    k = fg.logical(case, "k")                  # [S, MAXCTX, Hkv, D]

and check that it did so against a golden directory (`fragsim run CASE
--out DIR`, golden `inputs`):

    fragsim show case.yaml > shown.yaml
    python3 fragsim_gen.py check shown.yaml DIR

which compares q.npy exactly, and K and V through the int8 caches (the
logical K and V are not golden files): the regenerated rows quantized
per (token, head) with fragsim's absmax quantizer must give k_cache,
k_scale, v_cache and v_scale exactly (a bf16 or f32 V cache holds the
rows as they are, BF16-exact, with no v_scale; with cache.v_scale
per_channel, V is quantized per (kv head, dim) by the absmax over every
valid token, and v_scale [Hkv, D] compared too). Exit 0 equal, 1 different, 2 bad
usage or a case this checker does not cover: CASE_KEYS declares every
case key as applied, irrelevant to the inputs, or refused (K scales
other than per_token_head, a tensor read from .npy), and a key it does
not know is refused by name too (tests/python/test_keys.py walks
docs/case-keys.md against it).

Only integer operations and IEEE float32 operations are used, each
rounded once, as in the C (which builds with -ffp-contract=off).
"""
import sys

import numpy as np

from fragsim_golden import APPLIED, IRRELEVANT, REFUSED, Refused, check_case

M64 = (1 << 64) - 1
STREAM = {"q": 1, "k": 2, "v": 3}
SEED_ADD = 0x243F6A8885A308D3
STREAM_MUL = 0xD1B54A32D192ED03
STREAM_ADD = 0x13198A2E03707344
GOLDEN = 0x9E3779B97F4A7C15
W_STEP = 0x9E3779B9
CHOICE = 1 << 63
SQRT3 = 1.7320508075688772935274463415058723
NORMAL_K = np.float32(SQRT3 * 2.0 ** -16)   # float(sqrt(3) * 2^-16)


# ---- 64-bit keys (Python integers, masked) --------------------------------

def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def gen_key(seed, stream):
    ks = mix64((seed + SEED_ADD) & M64)
    return mix64(ks ^ ((stream * STREAM_MUL + STREAM_ADD) & M64))


def u64_key(key, index):
    x = mix64((key + index * GOLDEN) & M64)
    return mix64(x ^ (((key << 32) | (key >> 32)) & M64))


def row_key(seed, stream, seq, token, head):
    k = gen_key(seed, stream)
    return u64_key(u64_key(u64_key(k, seq), token), head)


# ---- 32-bit element words (numpy uint32, wrapping) --------------------------

def h32(x):
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> np.uint32(16))


def words(key, j):
    """w(j) of the row with key `key`, j a uint32 array."""
    a = np.uint32(key & 0xFFFFFFFF)
    b = np.uint32(key >> 32)
    return h32(h32(a + j * np.uint32(W_STEP)) ^ b)


def draws(key, n, dist):
    """g_0 .. g_{n-1} of the row, float32."""
    d = np.arange(n, dtype=np.uint32)
    with np.errstate(over="ignore"):
        w0 = words(key, np.uint32(2) * d)
        if dist == "uniform":
            return (w0 >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -23) \
                - np.float32(1.0)
        if dist == "sign":
            return np.where(w0 >> np.uint32(31), np.float32(1.0), np.float32(-1.0))
        w1 = words(key, np.uint32(2) * d + np.uint32(1))
    m = np.uint32(0xFFFF)
    s = ((w0 & m).astype(np.int64) + (w0 >> np.uint32(16)) + (w1 & m) +
         (w1 >> np.uint32(16)) - 131070)
    return s.astype(np.float32) * NORMAL_K


def bf16(x):
    """Round float32 to BF16, nearest even (finite values)."""
    u = np.atleast_1d(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)
    one, low = np.uint64(1), np.uint64(0x7FFF)
    u = (u + low + ((u >> np.uint64(16)) & one)) & np.uint64(0xFFFF0000)
    return u.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def row(seed, spec, tensor, s, r, h, D):
    """Logical row (sequence s, row r, head h) of tensor 'q', 'k' or 'v'."""
    key = row_key(seed, STREAM[tensor], s, r, h)
    mean = np.float32(spec["mean"])
    scale = np.float32(spec["scale"])
    if spec["zero_rows"] > 0 or spec["constant_rows"] > 0:
        choice = u64_key(key, CHOICE)
        if (choice >> 32) * 2.0 ** -32 < spec["zero_rows"]:
            return np.zeros(D, np.float32)
        if (choice & 0xFFFFFFFF) * 2.0 ** -32 < spec["constant_rows"]:
            g0 = draws(key, 1, spec["dist"])[0]
            return np.full(D, bf16(mean + scale * g0), np.float32)
    mult = np.ones(D, np.float32)
    for ch in spec["outlier_channels"]:
        mult[ch] = np.float32(spec["outlier_scale"])
    return bf16((mean + scale * draws(key, D, spec["dist"])) * mult)


# ---- a case ---------------------------------------------------------------

# What check() does with each case key (fragsim_golden.py's CASE_KEYS has
# the form): the inputs depend on the data, quant, shape and sequence
# keys, which it applies; the rest change no input tensor.
_NOT_INPUT = "changes no input tensor"
CASE_KEYS = {k: (IRRELEVANT, _NOT_INPUT, None) for k in (
    "fragsim", "name", "description", "isa", "route", "expect",
    "model.softmax_scale", "model.sliding_window", "model.alibi", "model.soft_cap",
    "cache.shuffle_cache", "split_k.segment",
    "kernel.c_columns", "kernel.operand_order", "kernel.head_dim_loaded",
    "kernel.scale_recovery", "kernel.k_scale_index", "kernel.gqa_map",
    "kernel.tail_mask", "kernel.page_walk", "kernel.transpose", "kernel.q_position",
    "kernel.split_merge", "kernel.decode_rows",
    "kernel.pv_mask", "kernel.mask_value", "kernel.window_edge",
    "kernel.soft_cap_apply", "kernel.alibi_bias", "kernel.exp_base",
    "kernel.block_offset", "kernel.k_scale_walk", "kernel.v_page_walk",
    "kernel.block_size_assumed", "kernel.operand_load", "kernel.c_rows",
    "pv.mode", "pv.regroup", "kernel.p_regroup", "kernel.pv_group_max",
    "kernel.v_scale_apply", "kernel.p_scale_index", "kernel.pv_rescale",
    "check.out_cosine_min", "check.out_max_abs_max", "check.score_max_abs_max",
    "check.score_nmse_max", "check.kld_mean_max", "check.kld_median_max",
    "check.kld_p99_max", "check.top1_min", "check.rms_dp_max", "check.buckets")}
CASE_KEYS.update({
    "golden": (IRRELEVANT, "which files exist; check needs the inputs group", None),
    "cache.num_blocks": (IRRELEVANT, "read from the golden's block_table", None),
    "cache.spare_blocks": (IRRELEVANT, "read from the golden's block_table", None),
    "cache.placement": (IRRELEVANT, "read from the golden's block_table", None),
    "sequences.blocks": (IRRELEVANT, "read from the golden's block_table", None),
    "mode": (APPLIED, "seq_rows: decode context/tokens, prefill history/chunk", None),
    "model.q_heads": (APPLIED, "logical q's heads", None),
    "model.kv_heads": (APPLIED, "logical k and v's heads", None),
    "model.head_dim": (APPLIED, "every row's length", None),
    "cache.block_size": (APPLIED, "where key j lives", None),
    "cache.k_scale": (REFUSED, "the check quantizes K per (token, head) only",
                      {"per_token_head"}),
    "cache.block_stride": (REFUSED, "the check lays out a dense pool",
                           lambda v, c: not v),
    "cache.window_blocks": (REFUSED, "the check writes every key's block; "
                            "freed ones (-1 entries) are not", {"keep"}),
    "cache.v_scale": (APPLIED, "check: per_token_head quantizes V per (token, "
                      "head), per_channel per (head, dim) over every valid "
                      "token", None),
    "cache.v_dtype": (REFUSED, "int8: quantized per (token, head); bf16, f32: "
                      "the rows as stored; q8_0 and q4_0 blocks are not rebuilt",
                      {"int8", "bf16", "f32"}),
    "sequences.context": (APPLIED, "keys generated", None),
    "sequences.tokens": (APPLIED, "query tokens generated", None),
    "sequences.history": (APPLIED, "keys generated", None),
    "sequences.chunk": (APPLIED, "query tokens generated", None),
    "quant.rounding": (APPLIED, "quantize", None),
    "quant.clip": (APPLIED, "quantize", None),
    "data.seed": (APPLIED, "row_key", None),
    "data.*.dist": (APPLIED, "draws", None),
    "data.*.scale": (APPLIED, "row", None),
    "data.*.mean": (APPLIED, "row", None),
    "data.*.zero_rows": (APPLIED, "row", None),
    "data.*.constant_rows": (APPLIED, "row", None),
    "data.*.outlier_channels": (APPLIED, "row", None),
    "data.*.outlier_scale": (APPLIED, "row", None),
    "data.*.npy": (REFUSED, "a tensor read from a file is not generated", {""}),
})

def load_case(path):
    """The case as `fragsim show` prints it (every default filled in)."""
    import yaml
    with open(path) as f:
        return yaml.safe_load(f)


def seq_rows(case):
    """[(tokens, context)] per sequence."""
    out = []
    for sq in case["sequences"]:
        if "chunk" in sq:
            out.append((sq["chunk"], sq["history"] + sq["chunk"]))
        else:
            out.append((sq.get("tokens", 1), sq["context"]))
    return out


def logical(case, tensor):
    """Logical tensor: q [S, T, Hq, D], k and v [S, MAXCTX, Hkv, D];
    rows past a sequence's tokens or context are 0."""
    m, seed = case["model"], case["data"]["seed"]
    spec = case["data"][tensor]
    if "npy" in spec:
        raise ValueError(f"data.{tensor} is read from {spec['npy']}, not generated")
    rows = seq_rows(case)
    H = m["q_heads"] if tensor == "q" else m["kv_heads"]
    valid = [t if tensor == "q" else c for t, c in rows]
    x = np.zeros((len(rows), max(valid), H, m["head_dim"]), np.float32)
    for s, n in enumerate(valid):
        for r in range(n):
            for h in range(H):
                x[s, r, h] = row(seed, spec, tensor, s, r, h, m["head_dim"])
    return x


def quantize(x, clip, even, scale=None):
    """fragsim's absmax quantizer of one row (sim/attn/quant.c): scale =
    absmax / clip, q = round(x / scale), clamped to +-clip. With scale
    given (an array, one per element: V per channel), x / scale[i], and
    an element whose scale is 0 stores 0."""
    zero = None
    if scale is None:
        scale = np.float32(np.abs(x).max()) / np.float32(clip)
        if scale == 0:
            return np.zeros(x.shape, np.int8), scale
    else:
        zero = scale == 0
        scale = np.where(zero, np.float32(1), scale).astype(np.float32)
    v = np.clip(x / scale, -np.float32(clip + 1), np.float32(clip + 1))
    t = np.trunc(v)
    frac = v - t
    odd = (t.astype(np.int32) & 1) != 0
    if even:
        up = (frac > 0.5) | ((frac == 0.5) & odd)
        down = (frac < -0.5) | ((frac == -0.5) & odd)
    else:
        up, down = frac >= 0.5, frac <= -0.5
    q = t.astype(np.int32) + up.astype(np.int32) - down.astype(np.int32)
    q = np.clip(q, -clip, clip).astype(np.int8)
    return (q if zero is None else np.where(zero, 0, q).astype(np.int8)), scale


def channel_scales(case, v, clip):
    """V per channel (cache.v_scale: per_channel): f32 [Hkv, D], the
    absmax over every valid token of every sequence of each kv head and
    dim, / clip (sim/attn/inputs.c's v_chan_scales); rows past a context
    are 0 in v, so they change no max."""
    amax = np.abs(v).max(axis=(0, 1)) if v.size else np.zeros(v.shape[2:], np.float32)
    return (amax.astype(np.float32) / np.float32(clip)).astype(np.float32)


def check(case, golden):
    """Compare regenerated inputs with golden dir; list of failures."""
    check_case(case, CASE_KEYS, "fragsim_gen.py")
    cache = case["cache"]
    vint8 = cache["v_dtype"] == "int8"
    if cache.get("block_stride", 0):
        raise ValueError("cache.block_stride: the check covers dense pools only")
    bad = []
    q = logical(case, "q")
    gq = np.load(f"{golden}/q.npy")
    if q.shape != gq.shape or q.view(np.uint32).tobytes() != gq.view(np.uint32).tobytes():
        bad.append("q")
    clip, even = case["quant"]["clip"], case["quant"]["rounding"] == "half_to_even"
    table = np.load(f"{golden}/block_table.npy")
    kc, ks = np.load(f"{golden}/k_cache.npy"), np.load(f"{golden}/k_scale.npy")
    vc = np.load(f"{golden}/v_cache.npy")
    vs = np.load(f"{golden}/v_scale.npy") if vint8 else None
    BS, D = cache["block_size"], case["model"]["head_dim"]
    k, v = logical(case, "k"), logical(case, "v")
    chan = vint8 and cache.get("v_scale", "per_token_head") == "per_channel"
    if chan:
        vsc = channel_scales(case, v, clip)
        if vs.shape != vsc.shape or vs.view(np.uint32).tobytes() != vsc.view(np.uint32).tobytes():
            bad.append("v_scale")
    for s, (_, ctx) in enumerate(seq_rows(case)):
        for j in range(ctx):
            blk, slot = table[s, j // BS], j % BS
            for h in range(case["model"]["kv_heads"]):
                kq, ksc = quantize(k[s, j, h], clip, even)
                if not (np.array_equal(kc[blk, h, :, slot, :].reshape(D), kq) and
                        ks[blk, slot, h].view(np.uint32) == np.float32(ksc).view(np.uint32)):
                    bad.append(f"k[{s}][{j}][{h}]")
                if chan:
                    vq, _ = quantize(v[s, j, h], clip, even, vsc[h])
                    same = np.array_equal(vc[blk, h, :, slot], vq)
                elif vint8:
                    vq, vsc = quantize(v[s, j, h], clip, even)
                    same = (np.array_equal(vc[blk, h, :, slot], vq) and
                            vs[blk, slot, h].view(np.uint32) == np.float32(vsc).view(np.uint32))
                else:   # bf16 and f32 caches hold the (BF16-exact) rows as f32
                    same = (vc.dtype == np.float32 and
                            vc[blk, h, :, slot].view(np.uint32).tobytes() ==
                            v[s, j, h].view(np.uint32).tobytes())
                if not same:
                    bad.append(f"v[{s}][{j}][{h}]")
    return bad, q.size + k.size + v.size


def main(argv):
    if len(argv) != 4 or argv[1] != "check":
        print("usage: fragsim_gen.py check SHOWN_CASE.yaml GOLDEN_DIR", file=sys.stderr)
        return 2
    try:
        bad, n = check(load_case(argv[2]), argv[3])
    except (OSError, ValueError, KeyError, TypeError, Refused) as e:
        print(f"fragsim_gen.py: error: {e}", file=sys.stderr)
        return 2
    if bad:
        print(f"{len(bad)} rows differ, first: {', '.join(bad[:5])}")
        return 1
    print(f"q, k, v: {n} values regenerated, caches and q equal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
