"""fragsim_golden - load a fragsim golden directory in Python, checked.

    import fragsim_golden as fg
    g = fg.load("out")                 # manifest + every tensor, digests checked
    k = fg.gather_k(g, seq=0)          # int8 [context, Hkv, D], logical key order
    ref = fg.reference_out(g)          # float64 [S, T, Hq, D] from the goldens alone
    v = fg.vllm(g)                     # seq_lens, query_start_loc, query [num_tokens, Hq, D], ...

A golden directory is what `fragsim run CASE --out DIR` writes
(docs/formats.md, "The golden directory"): one .npy per tensor, or
golden.safetensors with `--format safetensors`, and manifest.json with
each tensor's dtype, shape and sha256 (of the .npy file, or of the
tensor's data bytes in safetensors). `load` refuses a directory whose
files do not match their manifest, so a device test never compares
against a stale or truncated golden.

Needs numpy; torch is optional (`to_torch`). Nothing here calls fragsim:
the helpers rebuild what a device test needs from the tensors alone, in
the layouts of docs/formats.md:

    k_cache  int8 [NB, Hkv, D/16, BS, 16]    k_scale  f32 [NB, BS, Hkv]
    v_cache  int8 [NB, Hkv, D, BS]           v_scale  f32 [NB, BS, Hkv]
    q_int8   int8 [S, T, Hq, D]              q_scale  f32 [S, T, Hq]
    block_table int32 [S, MAXB] (-1 unused), context_lens int32 [S],
    q_pos int32 [S, T] (key t is visible to a query iff t <= q_pos; -1 pads)
"""

import hashlib
import json
import os
import struct
import sys

import numpy as np

__all__ = ["Golden", "GoldenError", "load", "gather_k", "gather_v",
           "mask", "reference_out", "vllm", "bf16_to_f32", "to_torch"]


class GoldenError(Exception):
    """A golden directory that is not what its manifest says."""


class Golden:
    """manifest: the parsed manifest.json; tensors: name -> numpy array."""

    def __init__(self, path, manifest, tensors):
        self.path = path
        self.manifest = manifest
        self.tensors = tensors

    def __getitem__(self, name):
        return self.tensors[name]

    def __contains__(self, name):
        return name in self.tensors


_ST_DTYPES = {"I8": np.int8, "U8": np.uint8, "I16": np.int16,
              "I32": np.int32, "I64": np.int64, "F16": np.float16,
              "F32": np.float32, "F64": np.float64}


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def bf16_to_f32(u16):
    """BF16 bits (uint16) as float32: numpy has no bfloat16, and a BF16 is
    the top half of the float32 with the same value, so this is exact."""
    return (np.asarray(u16, np.uint16).astype(np.uint32) << 16).view(np.float32)


def _check(path, entry, arr):
    # a BF16 tensor is decoded to float32 (exactly) when loaded
    want = np.float32 if entry["dtype"] == "bfloat16" else np.dtype(entry["dtype"])
    if list(arr.shape) != list(entry["shape"]) or want != arr.dtype:
        raise GoldenError("%s: %s %s, the manifest says %s %s"
                          % (path, arr.dtype, list(arr.shape),
                             entry["dtype"], entry["shape"]))


def _load_npy(path, manifest):
    tensors = {}
    for entry in manifest["files"]:
        name = entry["name"]
        fpath = os.path.join(path, name)
        with open(fpath, "rb") as f:
            data = f.read()
        if _sha256(data) != entry["sha256"]:
            raise GoldenError("%s: sha256 differs from the manifest" % fpath)
        arr = np.load(fpath, allow_pickle=False)
        _check(fpath, entry, arr)
        tensors[name[:-4] if name.endswith(".npy") else name] = arr
    return tensors


def _load_safetensors(path, manifest):
    fpath = os.path.join(path, "golden.safetensors")
    with open(fpath, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise GoldenError("%s: shorter than its header length" % fpath)
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise GoldenError("%s: header runs past the file" % fpath)
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    tensors = {}
    for entry in manifest["files"]:
        name = entry["name"]
        if name not in header:
            raise GoldenError("%s: no tensor '%s'" % (fpath, name))
        h = header[name]
        begin, end = h["data_offsets"]
        raw = data[begin:end]
        if _sha256(raw) != entry["sha256"]:
            raise GoldenError("%s: tensor '%s': sha256 differs from the manifest"
                              % (fpath, name))
        if h["dtype"] == "BF16":
            arr = bf16_to_f32(np.frombuffer(raw, dtype="<u2").reshape(h["shape"]))
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_ST_DTYPES[h["dtype"]]).newbyteorder("<"))
            arr = arr.reshape(h["shape"]).astype(_ST_DTYPES[h["dtype"]])
        _check("%s:%s" % (fpath, name), entry, arr)
        tensors[name] = arr
    return tensors


def load(path):
    """The golden directory at path: a Golden whose tensors are checked
    against manifest.json (dtype, shape, sha256). Raises GoldenError."""
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise GoldenError("%s: no readable manifest.json: %s" % (path, e))
    if manifest.get("tool") != "fragsim" or "files" not in manifest:
        raise GoldenError("%s: not a fragsim golden directory" % path)
    if manifest.get("format", "npy") == "safetensors":
        tensors = _load_safetensors(path, manifest)
    else:
        tensors = _load_npy(path, manifest)
    return Golden(path, manifest, tensors)


def _need(g, *names):
    for n in names:
        if n not in g:
            raise GoldenError("%s: no '%s' (the case's golden: list must "
                              "include inputs)" % (g.path, n))


def gather_k(g, seq):
    """Sequence seq's K cache in logical key order: int8 [context, Hkv, D],
    and its scale f32 [context, Hkv] (per_token_head K scales)."""
    _need(g, "k_cache", "k_scale", "block_table", "context_lens")
    kc = g["k_cache"]
    if kc.ndim != 5:
        raise NotImplementedError("gather_k: cache.block_stride (a padded pool, "
                                  "k_cache [NB, block_stride]) is not read here")
    nb, hkv, d16, bs, _ = kc.shape
    ctx = int(g["context_lens"][seq])
    t = np.arange(ctx)
    blocks = g["block_table"][seq][t // bs]
    slots = t % bs
    # [ctx, Hkv, D/16, 16] -> [ctx, Hkv, D]
    k = kc[blocks, :, :, slots, :].reshape(ctx, hkv, d16 * 16)
    ks = g["k_scale"]
    scale = ks[blocks, slots, :] if ks.ndim == 3 else None
    return k, scale


def gather_v(g, seq):
    """Sequence seq's V in logical key order, [context, Hkv, D]: int8 with
    its f32 [context, Hkv] scale, or (bf16/f32 caches) float with None."""
    _need(g, "v_cache", "block_table", "context_lens")
    vc = g["v_cache"]
    if vc.ndim != 4:
        raise NotImplementedError("gather_v: cache.block_stride (a padded pool, "
                                  "v_cache [NB, block_stride]) is not read here")
    bs = vc.shape[3]
    ctx = int(g["context_lens"][seq])
    t = np.arange(ctx)
    blocks = g["block_table"][seq][t // bs]
    slots = t % bs
    v = vc[blocks, :, :, slots]            # [ctx, Hkv, D]
    scale = g["v_scale"][blocks, slots, :] if "v_scale" in g else None
    return v, scale


def mask(g, seq):
    """bool [T, context]: query token j of sequence seq sees key t iff
    t <= q_pos[seq, j] (causal within a chunk, and the tail of the
    context); padded query tokens (q_pos -1) see nothing."""
    _need(g, "q_pos", "context_lens")
    ctx = int(g["context_lens"][seq])
    qpos = g["q_pos"][seq].astype(np.int64)
    return np.arange(ctx)[None, :] <= qpos[:, None]


def _plain_case(g):
    text = g.manifest.get("case_yaml", "")
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("alibi:") and s.split(":", 1)[1].strip() == "true":
            raise NotImplementedError("reference_out: ALiBi cases are not rebuilt here")
        if s.startswith("soft_cap:") and float(s.split(":", 1)[1].split("#")[0]) != 0:
            raise NotImplementedError("reference_out: soft-capped cases are not rebuilt here")
        if s.startswith("k_scale:") and "per_token_head" not in s:
            raise NotImplementedError("reference_out: only per_token_head K scales")


def reference_out(g):
    """The attention output recomputed in float64 from the quantized
    goldens (Q int8 x its scale, K and V dequantized, softmax_scale from
    the manifest, the visibility mask): [S, T, Hq, D]. What a device test
    compares its kernel's out with, besides out.npy itself."""
    _need(g, "q_int8", "q_scale")
    _plain_case(g)
    q = g["q_int8"].astype(np.float64) * g["q_scale"][..., None]
    s_, t_, hq, d = q.shape
    scale = float(g.manifest["softmax_scale"])
    out = np.zeros((s_, t_, hq, d))
    for s in range(s_):
        k, ks = gather_k(g, s)
        v, vs = gather_v(g, s)
        kf = k.astype(np.float64) * ks[..., None]
        vf = v.astype(np.float64) * (vs[..., None] if vs is not None else 1.0)
        hkv = kf.shape[1]
        group = hq // hkv
        vis = mask(g, s)
        for h in range(hq):
            kh, vh = kf[:, h // group, :], vf[:, h // group, :]
            sc = q[s, :, h, :] @ kh.T * scale          # [T, ctx]
            sc = np.where(vis, sc, -np.inf)
            m = sc.max(axis=1, keepdims=True)
            m = np.where(np.isfinite(m), m, 0.0)
            p = np.exp(sc - m)
            l = p.sum(axis=1, keepdims=True)
            out[s, :, h, :] = np.where(l > 0, (p @ vh) / np.where(l > 0, l, 1), 0.0)
    return out


def vllm(g):
    """The goldens in vLLM's names (the manifest's "vllm" object,
    docs/formats.md): seq_lens int32 [S], block_tables int32 [S, MAXB],
    query_start_loc int32 [S+1], query and output float32
    [num_tokens, Hq, D] (the tokens with q_pos >= 0, in sequence order;
    output only when out was written), and slot_mapping int64
    [num_tokens]: the cache slot block * block_size + offset of each
    query token's own key (vLLM's reshape_and_cache input)."""
    _need(g, "q", "q_pos", "context_lens", "block_table", "k_cache")
    v = g.manifest.get("vllm")
    if v is None:
        raise GoldenError("%s: the manifest has no vllm object (fragsim < 0.2.0?)"
                          % g.path)
    real = g["q_pos"] >= 0                          # [S, T]
    res = {"seq_lens": g[v["seq_lens"]], "block_tables": g[v["block_tables"]],
           "query_start_loc": np.asarray(v["query_start_loc"], np.int32)}
    for key in ("query", "output"):
        if key in v:
            res[key] = np.ascontiguousarray(g[v[key]["from"]][real], np.float32)
    bs = g["k_cache"].shape[3]
    s_idx, t_idx = np.nonzero(real)
    pos = g["q_pos"][s_idx, t_idx].astype(np.int64)
    res["slot_mapping"] = (g["block_table"][s_idx, pos // bs].astype(np.int64) * bs
                           + pos % bs)
    return res


def to_torch(arr, device="cpu"):
    """A tensor as torch (import deferred: torch is optional)."""
    import torch
    return torch.from_numpy(np.ascontiguousarray(arr)).to(device)


def main(argv):
    """python3 fragsim_golden.py DIR: check DIR, print its tensors and how
    far out.npy is from the float64 attention rebuilt from the inputs."""
    if len(argv) != 2:
        print("usage: fragsim_golden.py DIR", file=sys.stderr)
        return 2
    try:
        g = load(argv[1])
    except GoldenError as e:
        print("fragsim_golden: error: %s" % e, file=sys.stderr)
        return 1
    print("%s: %s, %d tensors, digests match" % (argv[1], g.manifest.get("case"),
                                                len(g.tensors)))
    for name in sorted(g.tensors):
        a = g[name]
        print("  %-14s %-8s %s" % (name, a.dtype, list(a.shape)))
    if "out" in g and "q_int8" in g:
        try:
            err = float(np.abs(reference_out(g) - g["out"]).max())
            print("out vs the float64 attention of the inputs: max |diff| %.2g" % err)
        except NotImplementedError as e:
            print("out not rebuilt: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
