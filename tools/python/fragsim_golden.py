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
the helpers rebuild what a device test needs from the tensors and the
case in the manifest alone, in the layouts of docs/formats.md:

    k_cache  int8 [NB, Hkv, D/16, BS, 16]    k_scale  f32 [NB, BS, Hkv]
             (per_block32: f16 [NB, BS, Hkv, D/32]; per_tensor: f32 [1])
    v_cache  int8 [NB, Hkv, D, BS]           v_scale  f32 [NB, BS, Hkv]
             (v_scale per_channel: f32 [Hkv, D], one static scale per
             kv head and dim; v_dtype bf16 or f32: f32 [NB, Hkv, D, BS],
             no v_scale)
    q_int8   int8 [S, T, Hq, D]              q_scale  f32 [S, T, Hq]
    block_table int32 [S, MAXB] (-1 unused), context_lens int32 [S],
    q_pos int32 [S, T] (key t is visible to a query at position p iff
    t <= p and, with a sliding window W, t > p - W; -1 pads)

No case key is ignored: CASE_KEYS declares each key of the case schema
(`fragsim show --schema`) as applied by these helpers, irrelevant to
them, or refused, and the helpers that read the case (mask,
reference_out, vllm) check the golden's case (the manifest's case_yaml, as
`fragsim show` prints it) against it first: a key that is unknown here
(a newer fragsim's), or a refused value, raises Refused naming the key.
tests/python/test_keys.py walks docs/case-keys.md's rows against it.
"""

import hashlib
import json
import os
import re
import struct
import sys

import numpy as np

__all__ = ["Golden", "GoldenError", "Refused", "CASE_KEYS", "load", "case",
           "check_case", "gather_k", "gather_v", "dequant_k", "mask",
           "alibi_slope", "reference_out", "vllm", "bf16_to_f32", "to_torch"]


class GoldenError(Exception):
    """A golden directory that is not what its manifest says."""


class Refused(NotImplementedError):
    """A case with a key (or a key's value) the helpers do not implement;
    the message starts with the key's path."""


# How the helpers treat each case key (the paths of docs/case-keys.md:
# sequences.x is a key of each sequence, data.*.x of data.q, data.k and
# data.v). APPLIED: the helpers implement it; IRRELEVANT: it changes
# nothing they compute (what it does reaches them through the tensors,
# or not at all); REFUSED: only the values in `ok` are accepted, any other
# raises Refused. A key missing here is refused too, so a key added to
# fragsim later is never silently ignored (tests/python/test_keys.py
# fails until it is declared).
APPLIED, IRRELEVANT, REFUSED = "applied", "irrelevant", "refused"


def _kernel(ok, bug):
    return (REFUSED, "a planted bug (%s): out is the buggy kernel's, and "
            "reference_out rebuilds only the correct attention" % bug, ok)


CASE_KEYS = {
    "fragsim": (IRRELEVANT, "the schema version", None),
    "name": (IRRELEVANT, "a name", None),
    "description": (IRRELEVANT, "free text", None),
    "isa": (IRRELEVANT, "the lane maps: only acc's register order", None),
    "mode": (IRRELEVANT, "in the tensors: q_pos holds each query's position", None),
    "route": (IRRELEVANT, "a verdict, no tensor", None),
    "expect": (IRRELEVANT, "mismatch writes no goldens", None),
    "golden": (IRRELEVANT, "which files exist; a helper missing one says so", None),
    "model.q_heads": (IRRELEVANT, "in the tensors' shapes", None),
    "model.kv_heads": (IRRELEVANT, "in the tensors' shapes (GQA group Hq / Hkv)", None),
    "model.head_dim": (IRRELEVANT, "in the tensors' shapes", None),
    "model.softmax_scale": (APPLIED, "reference_out: the manifest's softmax_scale", None),
    "model.sliding_window": (APPLIED, "mask: a query at position p sees keys "
                             "p-W+1 .. p", None),
    "model.alibi": (APPLIED, "reference_out: + alibi_slope(q head) * (key - p), "
                    "after the soft cap", None),
    "model.soft_cap": (APPLIED, "reference_out: cap * tanh(score / cap)", None),
    "cache.block_size": (IRRELEVANT, "in the caches' shapes", None),
    "cache.num_blocks": (IRRELEVANT, "in the caches' shapes", None),
    "cache.spare_blocks": (IRRELEVANT, "in the caches' shapes", None),
    "cache.placement": (IRRELEVANT, "in the tensors: block_table", None),
    "cache.k_scale": (REFUSED, "gather_k and dequant_k read per_token_head, "
                      "per_block32 and per_tensor scales", {"per_token_head",
                                                            "per_block32", "per_tensor"}),
    "cache.block_stride": (REFUSED, "a padded pool: gather_k and gather_v "
                           "read a dense one", lambda v, c: not v),
    "cache.v_dtype": (REFUSED, "gather_v: int8 with v_scale, bf16 and f32 as "
                      "stored; q8_0 and q4_0 (fp16 scales per 32 dims) are not "
                      "dequantized here", {"int8", "bf16", "f32"}),
    "cache.v_scale": (APPLIED, "gather_v: per_channel's v_scale [Hkv, D], "
                      "one scale per kv head and dim for every key", None),
    "cache.window_blocks": (REFUSED, "freed blocks (block_table -1 inside a "
                            "context): gather_k and gather_v read every key's "
                            "block", {"keep"}),
    "cache.shuffle_cache": (IRRELEVANT, "a route verdict; the goldens keep "
                            "the plain paged layout", None),
    "sequences.context": (IRRELEVANT, "in the tensors: context_lens", None),
    "sequences.tokens": (IRRELEVANT, "in the tensors: q_pos", None),
    "sequences.history": (IRRELEVANT, "in the tensors: context_lens, q_pos", None),
    "sequences.chunk": (IRRELEVANT, "in the tensors: q_pos", None),
    "sequences.blocks": (IRRELEVANT, "in the tensors: block_table", None),
    "quant.rounding": (IRRELEVANT, "in the tensors: the int8 values", None),
    "quant.clip": (IRRELEVANT, "in the tensors: the int8 values and scales", None),
    "split_k.segment": (IRRELEVANT, "how out is computed, not what it is: "
                        "the rebuild is the unsplit attention", None),
    "kernel.c_columns": _kernel({"profile"}, "c_columns"),
    "kernel.operand_order": _kernel({"qk"}, "operand_order"),
    "kernel.head_dim_loaded": _kernel(lambda v, c: v == "all" or
                                      v == c["model"]["head_dim"], "head_dim_loaded"),
    "kernel.scale_recovery": _kernel({"before_softmax"}, "scale_recovery"),
    "kernel.k_scale_index": _kernel({"per_token"}, "k_scale_index"),
    "kernel.gqa_map": _kernel({"divide"}, "gqa_map"),
    "kernel.tail_mask": _kernel({"column"}, "tail_mask"),
    "kernel.page_walk": _kernel({"block_table"}, "page_walk"),
    "kernel.transpose": _kernel({"profile"}, "transpose"),
    "kernel.q_position": _kernel({"absolute"}, "q_position"),
    "kernel.split_merge": _kernel({"rescale"}, "split_merge"),
    "kernel.pv_mask": _kernel({"correct"}, "pv_mask"),
    "kernel.mask_value": _kernel({"correct"}, "mask_value"),
    "kernel.window_edge": _kernel({"correct"}, "window_edge"),
    "kernel.soft_cap_apply": _kernel({"correct"}, "soft_cap_apply"),
    "kernel.alibi_bias": _kernel({"correct"}, "alibi_bias"),
    "kernel.exp_base": _kernel({"correct"}, "exp_base"),
    "kernel.block_offset": _kernel({"pool"}, "block_offset"),
    "kernel.k_scale_walk": _kernel({"block_table"}, "k_scale_walk"),
    "kernel.v_page_walk": _kernel({"block_table"}, "v_page_walk"),
    "kernel.block_size_assumed": _kernel({"cache"}, "block_size_assumed"),
    "kernel.operand_load": _kernel({"direct"}, "operand_load"),
    "kernel.c_rows": _kernel({"profile"}, "c_rows"),
    "kernel.p_regroup": _kernel({"exchanged"}, "p_regroup"),
    "kernel.pv_group_max": _kernel({"per_group"}, "pv_group_max"),
    "kernel.v_scale_apply": _kernel({"folded"}, "v_scale_apply"),
    "kernel.p_scale_index": _kernel({"per_row"}, "p_scale_index"),
    "kernel.pv_rescale": _kernel({"applied"}, "pv_rescale"),
    "kernel.decode_rows": (IRRELEVANT, "a row layout: only acc", None),
    "pv.mode": (REFUSED, "reference_out rebuilds f32 PV; INT8 PV (p_int8, "
                "pv_acc) is not implemented here", {"f32"}),
    "pv.regroup": (REFUSED, "reference_out rebuilds f32 PV; INT8 PV's regroup "
                   "is not implemented here", {"lds"}),
    "data.seed": (IRRELEVANT, "in the tensors", None),
    "data.*.dist": (IRRELEVANT, "in the tensors", None),
    "data.*.scale": (IRRELEVANT, "in the tensors", None),
    "data.*.mean": (IRRELEVANT, "in the tensors", None),
    "data.*.zero_rows": (IRRELEVANT, "in the tensors", None),
    "data.*.constant_rows": (IRRELEVANT, "in the tensors", None),
    "data.*.outlier_channels": (IRRELEVANT, "in the tensors", None),
    "data.*.outlier_scale": (IRRELEVANT, "in the tensors", None),
    "data.*.npy": (IRRELEVANT, "in the tensors", None),
    "check.out_cosine_min": (IRRELEVANT, "a threshold of fragsim check", None),
    "check.out_max_abs_max": (IRRELEVANT, "a threshold", None),
    "check.score_max_abs_max": (IRRELEVANT, "a threshold", None),
    "check.score_nmse_max": (IRRELEVANT, "a threshold", None),
    "check.kld_mean_max": (IRRELEVANT, "a threshold", None),
    "check.kld_median_max": (IRRELEVANT, "a threshold", None),
    "check.kld_p99_max": (IRRELEVANT, "a threshold", None),
    "check.top1_min": (IRRELEVANT, "a threshold", None),
    "check.rms_dp_max": (IRRELEVANT, "a threshold", None),
    "check.buckets": (IRRELEVANT, "how fragsim check reports", None),
}


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


# ---- the case behind a golden ------------------------------------------
#
# manifest.json's case_yaml is the case as `fragsim show` prints it
# (lib/caseprint.c): every key present, two-space indents, sections as
# block mappings, each sequence one flow mapping (its blocks list may
# wrap onto more lines), lists in [a, b], strings in "" with C escapes,
# comments after "#". This reads that form, and only that form (numpy
# is the only dependency, so no YAML library): anything else is a
# GoldenError naming the line.

def _scalar(tok, where):
    tok = tok.strip()
    if tok.startswith('"'):
        if len(tok) < 2 or not tok.endswith('"'):
            raise GoldenError("%s: an unterminated string" % where)
        return re.sub(r"\\(x[0-9a-fA-F]{2}|.)", lambda m: chr(int(m.group(1)[1:], 16))
                      if len(m.group(1)) == 3 else m.group(1), tok[1:-1])
    if tok.startswith("["):
        if not tok.endswith("]"):
            raise GoldenError("%s: an unterminated list" % where)
        inner = tok[1:-1].strip()
        return [_scalar(t, where) for t in inner.split(",")] if inner else []
    if tok in ("true", "false"):
        return tok == "true"
    for conv in (int, float):
        try:
            return conv(tok)
        except ValueError:
            pass
    return tok


def _strip_comment(line):
    """line without its comment (a # outside a string)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i].rstrip()
    return line.rstrip()


def _flow_map(text, where):
    """{a: 1, b: [1, 2]} as a dict."""
    body, out, depth, cur = text.strip()[1:-1], {}, 0, ""
    parts = []
    for ch in body:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        if ":" not in part:
            raise GoldenError("%s: '%s' is not key: value" % (where, part.strip()))
        k, v = part.split(":", 1)
        out[k.strip()] = _scalar(v, where)
    return out


def read_case(text, where="case_yaml"):
    """The case text `fragsim show` prints, as nested dicts and lists."""
    root = {}
    stack = [(-1, root)]            # (indent, the mapping or list it opened)
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        at = "%s:%d" % (where, i + 1)
        line = _strip_comment(lines[i])
        i += 1
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if body.startswith("- {"):
            while body.count("{") != body.count("}") and i < len(lines):
                body += " " + _strip_comment(lines[i]).strip()
                i += 1
            if not isinstance(parent, list) or not body.endswith("}"):
                raise GoldenError("%s: a sequence item out of place" % at)
            parent.append(_flow_map(body[2:], at))
            continue
        if ":" not in body or not isinstance(parent, dict):
            raise GoldenError("%s: '%s' is not key: value" % (at, body))
        key, val = body.split(":", 1)
        key = key.strip()
        if val.strip():
            parent[key] = _scalar(val, at)
            continue
        # a section: a list of sequences or a mapping, by the next line
        nxt = next((_strip_comment(x) for x in lines[i:] if _strip_comment(x).strip()), "")
        child = [] if nxt.strip().startswith("- ") else {}
        parent[key] = child
        stack.append((indent, child))
    return root


def case(g):
    """The golden's case (manifest's case_yaml) as nested dicts; a
    GoldenError when the manifest has none."""
    if "_case" not in g.__dict__:
        text = g.manifest.get("case_yaml")
        if not isinstance(text, str):
            raise GoldenError("%s: the manifest has no case_yaml, so the case's "
                              "features (window, soft cap, ...) are unknown" % g.path)
        g._case = read_case(text, "%s/manifest.json: case_yaml" % g.path)
    return g._case


def case_values(c):
    """[(key, value, path)] of every key of case c: key as in CASE_KEYS
    (data.*.x, sequences.x), path the concrete one (data.k.x,
    sequences[1].x)."""
    out = []
    for top, v in c.items():
        if top == "sequences" and isinstance(v, list):
            for n, sq in enumerate(v):
                for k, x in sq.items():
                    out.append(("sequences." + k, x, "sequences[%d].%s" % (n, k)))
        elif top == "data" and isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, dict):
                    for kk, xx in x.items():
                        out.append(("data.*." + kk, xx, "data.%s.%s" % (k, kk)))
                else:
                    out.append(("data." + k, x, "data." + k))
        elif isinstance(v, dict):
            for k, x in v.items():
                out.append((top + "." + k, x, top + "." + k))
        else:
            out.append((top, v, top))
    return out


def check_case(c, table=None, who="fragsim_golden.py"):
    """Raise Refused, naming the key, when case c has a key that table
    (CASE_KEYS by default) does not know or a value it refuses."""
    table = CASE_KEYS if table is None else table
    for key, value, path in case_values(c):
        if key not in table:
            raise Refused("%s: a case key %s does not know (a newer fragsim?); "
                          "refused rather than ignored" % (path, who))
        how, why, ok = table[key]
        if how == REFUSED:
            good = ok(value, c) if callable(ok) else value in ok
            if not good:
                raise Refused("%s: %s: %s refuses it: %s" % (path, value, who, why))


def _need(g, *names):
    for n in names:
        if n not in g:
            raise GoldenError("%s: no '%s' (the case's golden: list must "
                              "include inputs)" % (g.path, n))


def _stored(g, blocks):
    """The rows of the stored arrays that hold physical blocks: the blocks
    themselves, or for a sparse pool (pool_blocks.npy: the ascending ids
    of the blocks the tables name; the others are poison, not written)
    their positions in pool_blocks."""
    if "pool_blocks" not in g:
        return blocks
    ids = g["pool_blocks"]
    rows = np.searchsorted(ids, blocks)
    if np.any(rows >= len(ids)) or np.any(ids[np.minimum(rows, len(ids) - 1)] != blocks):
        raise GoldenError("%s: a block of the table is not in pool_blocks" % g.path)
    return rows


def gather_k(g, seq):
    """Sequence seq's K cache in logical key order: int8 [context, Hkv, D],
    and its scale: f32 [context, Hkv] (per_token_head; per_tensor: the one
    scale repeated) or f16 [context, Hkv, D/32] (per_block32: one scale
    per 32 dims). dequant_k(k, scale) multiplies them out."""
    _need(g, "k_cache", "k_scale", "block_table", "context_lens")
    kc = g["k_cache"]
    if kc.ndim != 5:
        raise NotImplementedError("gather_k: cache.block_stride (a padded pool, "
                                  "k_cache [NB, block_stride]) is not read here")
    nb, hkv, d16, bs, _ = kc.shape
    ctx = int(g["context_lens"][seq])
    t = np.arange(ctx)
    blocks = _stored(g, g["block_table"][seq][t // bs])
    slots = t % bs
    # [ctx, Hkv, D/16, 16] -> [ctx, Hkv, D]
    k = kc[blocks, :, :, slots, :].reshape(ctx, hkv, d16 * 16)
    ks = g["k_scale"]
    if ks.ndim == 3:                        # per_token_head [NB, BS, Hkv]
        scale = ks[blocks, slots, :]
    elif ks.ndim == 4:                      # per_block32 [NB, BS, Hkv, D/32]
        scale = ks[blocks, slots, :, :]
    elif ks.shape == (1,):                  # per_tensor
        scale = np.full((ctx, hkv), ks[0], ks.dtype)
    else:
        raise GoldenError("%s: k_scale %s is no K scale layout of docs/formats.md"
                          % (g.path, list(ks.shape)))
    return k, scale


def dequant_k(k, scale):
    """float64 [context, Hkv, D]: the int8 K of gather_k times its scale
    (per key and head, or per 32 dims for per_block32)."""
    kf = k.astype(np.float64)
    sc = scale.astype(np.float64)
    if sc.ndim == 3:
        return kf * np.repeat(sc, 32, axis=2)
    return kf * sc[..., None]


def gather_v(g, seq):
    """Sequence seq's V in logical key order, [context, Hkv, D]: int8 with
    its f32 [context, Hkv] scale (per_channel: [context, Hkv, D], the static
    [Hkv, D] scales broadcast over the keys, a view), or (bf16/f32 caches)
    float with None."""
    _need(g, "v_cache", "block_table", "context_lens")
    vc = g["v_cache"]
    if vc.ndim != 4:
        raise NotImplementedError("gather_v: cache.block_stride (a padded pool, "
                                  "v_cache [NB, block_stride]) is not read here")
    bs = vc.shape[3]
    ctx = int(g["context_lens"][seq])
    t = np.arange(ctx)
    if "v_scale" in g and g["v_scale"].ndim == 4:
        raise NotImplementedError("gather_v: q8_0 or q4_0 V (v_scale f16 [NB, BS, "
                                  "Hkv, D/32], llama.cpp's blocks) is not read here")
    blocks = _stored(g, g["block_table"][seq][t // bs])
    slots = t % bs
    v = vc[blocks, :, :, slots]            # [ctx, Hkv, D]
    if "v_scale" in g and g["v_scale"].ndim == 2:    # per_channel [Hkv, D]
        scale = np.broadcast_to(g["v_scale"], (ctx,) + g["v_scale"].shape)
    else:
        scale = g["v_scale"][blocks, slots, :] if "v_scale" in g else None
    if (scale is None) != (vc.dtype != np.int8):
        raise GoldenError("%s: v_cache %s %s v_scale" % (
            g.path, vc.dtype, "without" if scale is None else "with"))
    return v, scale


def mask(g, seq):
    """bool [T, context]: query token j of sequence seq, at position
    p = q_pos[seq, j], sees key t iff t <= p (causal within a chunk, and
    the tail of the context) and, with the case's sliding window W > 0,
    t >= p - W + 1: the W keys p-W+1 .. p. Padded query tokens (q_pos -1)
    see nothing. Reads the case (Refused: a key it does not know)."""
    _need(g, "q_pos", "context_lens")
    c = case(g)
    check_case(c)
    w = int(c["model"]["sliding_window"])
    ctx = int(g["context_lens"][seq])
    qpos = g["q_pos"][seq].astype(np.int64)[:, None]
    t = np.arange(ctx)[None, :]
    vis = t <= qpos
    if w > 0:
        vis &= t > qpos - w
    return vis


def alibi_slope(h, H):
    """ALiBi's slope of head h of H (Press et al., "Train Short, Test
    Long", get_slopes): with n = 2^floor(log2 H), heads h < n get
    2^(-8 (h+1) / n); the rest take the odd-numbered slopes of 2n heads,
    2^(-8 (2 (h-n) + 1) / (2n)). 12 heads: 2^-1 .. 2^-8, 2^-0.5, 2^-1.5,
    2^-2.5, 2^-3.5."""
    n = 1
    while n * 2 <= H:
        n *= 2
    if h < n:
        return 2.0 ** (-8.0 * (h + 1) / n)
    return 2.0 ** (-8.0 * (2 * (h - n) + 1) / (2 * n))


def reference_out(g):
    """The attention output recomputed in float64 from the quantized
    goldens: Q int8 x its scale, K and V dequantized (every K scale
    granularity, int8/bf16/f32 V), softmax_scale from the manifest, the
    case's soft cap (cap * tanh(s / cap)) then ALiBi (+ slope * (t - p)),
    the visibility mask with the sliding window, softmax, times V:
    [S, T, Hq, D]. What a device test compares its kernel's out with,
    besides out.npy itself. Refused for a case key it does not implement
    (a planted kernel bug, a key of a newer fragsim)."""
    _need(g, "q_int8", "q_scale")
    c = case(g)
    check_case(c)
    cap = float(c["model"]["soft_cap"])
    alibi = bool(c["model"]["alibi"])
    q = g["q_int8"].astype(np.float64) * g["q_scale"][..., None]
    s_, t_, hq, d = q.shape
    scale = float(g.manifest["softmax_scale"])
    out = np.zeros((s_, t_, hq, d))
    for s in range(s_):
        k, ks = gather_k(g, s)
        v, vs = gather_v(g, s)
        kf = dequant_k(k, ks)
        vf = v.astype(np.float64) * (1.0 if vs is None else
                                     vs if vs.ndim == 3 else vs[..., None])
        hkv = kf.shape[1]
        group = hq // hkv
        vis = mask(g, s)
        dist = (np.arange(kf.shape[0])[None, :]
                - g["q_pos"][s].astype(np.float64)[:, None])  # [T, ctx]: t - p
        for h in range(hq):
            kh, vh = kf[:, h // group, :], vf[:, h // group, :]
            sc = q[s, :, h, :] @ kh.T * scale          # [T, ctx]
            if cap > 0:
                sc = cap * np.tanh(sc / cap)
            if alibi:
                sc = sc + alibi_slope(h, hq) * dist
            sc = np.where(vis, sc, -np.inf)
            m = sc.max(axis=1, keepdims=True) if sc.shape[1] else np.zeros((t_, 1))
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
    query token's own key (vLLM's reshape_and_cache input). And the
    case's attention features as vLLM's attention layer takes them, so a
    kernel test cannot drop one: scale (softmax_scale), sliding_window
    (W, or None), window_size (flash-attention's (W - 1, 0), or (-1, -1)),
    alibi_slopes (float32 [Hq], or None) and logits_soft_cap (0: none).
    Refused for a case key the helpers do not know."""
    _need(g, "q", "q_pos", "context_lens", "block_table", "k_cache")
    c = case(g)
    check_case(c)
    if "pool_blocks" in g:
        raise NotImplementedError("vllm_inputs: a sparse pool (pool_blocks.npy: "
                                  "only the blocks the tables name are stored); "
                                  "slot_mapping addresses a dense pool")
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
    w, hq = int(c["model"]["sliding_window"]), g["q"].shape[2]
    res["scale"] = float(g.manifest["softmax_scale"])
    res["sliding_window"] = w if w > 0 else None
    res["window_size"] = (w - 1, 0) if w > 0 else (-1, -1)
    res["alibi_slopes"] = (np.array([alibi_slope(h, hq) for h in range(hq)], np.float32)
                           if c["model"]["alibi"] else None)
    res["logits_soft_cap"] = float(c["model"]["soft_cap"])
    return res


def to_torch(arr, device="cpu"):
    """A tensor as torch (import deferred: torch is optional)."""
    import torch
    return torch.from_numpy(np.ascontiguousarray(arr)).to(device)


def main(argv):
    """python3 fragsim_golden.py DIR: check DIR, print its tensors and how
    far out.npy is from the float64 attention rebuilt from the inputs.
    Exit 0: digests match and out is that attention (within 1e-3 of
    max |out|, 2^-8 more for a BF16 out); 1: a digest or out differs;
    2: bad usage, or a case the rebuild refuses (the key named)."""
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
            ref = reference_out(g)
        except (Refused, GoldenError) as e:
            print("fragsim_golden: error: %s: out not rebuilt: %s" % (argv[1], e),
                  file=sys.stderr)
            return 2
        err = float(np.abs(ref - g["out"]).max()) if ref.size else 0.0
        top = float(np.abs(ref).max()) if ref.size else 0.0
        print("out vs the float64 attention of the inputs: max |diff| %.2g" % err)
        # fragsim's out is float32 arithmetic on the same int8 inputs:
        # within 1e-3 of max |out| (2^-8 more when stored as BF16)
        bf16 = any(e["name"].startswith("out") and e["dtype"] == "bfloat16"
                   for e in g.manifest["files"])
        tol = (1e-3 + (2.0 ** -8 if bf16 else 0.0)) * max(top, 1e-30)
        if not err <= tol:
            print("fragsim_golden: error: %s: out is not the attention of its "
                  "inputs (max |diff| %.2g, more than %.2g)" % (argv[1], err, tol),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
