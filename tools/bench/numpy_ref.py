#!/usr/bin/env python3
"""numpy_ref.py - the float32 numpy baseline `make bench` compares fragsim with
(and, with --backend torch, the same attention in PyTorch on the CPU).

The same attention as a bench workload (shapes only: the values are
random, timing does not depend on them), done the way a careful numpy user
would do it, so that "fragsim is N x faster" means something:

  decode   per kv head g: S = K_g Q_g^T  ([ctx, 6] GEMM, the 6 q heads of
           the group at once), scale, max, exp, sum, O = P^T V_g
  prefill  per kv head g and block of 256 query tokens: the 6 q heads x
           256 tokens as one [1536, D] matrix times K_g^T up to the last
           visible key (keys past the block's causal horizon are skipped,
           as fragsim skips fully masked tiles), the causal mask on the
           diagonal block only, softmax, then P V_g

--backend torch does the same steps with torch tensors (torch.matmul,
amax, exp, sum; torch.set_num_threads(--threads)), for the torch CPU
column: PyTorch's own GEMM and vectorised exp, another strong baseline.
--gather and --whole are numpy's alone.

K and V are contiguous float32 [Hkv, ctx, D] arrays prepared before timing
(the strongest layout for BLAS); --gather instead keeps them as shuffled
16-token pages and gathers through a block table inside the timed region.

The BLAS must be a fast one: Debian's libopenblas0-pthread. OpenBLAS 0.3.21
does not know recent AMD cores and falls back to its slow generic kernel
unless OPENBLAS_CORETYPE names one it has; on an AVX-512 CPU we set
SkylakeX. Both that and the thread count are read by OpenBLAS when it is
loaded, so they are set here, before numpy is imported (the caller,
tools/bench/bench.py, sets them in our environment and passes --coretype
keep). The BLAS library, its kernel
("corename") and thread count are reported from the loaded library itself.

Output: one JSON object on stdout with median/min/max seconds of --runs
timed runs after one warm-up run; with --whole also whole_median_s, the
median of --runs whole scripts (inputs made, quantized to int8 per row and
dequantized, then the attention), numpy's side of fragsim's process wall.
"""
import argparse
import ctypes
import io
import json
import os
import sys
import time
from contextlib import redirect_stdout


def cpu_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "avx512f" in line.split()
    except OSError:
        pass
    return False


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["decode", "prefill"], required=True)
    p.add_argument("--context", type=int, help="decode: keys")
    p.add_argument("--history", type=int, help="prefill: keys before the chunk")
    p.add_argument("--chunk", type=int, help="prefill: query tokens")
    p.add_argument("--q-heads", type=int, default=24)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=256)
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--gather", action="store_true",
                   help="gather K/V pages through a block table inside the timing")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first [1]")
    p.add_argument("--coretype", default="auto",
                   help="OPENBLAS_CORETYPE: auto (SkylakeX on an AVX-512 CPU, even over"
                        " a site default), keep (the environment's), or a name")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backend", choices=["numpy", "torch"], default="numpy")
    p.add_argument("--whole", action="store_true",
                   help="also time the whole script a user would write: make K and V"
                        " (normal f32), quantize them to int8 per (token, head) with"
                        " absmax scales, dequantize, then the attention")
    a = p.parse_args()
    if a.mode == "decode" and not a.context:
        p.error("decode needs --context")
    if a.mode == "prefill" and (a.history is None or not a.chunk):
        p.error("prefill needs --history and --chunk")
    if a.q_heads % a.kv_heads:
        p.error("--q-heads must be a multiple of --kv-heads")
    return a


def blas_info(np):
    """Which BLAS numpy really calls, and which kernel it picked."""
    info = {"numpy": np.__version__}
    try:
        import threadpoolctl  # optional: not packaged for Debian's python3
        pools = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
        if pools:
            p = pools[0]
            info.update(source="threadpoolctl", library=p.get("internal_api"),
                        path=p.get("filepath"), version=p.get("version"),
                        corename=p.get("architecture"), threads=p.get("num_threads"))
            return info
    except ImportError:
        pass
    # threadpoolctl's own method: find the loaded library and ask it.
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(path)
                if ("blas" in base or "mkl_rt" in base) and path not in libs:
                    libs.append(path)
    except OSError:
        pass
    info["source"] = "/proc/self/maps"
    info["loaded"] = libs
    # Debian's libopenblas names its calls openblas_*; the OpenBLAS that
    # numpy's wheels bundle (scipy-openblas) prefixes them scipy_ and
    # suffixes 64_.
    for path in libs:
        for pre, suf in (("", ""), ("scipy_", "64_"), ("scipy_", "")):
            try:
                lib = ctypes.CDLL(path)
                cfg = getattr(lib, pre + "openblas_get_config" + suf)
                core = getattr(lib, pre + "openblas_get_corename" + suf)
                nthr = getattr(lib, pre + "openblas_get_num_threads" + suf)
            except (OSError, AttributeError):
                continue
            cfg.restype = ctypes.c_char_p
            core.restype = ctypes.c_char_p
            info.update(library="openblas", path=os.path.realpath(path),
                        config=cfg().decode(), corename=core().decode(),
                        threads=nthr())
            return info
    # Not OpenBLAS (or not found): numpy's own build record.
    buf = io.StringIO()
    with redirect_stdout(buf):
        np.show_config()
    info["library"] = "unknown (see numpy_config)"
    info["numpy_config"] = " ".join(buf.getvalue().split())[:400]
    return info


def decode_setup(np, a, rng):
    hkv, g, d, L = a.kv_heads, a.q_heads // a.kv_heads, a.head_dim, a.context
    q = rng.standard_normal((hkv, g, d), dtype=np.float32)
    if not a.gather:
        k = rng.standard_normal((hkv, L, d), dtype=np.float32)
        v = rng.standard_normal((hkv, L, d), dtype=np.float32)
        return q, k, v, None
    bs = a.block_size
    nb = (L + bs - 1) // bs
    # pages [NB, Hkv, BS, D], blocks in shuffled order as the cases place them
    k = rng.standard_normal((nb, hkv, bs, d), dtype=np.float32)
    v = rng.standard_normal((nb, hkv, bs, d), dtype=np.float32)
    table = rng.permutation(nb).astype(np.int32)
    return q, k, v, table


def decode_run(np, a, q, k, v, table):
    hkv, d, L = a.kv_heads, a.head_dim, a.context
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((hkv, q.shape[1], d), dtype=np.float32)
    for h in range(hkv):
        if table is None:
            kh, vh = k[h], v[h]
        else:
            kh = k[table, h].reshape(-1, d)[:L]
            vh = v[table, h].reshape(-1, d)[:L]
        s = kh @ q[h].T			# [L, 6]
        s *= scale
        s -= s.max(axis=0)
        np.exp(s, out=s)
        l = s.sum(axis=0)
        out[h] = (s.T @ vh) / l[:, None]
    return out


PREFILL_ROWS = 256	# query tokens per block: a large GEMM, little masked waste


def prefill_setup(np, a, rng):
    hkv, g, d = a.kv_heads, a.q_heads // a.kv_heads, a.head_dim
    ctx = a.history + a.chunk
    # [Hkv, T, 6, D]: a block of tokens of one group is one contiguous matrix
    q = rng.standard_normal((hkv, a.chunk, g, d), dtype=np.float32)
    k = rng.standard_normal((hkv, ctx, d), dtype=np.float32)
    v = rng.standard_normal((hkv, ctx, d), dtype=np.float32)
    return q, k, v


def prefill_run(np, a, q, k, v):
    hkv, g, d, T, H = a.kv_heads, a.q_heads // a.kv_heads, a.head_dim, a.chunk, a.history
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((hkv, T, g, d), dtype=np.float32)
    for r0 in range(0, T, PREFILL_ROWS):
        r1 = min(T, r0 + PREFILL_ROWS)
        n = r1 - r0
        # query token r0+i sees key H+r0+j iff j <= i
        diag = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)[:, None, :]
        for h in range(hkv):
            kmax = H + r1
            qb = q[h, r0:r1].reshape(n * g, d)
            s = qb @ k[h, :kmax].T		# [n*6, kmax]
            s *= scale
            s3 = s.reshape(n, g, kmax)
            s3[:, :, H + r0:] += diag
            s -= s.max(axis=1, keepdims=True)
            np.exp(s, out=s)
            l = s.sum(axis=1, keepdims=True)
            o = s @ v[h, :kmax]
            o /= l
            out[h, r0:r1] = o.reshape(n, g, d)
    return out


def torch_decode_run(torch, a, q, k, v):
    hkv, d = a.kv_heads, a.head_dim
    scale = 1.0 / float(d) ** 0.5
    out = torch.empty((hkv, q.shape[1], d), dtype=torch.float32)
    for h in range(hkv):
        s = k[h] @ q[h].T			# [L, 6]
        s *= scale
        s -= s.amax(dim=0)
        torch.exp(s, out=s)
        l = s.sum(dim=0)
        out[h] = (s.T @ v[h]) / l[:, None]
    return out


def torch_prefill_run(torch, a, q, k, v):
    hkv, g, d, T, H = a.kv_heads, a.q_heads // a.kv_heads, a.head_dim, a.chunk, a.history
    scale = 1.0 / float(d) ** 0.5
    out = torch.empty((hkv, T, g, d), dtype=torch.float32)
    for r0 in range(0, T, PREFILL_ROWS):
        r1 = min(T, r0 + PREFILL_ROWS)
        n = r1 - r0
        diag = torch.triu(torch.full((n, n), float("-inf")), 1)[:, None, :]
        for h in range(hkv):
            kmax = H + r1
            qb = q[h, r0:r1].reshape(n * g, d)
            s = qb @ k[h, :kmax].T
            s *= scale
            s3 = s.view(n, g, kmax)
            s3[:, :, H + r0:] += diag
            s -= s.amax(dim=1, keepdim=True)
            torch.exp(s, out=s)
            l = s.sum(dim=1, keepdim=True)
            o = s @ v[h, :kmax]
            o /= l
            out[h, r0:r1] = o.view(n, g, d)
    return out


def torch_main(a):
    """The torch column: the same shapes and steps, timed the same way."""
    try:
        import torch
    except ImportError:
        print(json.dumps({"error": "torch is not installed for " + sys.executable}))
        return 3
    torch.set_num_threads(a.threads)
    gen = torch.Generator().manual_seed(a.seed)
    hkv, g, d = a.kv_heads, a.q_heads // a.kv_heads, a.head_dim
    if a.mode == "decode":
        q = torch.randn((hkv, g, d), generator=gen)
        k = torch.randn((hkv, a.context, d), generator=gen)
        v = torch.randn((hkv, a.context, d), generator=gen)
        run = lambda: torch_decode_run(torch, a, q, k, v)
    else:
        ctx = a.history + a.chunk
        q = torch.randn((hkv, a.chunk, g, d), generator=gen)
        k = torch.randn((hkv, ctx, d), generator=gen)
        v = torch.randn((hkv, ctx, d), generator=gen)
        run = lambda: torch_prefill_run(torch, a, q, k, v)
    with torch.inference_mode():
        for _ in range(a.warmup):
            run()
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({
        "mode": a.mode, "backend": "torch", "runs": a.runs,
        "layout": "contiguous f32 [Hkv, ctx, D], prepared before timing",
        "median_s": times[len(times) // 2], "min_s": times[0], "max_s": times[-1],
        "whole_median_s": None,
        "torch": {"version": torch.__version__, "threads": torch.get_num_threads(),
                  "config": " ".join(torch.__config__.show().split())[:300]},
    }))
    return 0


def quantize_rows(np, x):
    """Symmetric int8 per row (the last axis), absmax / 127, and back to
    f32: what a script checking an int8 cache in float would do."""
    scale = np.abs(x).max(axis=-1, keepdims=True) / np.float32(127)
    scale[scale == 0] = 1
    q = np.clip(np.rint(x / scale), -127, 127).astype(np.int8)
    return q.astype(np.float32) * scale


def whole_run(np, a, rng):
    """Inputs made, quantized and dequantized, then the attention: the
    numpy counterpart of `fragsim run --emulate-only` from process start."""
    if a.mode == "decode":
        q, k, v, table = decode_setup(np, a, rng)
        k, v = quantize_rows(np, k), quantize_rows(np, v)
        return decode_run(np, a, q, k, v, table)
    q, k, v = prefill_setup(np, a, rng)
    k, v = quantize_rows(np, k), quantize_rows(np, v)
    return prefill_run(np, a, q, k, v)


def main():
    a = parse_args()
    if a.backend == "torch":
        os.environ["OMP_NUM_THREADS"] = str(a.threads)
        return torch_main(a)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    if a.coretype == "auto":
        if cpu_has_avx512():
            os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif a.coretype != "keep":
        os.environ["OPENBLAS_CORETYPE"] = a.coretype
    try:
        import numpy as np
    except ImportError:
        print(json.dumps({"error": "numpy is not installed for " + sys.executable}))
        return 3
    rng = np.random.default_rng(a.seed)
    if a.mode == "decode":
        args = decode_setup(np, a, rng)
        run = lambda: decode_run(np, a, *args)
    else:
        args = prefill_setup(np, a, rng)
        run = lambda: prefill_run(np, a, *args)
    for _ in range(a.warmup):
        run()		# page faults, BLAS buffers, thread start
    times = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    times.sort()
    whole = []
    for _ in range(a.runs if a.whole else 0):
        t0 = time.perf_counter()
        whole_run(np, a, rng)
        whole.append(time.perf_counter() - t0)
    whole.sort()
    res = {
        "mode": a.mode,
        "layout": ("paged f32, gathered through the block table inside the timing"
                   if a.gather else "contiguous f32 [Hkv, ctx, D], prepared before timing"),
        "runs": a.runs,
        "median_s": times[len(times) // 2],
        "min_s": times[0],
        "max_s": times[-1],
        "whole_median_s": whole[len(whole) // 2] if whole else None,
        "env": {k: os.environ.get(k) for k in
                ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        "blas": blas_info(np),
    }
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
