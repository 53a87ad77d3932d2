"""test_golden.py - tools/python/fragsim_golden.py as a device test uses it.

    pytest tests/python                       # FRAGSIM=build/fragsim by default
    python3 tests/python/test_golden.py       # the same tests without pytest

Each test runs `fragsim run` on a shipped case into a scratch directory
and loads the goldens. Expected values: the hand-built golden of
tiny_golden() (worked out in its comments), and fragsim's own out.npy
compared with what the loader's helpers rebuild from the quantized
inputs alone (a float64 attention written here, independent of fragsim's
code). The torch test is the pattern of a vLLM-style paged-attention
test: skipped, with a message, when torch is absent.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
import fragsim_golden as fg  # noqa: E402

FRAGSIM = os.environ.get("FRAGSIM", os.path.join(ROOT, "build", "fragsim"))


class Skip(Exception):
    pass


def skip(msg):
    try:
        import pytest
        pytest.skip(msg)
    except ImportError:
        raise Skip(msg)


def run_case(case, tmp, *args):
    out = os.path.join(tmp, os.path.basename(case).replace(".yaml", ""))
    subprocess.run([FRAGSIM, "run", os.path.join(ROOT, case), "--out", out] + list(args),
                   check=True, stdout=subprocess.DEVNULL)
    return out


def close(a, b, tol):
    """max |a - b| relative to max |b|, and the cosine."""
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    err = np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)
    cos = a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30)
    assert err < tol and cos > 0.9999, (err, cos)


def test_out_rebuilt_from_inputs(tmp):
    """A decode over shuffled pages and a chunked prefill with an explicit
    block table: the float64 attention over the gathered, dequantized
    inputs is fragsim's out (which used the same int8 inputs)."""
    for case in ("cases/qwen35-27b/decode-1000-bs8.yaml",
                 "cases/qwen35-27b/prefill-multi-seq-table.yaml"):
        g = fg.load(run_case(case, tmp))
        close(fg.reference_out(g), g["out"], 1e-3)


def test_safetensors_goldens(tmp):
    g = fg.load(run_case("cases/edge/one-token.yaml", tmp, "--format", "safetensors"))
    assert g.manifest["format"] == "safetensors"
    close(fg.reference_out(g), g["out"], 1e-3)


def test_tampered_golden_is_refused(tmp):
    d = run_case("cases/edge/one-token.yaml", tmp)
    with open(os.path.join(d, "out.npy"), "r+b") as f:
        f.seek(-1, 2)
        b = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([b[0] ^ 1]))
    try:
        fg.load(d)
    except fg.GoldenError as e:
        assert "out.npy: sha256 differs" in str(e)
    else:
        raise AssertionError("a changed byte was not noticed")


def shown(tmp, text):
    """`fragsim show` of the case text: what a manifest's case_yaml holds."""
    path = os.path.join(tmp, "shown-in.yaml")
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([FRAGSIM, "show", path], check=True,
                          stdout=subprocess.PIPE).stdout.decode()


def tiny_golden(tmp, window=0):
    """A hand-built golden: 1 sequence of 3 keys, BS 2, blocks [1, 0]
    (key 0 and 1 in block 1, key 2 in block 0 slot 0), Hkv 1, D 16.
    Key t's dims are all t + 1 (K) or 10 * (t + 1) (V), scales 1; block 0
    slot 1 is poison (-128). Its case (for the mask): that shape, with
    the sliding window given."""
    d = os.path.join(tmp, "tiny-%d" % window)
    os.makedirs(d)
    case = shown(tmp, "fragsim: 1\nname: tiny\nmodel: {q_heads: 1, kv_heads: 1, "
                 "head_dim: 16, sliding_window: %d}\ncache: {block_size: 2, "
                 "placement: table}\nsequences:\n  - {context: 3, tokens: 2, "
                 "blocks: [1, 0]}\n" % window)
    k = np.full((2, 1, 1, 2, 16), -128, np.int8)
    v = np.full((2, 1, 16, 2), -128, np.int8)
    for t, (blk, slot) in enumerate([(1, 0), (1, 1), (0, 0)]):
        k[blk, 0, 0, slot, :] = t + 1
        v[blk, 0, :, slot] = 10 * (t + 1)
    tensors = {"k_cache": k, "k_scale": np.ones((2, 2, 1), np.float32),
               "v_cache": v, "v_scale": np.ones((2, 2, 1), np.float32),
               "block_table": np.array([[1, 0]], np.int32),
               "context_lens": np.array([3], np.int32),
               "q_pos": np.array([[1, 2]], np.int32)}
    files = []
    for name, arr in tensors.items():
        path = os.path.join(d, name + ".npy")
        np.save(path, arr)
        with open(path, "rb") as f:
            digest = fg._sha256(f.read())
        files.append({"name": name + ".npy", "dtype": str(arr.dtype),
                      "shape": list(arr.shape), "sha256": digest})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"tool": "fragsim", "format": "npy", "files": files,
                   "case_yaml": case}, f)
    return d


def test_gather_and_mask_by_hand(tmp):
    g = fg.load(tiny_golden(tmp))
    k, ks = fg.gather_k(g, 0)
    assert k.shape == (3, 1, 16) and (k[:, 0, 0] == [1, 2, 3]).all()
    assert (k == k[:, :, :1]).all() and ks.shape == (3, 1)
    v, vs = fg.gather_v(g, 0)
    assert v.shape == (3, 1, 16) and (v[:, 0, 5] == [10, 20, 30]).all()
    # q_pos [1, 2]: the first token sees keys 0 and 1, the second all three
    assert fg.mask(g, 0).tolist() == [[True, True, False], [True, True, True]]


def test_window_mask_by_hand(tmp):
    """A query at position p sees keys p-W+1 .. p. q_pos [1, 2]: with W 2
    the first token sees keys 0 and 1, the second keys 1 and 2; with W 1
    each sees only its own key; W 3 covers the whole context, as no
    window. (Before the fix, mask ignored the window: all three were
    the W 0 mask.)"""
    want = {1: [[False, True, False], [False, False, True]],
            2: [[True, True, False], [False, True, True]],
            3: [[True, True, False], [True, True, True]]}
    for w, m in want.items():
        assert fg.mask(fg.load(tiny_golden(tmp, w)), 0).tolist() == m, w


def test_vllm_names(tmp):
    """prefill-multi-seq-table: sequences with chunks of 40 and 17 tokens,
    T = 40, so sequence 1 has 23 padded tokens (q_pos -1). By hand:
    query_start_loc [0, 40, 57], num_tokens 57; sequence 0's history is
    100 over blocks [6, 1, 3] of 64 slots, so its token 0 (position 100)
    is slot 1*64 + 36 = 100 and its token 28 (position 128) slot
    3*64 + 0 = 192; sequence 1 (history 20, block 0) starts at slot 20."""
    g = fg.load(run_case("cases/qwen35-27b/prefill-multi-seq-table.yaml", tmp))
    v = g.manifest["vllm"]
    assert v["query_start_loc"] == [0, 40, 57] and v["num_tokens"] == 57
    assert v["seq_lens"] == "context_lens" and v["block_tables"] == "block_table"
    n = fg.vllm(g)
    assert n["query_start_loc"].tolist() == [0, 40, 57]
    assert n["seq_lens"].tolist() == [140, 37]
    assert n["query"].shape == (57, 24, 256) and n["output"].shape == (57, 24, 256)
    # the flattening, against q itself: rows 0..39 are sequence 0's
    # tokens, rows 40..56 sequence 1's first 17
    assert (n["query"][:40] == g["q"][0]).all()
    assert (n["query"][40:] == g["q"][1, :17]).all()
    assert (n["output"][40:] == g["out"][1, :17]).all()
    assert n["slot_mapping"][[0, 28, 40, 56]].tolist() == [100, 192, 20, 36]


def test_bf16_safetensors(tmp):
    """--bf16: q and out stored as BF16. q is BF16-representable, so it
    reads back exactly; out is the f32 out of the same case run without
    --bf16, rounded to a BF16 (low 16 bits zero) within half a BF16 ulp:
    |err| <= 2^-8 |out| for normal values (8 significant bits)."""
    case = "cases/qwen35-27b/prefill-multi-seq-table.yaml"
    os.mkdir(os.path.join(tmp, "f32"))
    f = fg.load(run_case(case, os.path.join(tmp, "f32")))
    b = fg.load(run_case(case, tmp, "--format", "safetensors", "--bf16"))
    dt = {e["name"]: e["dtype"] for e in b.manifest["files"]}
    assert dt["q"] == "bfloat16" and dt["out"] == "bfloat16"
    assert dt["q_int8"] == "int8" and dt["acc"] == "int32"
    assert b["q"].dtype == np.float32 and (b["q"] == f["q"]).all()
    assert (b["acc"] == f["acc"]).all()
    bits = b["out"].view(np.uint32)
    assert (bits & 0xffff == 0).all()
    err = np.abs(b["out"].astype(np.float64) - f["out"])
    assert (err <= np.abs(f["out"]) * 2.0 ** -8).all() and err.max() > 0
    v = fg.vllm(b)
    assert v["output"].dtype == np.float32 and (v["query"] == fg.vllm(f)["query"]).all()
    # the header says BF16: two bytes an element
    with open(os.path.join(b.path, "golden.safetensors"), "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        hdr = json.loads(fh.read(n))
    assert hdr["out"]["dtype"] == "BF16"
    begin, end = hdr["out"]["data_offsets"]
    assert end - begin == 2 * b["out"].size


def torch_paged_attention(torch, q, k_cache, v_cache, k_scale, v_scale,
                          block_tables, seq_lens, q_pos, scale):
    """A small paged attention in PyTorch, as a kernel test would hold it:
    gather K and V through the block table, dequantize, masked softmax.
    q [S, T, Hq, D] float; caches in fragsim's layouts (docs/formats.md)."""
    s_, t_, hq, d = q.shape
    out = torch.zeros_like(q)
    for s in range(s_):
        n = int(seq_lens[s])
        t = torch.arange(n)
        bs = k_cache.shape[3]
        blk, slot = block_tables[s][t // bs].long(), t % bs
        k = k_cache[blk, :, :, slot, :].reshape(n, k_cache.shape[1], d).double()
        k = k * k_scale[blk, slot, :, None].double()
        v = v_cache[blk, :, :, slot].double() * v_scale[blk, slot, :, None].double()
        group = hq // k.shape[1]
        vis = t[None, :] <= q_pos[s][:, None].long()
        for h in range(hq):
            sc = q[s, :, h, :] @ k[:, h // group, :].T * scale
            sc = sc.masked_fill(~vis, float("-inf"))
            p = torch.softmax(sc, dim=-1).nan_to_num(0.0)
            out[s, :, h, :] = p @ v[:, h // group, :]
    return out


def test_torch_paged_attention(tmp):
    try:
        import torch
    except ImportError:
        skip("torch not installed: the PyTorch paged-attention example is skipped")
    g = fg.load(run_case("cases/qwen35-27b/decode-multi-seq.yaml", tmp))
    T = {n: fg.to_torch(g[n]) for n in ("q_int8", "q_scale", "k_cache", "v_cache",
                                        "k_scale", "v_scale", "block_table",
                                        "context_lens", "q_pos")}
    q = T["q_int8"].double() * T["q_scale"][..., None].double()
    out = torch_paged_attention(torch, q, T["k_cache"], T["v_cache"], T["k_scale"],
                                T["v_scale"], T["block_table"], T["context_lens"],
                                T["q_pos"], float(g.manifest["softmax_scale"]))
    close(out.numpy(), g["out"], 1e-3)


def torch_varlen_attention(torch, v, k, ks, vv, vs, scale):
    """The vLLM calling convention: query [num_tokens, Hq, D] with
    query_start_loc; sequence s's n query tokens are the last n of its
    seq_lens[s] keys (causal). k, vv: per sequence, [ctx, Hkv, D] float."""
    query = torch.from_numpy(v["query"]).double()
    out = torch.zeros_like(query)
    qsl = v["query_start_loc"]
    for s in range(len(v["seq_lens"])):
        a, b, ctx = int(qsl[s]), int(qsl[s + 1]), int(v["seq_lens"][s])
        kf = torch.from_numpy(k[s].astype(np.float64) * ks[s][..., None])
        vf = torch.from_numpy(vv[s].astype(np.float64) * vs[s][..., None])
        pos = ctx - (b - a) + torch.arange(b - a)
        vis = torch.arange(ctx)[None, :] <= pos[:, None]
        group = query.shape[1] // kf.shape[1]
        for h in range(query.shape[1]):
            sc = query[a:b, h, :] @ kf[:, h // group, :].T * scale
            p = torch.softmax(sc.masked_fill(~vis, float("-inf")), dim=-1)
            out[a:b, h, :] = p @ vf[:, h // group, :]
    return out


def test_torch_vllm_names(tmp):
    """The same attention, held as a vLLM kernel test holds it: the
    flattened query with query_start_loc and seq_lens, compared with the
    flattened output (rows of padded tokens never appear)."""
    try:
        import torch
    except ImportError:
        skip("torch not installed: the PyTorch vLLM-names example is skipped")
    g = fg.load(run_case("cases/qwen35-27b/prefill-multi-seq-table.yaml", tmp))
    v = fg.vllm(g)
    v["query"] = (g["q_int8"].astype(np.float64) * g["q_scale"][..., None])[g["q_pos"] >= 0]
    ks, vs, kk, vv = [], [], [], []
    for s in range(len(v["seq_lens"])):
        k, a = fg.gather_k(g, s)
        x, b = fg.gather_v(g, s)
        kk.append(k), ks.append(a), vv.append(x), vs.append(b)
    out = torch_varlen_attention(torch, v, kk, ks, vv, vs,
                                 float(g.manifest["softmax_scale"]))
    close(out.numpy(), v["output"], 1e-3)


def main(names=None):
    """Run every test_ function of names (a module's globals(); this
    module's by default) in a scratch directory each: the runner when
    pytest is not installed."""
    names = globals() if names is None else names
    tests = [(n, f) for n, f in sorted(names.items()) if n.startswith("test_")]
    failed = 0
    for name, fn in tests:
        tmp = tempfile.mkdtemp(prefix="fragsim-py-")
        try:
            fn(tmp)
            print("ok      %s" % name)
        except Skip as e:
            print("skipped %s: %s" % (name, e))
        except Exception as e:  # report every failure, then exit 1
            failed += 1
            print("FAIL    %s: %r" % (name, e))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("python: %d test(s), %d failed" % (len(tests), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
