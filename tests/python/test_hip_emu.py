"""test_hip_emu.py - the pieces of tools/device/emu/ (make hip-emu,
docs/hip-emu.md) that need no tinygrad: the code-object loader of
emu_runtime.py on a hand-built ELF, the bundle's gfx94x and gfx11
objects, the kernel-descriptor refusals (CDNA3 and RDNA3), and
patch_tinygrad.py on hand-made checkouts (the user's files untouched).

    pytest tests/python
    python3 tests/python/test_hip_emu.py

Expected values are worked out by hand from the ELF64 and AMDGPU
relocation definitions (R_AMDGPU_ABS64 = S + A, R_AMDGPU_RELATIVE64 =
B + A) and the AMDHSA kernel descriptor layout; make hip-emu runs the
whole path on tinygrad.
"""
import os
import struct
import subprocess
import sys

from test_golden import ROOT, main as run_tests  # noqa: E402

EMU = os.path.join(ROOT, "tools", "device", "emu")
sys.path.insert(0, EMU)
import emu_runtime as er  # noqa: E402


def elf(relas):
    """An EM_AMDGPU ELF: one PT_LOAD of 16 bytes at vaddr 0x100, symbol
    'tab' at 0x100, the given (offset, type, symbol, addend) relocations,
    and a metadata note {amdhsa.version: [1, 2], amdhsa.kernels: [{.name: k}]}."""
    seg = bytes(range(16))
    dynstr = b"\0tab\0"
    dynsym = bytes(24) + struct.pack("<IBBHQQ", 1, 0x11, 0, 1, 0x100, 16)
    rela = b"".join(struct.pack("<QQq", o, (s << 32) | t, a) for o, t, s, a in relas)
    meta = (b"\x82\xaeamdhsa.version\x92\x01\x02\xaeamdhsa.kernels\x91\x81\xa5.name\xa1k")
    note = struct.pack("<III", 7, len(meta), 32) + b"AMDGPU\0\0" + meta + bytes(-len(meta) % 4)
    body = {0x100: seg}
    at = 0x110
    secs = []
    for typ, data, link in ((11, dynsym, 2), (3, dynstr, 0), (4, rela, 1), (7, note, 0)):
        body[at] = data
        secs.append((typ, at, len(data), link))
        at += (len(data) + 7) & ~7
    shoff = at
    img = bytearray(shoff + 64 * (len(secs) + 1))
    img[0:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<HHIQQQIHHHHHH", img, 16, 3, 224, 1, 0, 64, shoff, 0, 64, 56, 1, 64,
                     len(secs) + 1, 0)
    struct.pack_into("<IIQQQQQQ", img, 64, 1, 6, 0x100, 0x100, 0x100, 16, 16, 0x1000)
    for off, data in body.items():
        img[off:off + len(data)] = data
    for k, (typ, off, size, link) in enumerate(secs):
        struct.pack_into("<IIQQQQIIQQ", img, shoff + 64 * (k + 1), 0, typ, 0, 0, off, size, link,
                         0, 8, 24 if typ in (4, 11) else 0)
    return bytes(img)


def test_loader_applies_abs64_and_relative64(tmp):
    m, base, syms, meta = er._load_elf(elf([(0x108, 3, 1, 4), (0x100, 13, 0, 0x20)]))
    assert syms["tab"] == 0x100
    assert struct.unpack_from("<Q", m, 0x108)[0] == base + 0x100 + 4     # S + A
    assert struct.unpack_from("<Q", m, 0x100)[0] == base + 0x20          # B + A
    assert meta == {"amdhsa.version": [1, 2], "amdhsa.kernels": [{".name": "k"}]}


def test_loader_refuses_an_unknown_relocation(tmp):
    try:
        er._load_elf(elf([(0x108, 7, 1, 0)]))
    except er.EmuError as e:
        assert "relocation type 7 at 0x108 not handled" in str(e)
    else:
        raise AssertionError("relocation type 7 accepted")


def test_bundle_without_gfx94x_names_its_entries(tmp):
    ident = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
    b = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<QQQQ", 1, 0, 0, len(ident)) + ident
    try:
        er._bundle_entry(b)
    except er.EmuError as e:
        assert str(e) == ("the bundle has no gfx940-942 or gfx1100-1151 code object "
                          "(entries: hipv4-amdgcn-amd-amdhsa--gfx90a)")
    else:
        raise AssertionError("a gfx90a bundle accepted")


def test_bundle_takes_a_gfx1100_object_as_rdna3(tmp):
    # a host entry first, then the gfx1100 object (4 bytes at offset 0x100)
    host, dev = b"host-x86_64-unknown-linux-gnu", b"hipv4-amdgcn-amd-amdhsa--gfx1100"
    b = bytearray(b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 2))
    b += struct.pack("<QQQ", 0, 0, len(host)) + host + struct.pack("<QQQ", 0x100, 4, len(dev)) + dev
    b += bytes(0x100 - len(b)) + b"\x7fELF"
    ident, img = er._bundle_entry(bytes(b))
    assert ident == dev.decode() and img == b"\x7fELF"
    assert er._ARCH["gfx1100"] == "rdna3" and er._ARCH["gfx942"] == "cdna"


def kd(props, user, private=0):
    return dict(props=props, rsrc2=user << 1, private=private)


def test_descriptor_refusals(tmp):
    assert er.check_descriptor(kd(1 << 3, 2)) == ""      # kernarg pointer only: runs
    why = er.check_descriptor(kd(1 << 3 | 1 << 1, 4))
    assert "asks for user SGPRs the mock dispatch does not set: dispatch_ptr (2 SGPRs)" in why
    why = er.check_descriptor(kd(1 << 0 | 1 << 3, 6))
    assert "private_segment_buffer (4 SGPRs)" in why
    assert "USER_SGPR_COUNT is 3" in er.check_descriptor(kd(1 << 3, 3))
    assert "uses scratch (private_segment_fixed_size 16)" in er.check_descriptor(kd(1 << 3, 2, 16))
    # wave32 is RDNA3's, not CDNA3's; LLVM 15's gfx11 count of 15 user SGPRs
    # with the kernarg pointer alone runs there only
    w32 = 1 << 3 | 1 << 10
    assert er.check_descriptor(kd(w32, 2)) == "it is a wave32 kernel; CDNA3 runs wave64"
    assert er.check_descriptor(kd(w32, 15), "rdna3") == ""
    assert er.check_descriptor(kd(w32, 2), "rdna3") == ""
    assert "USER_SGPR_COUNT is 15, the kernarg pointer alone is 2" in er.check_descriptor(kd(1 << 3, 15))
    assert "USER_SGPR_COUNT is 17" in er.check_descriptor(kd(w32, 17), "rdna3")
    assert er.check_descriptor(kd(1 << 3, 15), "rdna3") == \
        "it is a wave64 kernel; the emulator runs RDNA3 waves of 32 lanes only"


def checkout(d, text):
    os.makedirs(os.path.join(d, "test", "mockgpu", "amd"))
    os.makedirs(os.path.join(d, "tinygrad"))
    with open(os.path.join(d, "test", "mockgpu", "amd", "emu.py"), "w") as f:
        f.write(text)


def patch(src, dst):
    return subprocess.run([sys.executable, os.path.join(EMU, "patch_tinygrad.py"), src, dst],
                          capture_output=True, text=True)


def test_patcher_copies_and_patches_never_the_source(tmp):
    sys.path.insert(0, EMU)
    import patch_tinygrad as pt
    text = "".join(pt.NEEDED) + "\n" + "".join(old for _, old, _ in pt.FIXES)
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    checkout(src, text)
    r = patch(src, dst)
    assert r.returncode == 0, r.stderr
    assert "not the verified a9069c177a9da9cca18593edf55acd2e6073cca6" in r.stdout
    with open(os.path.join(src, "test", "mockgpu", "amd", "emu.py")) as f:
        assert f.read() == text
    with open(os.path.join(dst, "test", "mockgpu", "amd", "emu.py")) as f:
        new = f.read()
    assert all(n in new and o not in new for _, o, n in pt.FIXES)


def test_patcher_refuses_a_checkout_it_does_not_fit(tmp):
    sys.path.insert(0, EMU)
    import patch_tinygrad as pt
    r = patch(tmp, os.path.join(tmp, "dst"))
    assert r.returncode == 2 and "no test/mockgpu/amd/emu.py" in r.stderr
    src = os.path.join(tmp, "src")
    checkout(src, "".join(pt.NEEDED) + pt.FIXES[1][1])    # the mfma line changed
    r = patch(src, os.path.join(tmp, "dst"))
    assert r.returncode == 2 and "fix mfma-i8: the line it replaces is missing" in r.stderr
    src2 = os.path.join(tmp, "src2")
    checkout(src2, "def _compile_sop(\n")
    r = patch(src2, os.path.join(tmp, "dst"))
    assert r.returncode == 2 and "the emulator has no 'def run_asm(" in r.stderr


def fake_module(kernel, props=1 << 3, user=2, arch="cdna"):
    """A loaded module of one kernel: its descriptor in a ctypes buffer
    (kernarg pointer only, entry 0x100 past the descriptor), and a
    stand-in emulator that records the run_asm call."""
    import ctypes
    import types
    buf = (ctypes.c_char * 64)()
    struct.pack_into("<IIIIq", buf, 0, 0, 0, 64, 0, 0x100)
    struct.pack_into("<IIIH", buf, 44, 0, 0, user << 1, props)
    base = ctypes.addressof(buf)
    calls = []
    fake = types.ModuleType("test.mockgpu.amd.emu")
    fake.run_asm = lambda *a, **k: calls.append((a, k)) or 0
    for name in ("test", "test.mockgpu", "test.mockgpu.amd"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["test.mockgpu.amd.emu"] = fake
    sys.modules["test.mockgpu.amd"].emu = fake
    er._modules.append((buf, base, {"k.kd": 0}, {"k": kernel}, (1, 2), "test", arch))
    return len(er._modules) - 1, base, calls


def test_launch_lays_out_explicit_and_v5_hidden_arguments(tmp):
    import ctypes
    kernel = {".name": "k", ".kernarg_segment_size": 64, ".args": [
        {".value_kind": "global_buffer", ".offset": 0, ".size": 8},
        {".value_kind": "by_value", ".offset": 8, ".size": 4},
        {".value_kind": "hidden_block_count_x", ".offset": 16, ".size": 4},
        {".value_kind": "hidden_block_count_y", ".offset": 20, ".size": 4},
        {".value_kind": "hidden_group_size_x", ".offset": 28, ".size": 2},
        {".value_kind": "hidden_grid_dims", ".offset": 34, ".size": 2},
        {".value_kind": "hidden_printf_buffer", ".offset": 40, ".size": 8}]}
    mod, base, calls = fake_module(kernel)
    ptr, n = ctypes.c_uint64(0x1122334455667788), ctypes.c_int32(-5)
    argv = (ctypes.c_void_p * 2)(ctypes.addressof(ptr), ctypes.addressof(n))
    assert er.launch(mod, "k", (7, 3, 1), (64, 1, 1), 0, ctypes.addressof(argv)) == ""
    (a, k), = calls
    assert a[0] == base + 0x100 and a[2:8] == (7, 3, 1, 64, 1, 1)
    kargs = a[8]
    assert k["user_data"] == [kargs & 0xffffffff, kargs >> 32] and k["arch"] == "cdna"
    raw = ctypes.string_at(kargs, 48)
    assert struct.unpack_from("<Qi", raw, 0) == (0x1122334455667788, -5)
    assert struct.unpack_from("<II", raw, 16) == (7, 3)             # block counts
    assert struct.unpack_from("<H", raw, 28)[0] == 64               # group size x
    assert struct.unpack_from("<H", raw, 34)[0] == 2                # grid dims: y > 1
    assert struct.unpack_from("<Q", raw, 40)[0] == 0                # no printf buffer


def test_launch_runs_an_rdna3_kernel_as_rdna3(tmp):
    kernel = {".name": "k", ".kernarg_segment_size": 8,
              ".args": [{".value_kind": "by_value", ".offset": 0, ".size": 4}]}
    mod, base, calls = fake_module(kernel, props=1 << 3 | 1 << 10, user=15, arch="rdna3")
    import ctypes
    n = ctypes.c_int32(9)
    argv = (ctypes.c_void_p * 1)(ctypes.addressof(n))
    assert er.launch(mod, "k", (4, 1, 1), (32, 1, 1), 0, ctypes.addressof(argv)) == ""
    (a, k), = calls
    assert k["arch"] == "rdna3" and a[2:8] == (4, 1, 1, 32, 1, 1)
    assert k["rsrc2"] >> 1 & 0x1f == 15    # the workgroup ids go to s15, as on the GPU


def test_launch_refuses_what_it_cannot_fill(tmp):
    kernel = {".name": "k", ".kernarg_segment_size": 16,
              ".args": [{".value_kind": "hidden_magic", ".offset": 0, ".size": 8}]}
    mod, _, calls = fake_module(kernel)
    assert er.launch(mod, "k", (1, 1, 1), (64, 1, 1), 0, 0) == \
        "kernel argument kind hidden_magic at offset 0 is not one this runtime fills"
    mod, _, calls = fake_module(dict(kernel, **{".args": []}), props=1 << 3 | 1 << 2, user=4)
    assert "queue_ptr (2 SGPRs)" in er.launch(mod, "k", (1, 1, 1), (64, 1, 1), 0, 0)
    assert calls == []


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
