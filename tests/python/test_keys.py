"""test_keys.py - no case key is accepted by fragsim and then ignored by
the Python helpers (tools/python/fragsim_golden.py, fragsim_gen.py).

    pytest tests/python                       # FRAGSIM=build/fragsim by default
    python3 tests/python/test_keys.py         # the same tests without pytest

Where the keys come from: `fragsim show --schema`, the loader's own
schema table, cross-checked with docs/case-keys.md (which
tests/test_caseschema.c holds to the loader both ways). Each helper
module declares every key (CASE_KEYS: applied, irrelevant or refused);
a key the schema has and a module does not declare fails here, so a key
added to fragsim later cannot be ignored silently.

Then the walk, as test_caseschema.c's every_key_changes_goldens_or_says_why
does for the loader: every docs/case-keys.md row that changes the
goldens is applied to the doc's base case, fragsim writes the goldens
(--emulate-only, so a planted kernel bug is written, not refused), and
each helper must either rebuild what it rebuilds (fragsim_golden: out
from the quantized inputs, in float64 here, within 1e-3; fragsim_gen:
every input bit for bit) or refuse, naming the key, exactly when it
declares the key refused. Expected values: the float64 attention of
fragsim_golden (numpy, written from the definitions, sharing no code
with fragsim), the window worked out by hand (a query at position p
sees keys p-W+1 .. p).
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_golden import FRAGSIM, ROOT, close, main as run_tests, run_case, skip  # noqa: E402
import fragsim_golden as fg  # noqa: E402  (test_golden put tools/python on the path)
import fragsim_gen as gen  # noqa: E402

GEN = os.path.join(ROOT, "tools", "python", "fragsim_gen.py")
GOLDEN = os.path.join(ROOT, "tools", "python", "fragsim_golden.py")
TABLES = (("fragsim_golden.py", fg.CASE_KEYS), ("fragsim_gen.py", gen.CASE_KEYS))


def sh(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def schema_keys():
    """Every case key in `fragsim show --schema`: its tables, one per
    section (`## Top level`, "## `model:`", ..., "## `data.q`, ..."),
    rows of mapping type being sections, not keys."""
    r = sh([FRAGSIM, "show", "--schema"], check=True)
    keys, prefix = [], None
    for line in r.stdout.decode().splitlines():
        if line.startswith("## "):
            head = line[3:]
            if head == "Top level":
                prefix = ""
            elif head.startswith("`data.q`"):
                prefix = "data.*."
            else:
                m = re.fullmatch(r"`(\w+):`", head)
                assert m, "an unknown schema section: " + line
                prefix = m.group(1) + "."
            continue
        m = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
        if m and prefix is not None and m.group(2).strip() not in (
                "mapping", "list of mappings"):
            keys.append(prefix + m.group(1))
    return keys


def doc_rows():
    """docs/case-keys.md: (base cells, [(key, yes, setup, change)])."""
    base, rows = None, []
    with open(os.path.join(ROOT, "docs", "case-keys.md")) as f:
        for line in f:
            if line.startswith("Base: `"):
                base = line.strip()[len("Base: `"):-1]
            m = re.match(r"\| `([^`]+)` \| (yes|no) \|", line)
            if m:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                unq = [c[1:-1] if c.startswith("`") else c for c in cells[2:4]]
                rows.append((m.group(1), m.group(2) == "yes", unq[0], unq[1]))
    assert base and rows
    return base, rows


def test_schema_is_the_docs_keys(tmp):
    """The parse of --schema finds exactly docs/case-keys.md's keys."""
    keys = schema_keys()
    assert len(keys) == len(set(keys)) and len(keys) > 50
    assert set(keys) == {r[0] for r in doc_rows()[1]}


def test_every_key_is_declared(tmp):
    keys = set(schema_keys())
    for who, table in TABLES:
        missing = sorted(keys - set(table))
        assert not missing, "%s does not say whether it applies, ignores or " \
            "refuses the case key(s) %s" % (who, ", ".join(missing))
        extra = sorted(set(table) - keys)
        assert not extra, "%s declares keys the schema does not have: %s" % (
            who, ", ".join(extra))
        for key, (how, why, ok) in table.items():
            assert how in (fg.APPLIED, fg.IRRELEVANT, fg.REFUSED), (who, key)
            assert why, (who, key)
            assert (ok is not None) == (how == fg.REFUSED), (who, key)


def test_defaults_are_not_refused(tmp):
    """A case with every key at its default is refused by no helper.
    (`show` prints every key but unset thresholds, spare_blocks (in a
    comment), a prefill sequence's keys and an unset npy.)"""
    from test_golden import shown
    text = shown(tmp, "fragsim: 1\nname: d\nsequences:\n  - {context: 3}\n")
    c = fg.read_case(text)
    keys = {k for k, _, _ in fg.case_values(c)}
    assert len(keys) > 40 and keys <= set(schema_keys())
    for who, table in TABLES:
        fg.check_case(c, table, who)


def test_case_reader_is_yaml(tmp):
    """fragsim_golden reads `fragsim show`'s form without a YAML library;
    it must read what a YAML parser reads: a quoted description with a
    # and brackets, a wrapped blocks list, comments, a data.*.npy."""
    try:
        import yaml
    except ImportError:
        skip("PyYAML not installed: the case reader is not compared with it")
    from test_golden import shown
    np.save(os.path.join(tmp, "k.npy"), np.zeros((2, 30, 4, 256), np.float32))
    text = shown(tmp, "fragsim: 1\nname: wrap\ndescription: \"a \\\"quoted\\\" # "
                 "not a comment, [x]\"\ncache: {block_size: 1, placement: table}\n"
                 "data: {k: {npy: k.npy}}\nsequences:\n  - {context: 30, blocks: [%s]}\n"
                 "  - {context: 2, blocks: [30, 31]}\n"
                 % ", ".join(str(i) for i in range(30)))
    assert "\n      16, 17" in text                 # the list wrapped
    assert fg.read_case(text) == yaml.safe_load(text)


def names_a_key(refused, key, setup):
    """Does a refusal name key, or a key the row's setup sets? (A row may
    need another key the helpers refuse first: kernel.block_offset needs
    cache.block_stride.)"""
    keys = [key] + [c.split("=")[0].strip() for c in setup.split(";") if "=" in c]
    return any(re.match(concrete(k), refused) for k in keys)


def concrete(key):
    """The regex of a key as a refusal names it: data.*.x is data.q.x (k,
    v), sequences.x is sequences[i].x."""
    r = re.escape(key).replace(r"\*", "[qkv]")
    return r.replace("sequences\\.", r"sequences\[\d+\]\.", 1)


def apply(case, cells, star):
    for tok in cells.split(";"):
        tok = tok.strip().replace("*", star) if star else tok.strip()
        if tok:
            path, value = tok.split("=", 1)
            if value:
                case[path] = value
            else:
                case.pop(path, None)


def case_text(case):
    """The assignments as YAML: top-level keys, sections as flow maps,
    sequences one flow mapping in a list (test_caseschema.c's form)."""
    tree = {}
    for path, value in case.items():
        node, parts = tree, path.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value

    def flow(d):
        return "{%s}" % ", ".join("%s: %s" % (k, flow(v) if isinstance(v, dict) else v)
                                  for k, v in d.items())
    out = []
    for k, v in tree.items():
        if k == "sequences":
            out.append("sequences:\n  - " + flow(v))
        else:
            out.append("%s: %s" % (k, flow(v) if isinstance(v, dict) else v))
    return "\n".join(out) + "\n"


def test_every_key_row_against_the_helpers(tmp):
    """Each golden-changing row of docs/case-keys.md: the helpers rebuild
    its goldens, or refuse them naming the key, as they declare. Before
    the fix, model.sliding_window=10 (context 40, so the window masks
    keys) rebuilt an out 1.2 away (max |diff|), and alibi, soft_cap and
    k_scale were refused without their keys' names (the script said
    "out not rebuilt" and exited 0)."""
    try:
        import yaml
    except ImportError:
        yaml = None
    base, rows = doc_rows()
    # the .npy files data.*.npy reads: q [S,T,Hq,D], k and v [S,MAXCTX,Hkv,D]
    for t, shape in (("q", (1, 2, 4, 64)), ("k", (1, 40, 2, 64)), ("v", (1, 40, 2, 64))):
        x = (np.arange(np.prod(shape)) * (5 + 2 * "qkv".index(t)) % 13 - 6) / 4.0
        np.save(os.path.join(tmp, t + ".npy"), x.astype(np.float32).reshape(shape))
    walked = 0
    for key, yes, setup, change in rows:
        if not yes:
            continue
        for star in ("q", "k", "v") if "*" in key else (None,):
            case = {}
            apply(case, base, None)
            apply(case, setup, star)
            apply(case, change, star)
            label = key.replace("*", star or "*")
            path = os.path.join(tmp, "c%d.yaml" % walked)
            with open(path, "w") as f:
                f.write(case_text(case))
            out = os.path.join(tmp, "g%d" % walked)
            r = sh([FRAGSIM, "run", path, "--emulate-only", "--out", out])
            assert r.returncode == 0, (label, r.stderr.decode())
            # fragsim_golden: out rebuilt, or refused by name
            g = fg.load(out)
            try:
                ref, refused = fg.reference_out(g), None
            except fg.Refused as e:
                refused = str(e)
            # a REFUSED key's accepted values (k_scale per_tensor) rebuild;
            # whatever is refused names its key
            if refused is not None:
                assert names_a_key(refused, key, setup), (label, refused)
                # a key the helper says it applies is never refused
                assert not re.match(concrete(key), refused) or \
                    fg.CASE_KEYS[key][0] == fg.REFUSED, (label, refused)
            else:
                try:
                    close(ref, g["out"], 1e-3)
                except AssertionError as e:
                    raise AssertionError("%s: fragsim_golden's out is not fragsim's: %s"
                                         % (label, e))
            # fragsim_gen: the inputs regenerated, or refused by name (in
            # this process: the manifest's case_yaml is `fragsim show`'s)
            walked += 1
            if yaml is None:
                continue
            try:
                bad, refused = gen.check(yaml.safe_load(g.manifest["case_yaml"]), out)[0], None
            except fg.Refused as e:
                refused = str(e)
            if refused is not None:
                assert names_a_key(refused, key, setup), (label, refused)
                assert not re.match(concrete(key), refused) or \
                    gen.CASE_KEYS[key][0] == fg.REFUSED, (label, refused)
            else:
                assert not bad, (label, bad[:5])
    assert walked > 50
    if yaml is None:
        skip("PyYAML not installed: fragsim_gen.py (which needs it) was not walked")


WINDOW_CASES = {
    # Mistral 7B's window (4096) at twice its length: the query sees the
    # last 4096 keys of 8192
    "mistral-window": "fragsim: 1\nname: mistral-window\nmodel: {q_heads: 8, "
                      "kv_heads: 2, head_dim: 128, sliding_window: 4096}\n"
                      "sequences:\n  - {context: 8192, tokens: 1}\ngolden: all\n",
    # a chunk longer than the window, split-K segments across it
    "prefill-window": "fragsim: 1\nname: prefill-window\nmode: prefill\nmodel: "
                      "{q_heads: 4, kv_heads: 2, head_dim: 64, sliding_window: 5}\n"
                      "cache: {block_size: 4}\nsplit_k: {segment: 8}\n"
                      "sequences:\n  - {history: 20, chunk: 12}\n"
                      "  - {history: 2, chunk: 3}\ngolden: all\n",
}


def window_golden(tmp, name, *args):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(WINDOW_CASES[name])
    out = os.path.join(tmp, name + "".join(args).replace("-", "_"))
    sh([FRAGSIM, "run", path, "--out", out] + list(args), check=True)
    return fg.load(out)


def test_sliding_window_golden_rebuilt(tmp):
    """The issue's case: a sliding-window golden is the float64 attention
    with the window applied (before the fix, 0.065 away here, exit 0).
    Worked by hand: decode at position 8191 with W 4096 sees keys
    4096 .. 8191; the chunk tokens at positions 20 .. 31 with W 5 see
    5 keys each, those at 2 .. 4 of the short sequence 3, 4 and 5. The
    emulation's scores are finite exactly where the mask says."""
    for name, counts, first in (("mistral-window", [[4096]], [[4096]]),
                                ("prefill-window", [[5] * 12, [3, 4, 5] + [0] * 9],
                                 [list(range(16, 28)), [0, 0, 0] + [None] * 9])):
        g = window_golden(tmp, name)
        for s, (want, lo) in enumerate(zip(counts, first)):
            m = fg.mask(g, s)
            assert m.sum(axis=1).tolist() == want, (name, s)
            assert [int(np.argmax(r)) if r.any() else None for r in m] == lo, (name, s)
            ctx = m.shape[1]
            fin = np.isfinite(g["scores"][s, :, :, :ctx])        # [T, Hq, ctx]
            assert (fin == m[:, None, :]).all(), (name, s)
        ref = fg.reference_out(g)
        close(ref, g["out"], 1e-5)
        # the scalar executor (the per-lane specification) masks the same
        scalar = window_golden(tmp, name, "--exec", "scalar")
        assert all((scalar[n] == g[n]).all() for n in ("scores", "out")), name
        r = sh([sys.executable, GOLDEN, g.path])
        assert r.returncode == 0, r.stderr
        diff = float(r.stdout.decode().split("max |diff| ")[1])
        assert diff < 1e-5 * np.abs(g["out"]).max(), diff


def test_vllm_takes_the_features(tmp):
    """vllm(g) hands a kernel test the features as vLLM's attention layer
    takes them. By hand: W 4096 is flash-attention's window (4095, 0);
    12 ALiBi heads have slopes 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5,
    2^-3.5 (the ALiBi paper's get_slopes: 8 heads' slopes, then the odd
    ones of 16); soft-cap.yaml caps at 5 and has no window."""
    v = fg.vllm(window_golden(tmp, "mistral-window"))
    assert v["sliding_window"] == 4096 and v["window_size"] == (4095, 0)
    assert v["alibi_slopes"] is None and v["logits_soft_cap"] == 0
    assert abs(v["scale"] - 128 ** -0.5) < 1e-16
    v = fg.vllm(fg.load(run_case("cases/edge/alibi-12-heads.yaml", tmp)))
    want = [2.0 ** -e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]
    assert v["alibi_slopes"].dtype == np.float32
    assert (v["alibi_slopes"] == np.array(want, np.float32)).all()
    v = fg.vllm(fg.load(run_case("cases/edge/soft-cap.yaml", tmp)))
    assert v["logits_soft_cap"] == 5.0 and v["sliding_window"] is None
    assert v["window_size"] == (-1, -1) and v["alibi_slopes"] is None


def test_window_definition_is_stated(tmp):
    """The rule the tests above hold the emulation to is the one the
    schema (`fragsim show --schema`) and docs/design.md state."""
    r = sh([FRAGSIM, "show", "--schema"], check=True).stdout.decode()
    row = [ln for ln in r.splitlines() if ln.startswith("| `sliding_window` |")]
    assert len(row) == 1 and "a query at position p sees keys p-W+1 .. p" in row[0], row
    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        text = " ".join(f.read().split())
    assert "a query at position p (its `q_pos`, the index of its own key in the " \
        "context) sees the W keys p-W+1 .. p" in text


def edit_manifest(d, fn):
    p = os.path.join(d, "manifest.json")
    with open(p) as f:
        m = json.load(f)
    fn(m)
    with open(p, "w") as f:
        json.dump(m, f)


def test_window_ignored_is_caught(tmp):
    """The script's verdict: with the window taken out of the golden's
    case (what the helpers did before the fix), the rebuilt attention
    is not out, and fragsim_golden.py exits 1 saying so."""
    g = window_golden(tmp, "mistral-window")
    edit_manifest(g.path, lambda m: m.update(case_yaml=m["case_yaml"].replace(
        "sliding_window: 4096", "sliding_window: 0")))
    r = sh([sys.executable, GOLDEN, g.path])
    assert r.returncode == 1, r.stdout
    assert "out is not the attention of its inputs" in r.stderr.decode()


def test_unknown_key_is_refused_by_name(tmp):
    """A key neither helper knows (a newer fragsim's, here model.rope):
    refused with its name, exit 2, never ignored."""
    d = run_case("cases/edge/one-token.yaml", tmp)
    edit_manifest(d, lambda m: m.update(case_yaml=m["case_yaml"].replace(
        "model:\n", "model:\n  rope: yarn\n")))
    g = fg.load(d)
    for helper in (fg.reference_out, lambda g: fg.mask(g, 0)):
        try:
            helper(g)
        except fg.Refused as e:
            assert str(e).startswith("model.rope: a case key fragsim_golden.py "
                                     "does not know"), e
        else:
            raise AssertionError("model.rope was ignored")
    r = sh([sys.executable, GOLDEN, d])
    assert r.returncode == 2 and "out not rebuilt: model.rope: " in r.stderr.decode()
    shown = os.path.join(tmp, "shown.yaml")
    with open(shown, "w") as f:
        f.write(g.manifest["case_yaml"])
    r = sh([sys.executable, GEN, "check", shown, d])
    assert r.returncode == 2
    assert r.stderr.decode().startswith("fragsim_gen.py: error: model.rope: a case key "
                                        "fragsim_gen.py does not know"), r.stderr


def test_no_case_is_refused(tmp):
    """A manifest without case_yaml: the window and the rest are unknown,
    so mask and reference_out refuse it (exit 2) rather than guess."""
    d = run_case("cases/edge/one-token.yaml", tmp)
    edit_manifest(d, lambda m: m.pop("case_yaml"))
    r = sh([sys.executable, GOLDEN, d])
    assert r.returncode == 2
    assert "out not rebuilt: " in r.stderr.decode() and \
        "the manifest has no case_yaml" in r.stderr.decode(), r.stderr


def test_planted_bug_is_refused_by_name(tmp):
    """An --emulate-only golden of a planted bug: its out is the buggy
    kernel's, which reference_out does not rebuild: the script exits 2
    naming the key and the value."""
    path = os.path.join(tmp, "bug.yaml")
    with open(path, "w") as f:
        f.write("fragsim: 1\nname: bug\nkernel: {gqa_map: modulo}\n"
                "sequences:\n  - {context: 40}\n")
    out = os.path.join(tmp, "bug")
    sh([FRAGSIM, "run", path, "--emulate-only", "--out", out], check=True)
    r = sh([sys.executable, GOLDEN, out])
    assert r.returncode == 2, r.stdout
    assert "out not rebuilt: kernel.gqa_map: modulo: fragsim_golden.py refuses it" \
        in r.stderr.decode(), r.stderr


def test_out_not_the_attention_exits_1(tmp):
    """The verdict can fail: an out 1% off (its digest made to match, so
    the loader accepts it) is caught, exit 1."""
    d = run_case("cases/edge/one-token.yaml", tmp)
    p = os.path.join(d, "out.npy")
    np.save(p, (np.load(p) * np.float32(1.01)).astype(np.float32))
    with open(p, "rb") as f:
        digest = fg._sha256(f.read())

    def fix(m):
        for e in m["files"]:
            if e["name"] == "out.npy":
                e["sha256"] = digest
    edit_manifest(d, fix)
    r = sh([sys.executable, GOLDEN, d])
    assert r.returncode == 1 and "out is not the attention" in r.stderr.decode()


def test_field_record_names_real_classes(tmp):
    """docs/field-bugs.md, the public bugs the catalogue is measured
    against: every class it says plants a bug (`key: value` above its
    "Not modelled" section) is a kernel: key and value of the schema."""
    text = open(os.path.join(ROOT, "docs", "field-bugs.md")).read()
    modelled = text.split("## Not modelled")[0]
    schema = sh([FRAGSIM, "show", "--schema"], check=True).stdout.decode()
    rows = {m.group(1): m.group(2) for m in
            re.finditer(r"^\| `(\w+)` \| enum \| ([^|]*)\|", schema, re.M)}
    named = re.findall(r"`(\w+): (\w+)`", modelled)
    assert len(named) > 30
    for key, value in named:
        assert key in rows and "`%s`" % value in rows[key], (key, value)


def test_v_per_channel_rebuilt_and_checked(tmp):
    """cache.v_scale: per_channel on .npy V whose dim 0 is 2 c_j (absmax
    254: sV 2, Vq c_j), dim 1 e_j / 2 (absmax 63.5: sV 0.5) and dims 2..
    zero in every token (scale 0, bytes 0), worked by hand: fragsim_gen
    quantizes V per (kv head, dim) over every valid token and matches the
    golden's v_cache and v_scale [Hkv, D] bit for bit, and finds a
    tampered scale; gather_v broadcasts the scales and reference_out
    (float64 from the quantized inputs) rebuilds fragsim's f32 PV out."""
    ctx, D = 40, 64
    c = np.array([127 if j == 0 else j % 7 - 3 for j in range(ctx)], np.float32)
    e = np.array([-127 if j == 5 else j % 3 for j in range(ctx)], np.float32)
    v = np.zeros((1, ctx, 1, D), np.float32)
    v[0, :, 0, 0], v[0, :, 0, 1] = 2 * c, e / 2
    np.save(os.path.join(tmp, "v.npy"), v)
    path = os.path.join(tmp, "chan.yaml")
    with open(path, "w") as f:
        f.write("fragsim: 1\nname: chan\nmodel: {q_heads: 2, kv_heads: 1, head_dim: %d}\n"
                "cache: {v_scale: per_channel}\nsequences:\n  - {context: %d}\n"
                "data: {seed: 4, v: {npy: v.npy}}\ngolden: all\n" % (D, ctx))
    out = os.path.join(tmp, "g")
    sh([FRAGSIM, "run", path, "--out", out], check=True)
    g = fg.load(out)
    assert g["v_scale"].shape == (1, D)
    assert g["v_scale"][0, 0] == 2 and g["v_scale"][0, 1] == 0.5
    assert not g["v_scale"][0, 2:].any()
    vq, vs = fg.gather_v(g, 0)
    assert np.array_equal(vq[:, 0, 0], c.astype(np.int8))
    assert np.array_equal(vq[:, 0, 1], e.astype(np.int8)) and not vq[:, 0, 2:].any()
    assert vs.shape == (ctx, 1, D)
    close(fg.reference_out(g), g["out"], 1e-3)
    # fragsim_gen on generated V (a .npy V is refused there): equal, then
    # one scale changed is found
    path = os.path.join(tmp, "gen.yaml")
    with open(path, "w") as f:
        f.write("fragsim: 1\nname: chan-gen\nmodel: {q_heads: 4, kv_heads: 2, head_dim: 32}\n"
                "cache: {v_scale: per_channel}\nsequences:\n  - {context: 21}\n"
                "  - {context: 9}\nquant: {clip: 90}\n"
                "data: {seed: 8, v: {outlier_channels: [6]}}\n")
    out = os.path.join(tmp, "gg")
    sh([FRAGSIM, "run", path, "--emulate-only", "--out", out], check=True)
    shown = os.path.join(tmp, "gen.shown.yaml")
    with open(shown, "w") as f:
        f.write(sh([FRAGSIM, "show", path], check=True).stdout.decode())
    r = sh([sys.executable, GEN, "check", shown, out])
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    vs = np.load(os.path.join(out, "v_scale.npy"))
    assert vs.shape == (2, 32)
    vs[1, 6] *= 2
    np.save(os.path.join(out, "v_scale.npy"), vs)
    r = sh([sys.executable, GEN, "check", shown, out])
    assert r.returncode == 1 and "v_scale" in r.stdout.decode(), r.stdout.decode()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
