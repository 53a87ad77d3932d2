#!/usr/bin/env python3
"""patch_tinygrad.py - make a patched copy of a tinygrad checkout for the
HIP harnesses on tinygrad's mock AMD GPU (tools/device/emu/, docs/hip-emu.md).

  patch_tinygrad.py SRC DST

SRC is the user's checkout; it is only read. DST receives a copy of
SRC's tinygrad/, test/mockgpu/ and test/amd/helpers.py (what the
emulator imports) with three
fixes to test/mockgpu/amd/emu.py, each applied by replacing one exact
line of the verified commit:

  mfma-i8   _compile_mfma's cvt_elem stores the sign-extended byte, an
            int32, into the uint32 temp array: the C tinygrad renders for
            every V_MFMA_*_I8 does not compile (clang 14/15 reject it).
            The fix bitcasts it to uint32; prod() bitcasts it back.
  getpc     _compile_sop gives a SOP1's pcode no PC, so s_getpc_b64
            (D0.i64 = PC + 4LL) fails with "unknown variable: PC". The
            harness reaches its lane-map tables through s_getpc and the
            GOT. The fix passes the instruction's PC, as SOPP does.
  lds-exec  _compile_mem_op reads LDS for every lane of a DS load, the
            lanes EXEC masks off too, at the address their VGPR holds,
            unchecked: an idle lane's stale address past the kernel's LDS
            reads past the emulator's buffer, and the process faults
            (INT8 PV's row phase, one lane a row, pv_tile.h). The fix
            gives a masked lane address 0; active lanes read as before,
            and a masked lane's result was never written back.

Exit status: 0 copied and patched; 2 SRC is not a checkout these fixes
fit (the message says which line is missing or what commit it is).
"""
import os
import shutil
import subprocess
import sys

VERIFIED = "a9069c177a9da9cca18593edf55acd2e6073cca6"

# (name, the exact line at VERIFIED, its replacement)
FIXES = [
    ("mfma-i8",
     "      return (byte.cast(dtypes.int32) ^ UOp.const(0x80, dtypes.int32)) - UOp.const(0x80, dtypes.int32)\n",
     "      return ((byte.cast(dtypes.int32) ^ UOp.const(0x80, dtypes.int32)) - UOp.const(0x80, dtypes.int32)).bitcast(dtypes.uint32)\n"),
    ("getpc",
     "    srcs = {'S0': ctx.rsrc_dyn(ssrc0_off, None, bits['s0'], literal)}\n",
     "    srcs = {'S0': ctx.rsrc_dyn(ssrc0_off, None, bits['s0'], literal), 'PC': ctx.rpc().cast(dtypes.int64)}\n"),
    ("lds-exec",
     "      addr = ctx.rvgpr_dyn(addr_reg, lane)\n",
     "      addr = _lane_active(exec_mask, lane).where(ctx.rvgpr_dyn(addr_reg, lane), _c(0))\n"),
]
# What the runtime (emu_runtime.py) calls: each must still be there.
NEEDED = ["def run_asm(lib: int, lib_sz: int, gx: int, gy: int, gz: int, lx: int, ly: int, lz: int, args_ptr: int, rsrc2: int = 0x19c,\n",
          "            scratch_size: int = 0, arch: str = \"rdna3\", user_data: list[int]|None = None) -> int:\n",
          "def _compile_mfma(", "def _compile_sop("]


def fail(msg):
    print(f"patch_tinygrad: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        print("usage: patch_tinygrad.py SRC DST", file=sys.stderr)
        sys.exit(2)
    src, dst = sys.argv[1], sys.argv[2]
    emu = os.path.join(src, "test/mockgpu/amd/emu.py")
    if not os.path.isfile(emu):
        fail(f"{src}: no test/mockgpu/amd/emu.py: not a tinygrad checkout, or one older than its AMD emulator")
    try:
        head = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head = "(not a git checkout)"
    with open(emu) as f:
        text = f.read()
    missing = [n.strip() for n in NEEDED if n not in text]
    if missing:
        fail(f"{emu}: at {head}, not at the verified {VERIFIED}: the emulator has no '{missing[0]}'")
    for name, old, new in FIXES:
        if new in text:
            continue	# a later tinygrad may carry the fix itself
        if text.count(old) != 1:
            fail(f"{emu}: at {head}, not at the verified {VERIFIED}: fix {name}: the line it replaces is "
                 f"{'missing' if old not in text else 'there more than once'}: {old.strip()!r}")
        text = text.replace(old, new)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    for d in ("tinygrad", "test/mockgpu"):
        shutil.copytree(os.path.join(src, d), os.path.join(dst, d),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for f in ("test/__init__.py", "test/amd/__init__.py", "test/amd/helpers.py"):
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))
        else:
            open(os.path.join(dst, f), "a").close()
    with open(os.path.join(dst, "test/mockgpu/amd/emu.py"), "w") as f:
        f.write(text)
    with open(os.path.join(dst, "COMMIT"), "w") as f:
        f.write(head + "\n")
    note = "" if head == VERIFIED else f" (not the verified {VERIFIED}: the fixes' lines matched)"
    print(f"patch_tinygrad: {src} at {head}{note}: copied to {dst}, fixes mfma-i8, getpc and lds-exec applied")


if __name__ == "__main__":
    main()
