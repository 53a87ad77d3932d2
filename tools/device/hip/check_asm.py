#!/usr/bin/python3
"""check_asm.py FILE.s KERNEL MNEMONIC COUNT [LABEL] [--with TEXT] [--without TEXT] [--pv N]

Check one kernel in the device assembly that `hipcc --cuda-device-only -S`
wrote: the matrix instruction MNEMONIC appears exactly COUNT times in the
kernel's body (once per K-step of the unrolled loop), the kernel uses no
scratch (private segment size 0), and print its register counts. KERNEL
is the kernel's name as written in the source (matched inside the
mangled symbol); NAME<N> or NAME<N,M,...> names the instance of a kernel
template over ints (qk_tiles<8>: _Z8qk_tilesILi8EE..., probe<1,0>:
_Z5probeILi1ELi0EE...). --with TEXT: every one of those instructions
holds TEXT in its operands (RDNA3's iu8 signedness: neg_lo:[1,1,0]);
--without TEXT: none does. --pv N: INT8 PV's column tiles of one group
(pv_units in attn_mmac.hip): exactly N of the instructions start from
C = 0 and read one A operand register (P, shared by the group's column
tiles); the QK instructions beside them accumulate, or read another A.
One line of output:

  LABEL: KERNEL: 8 x v_mfma_i32_16x16x32_i8 (want 8), scratch 0, VGPRs 36 + AGPRs 4 = 40, SGPRs 30: OK

Exit status: 0 every check holds, 1 one does not, 2 bad usage or a file
that holds no such kernel.
"""
import re
import sys


def fail(msg, code=2):
    sys.stderr.write("check_asm: error: %s\n" % msg)
    sys.exit(code)


def main(argv):
    usage = "usage: check_asm.py FILE.s KERNEL MNEMONIC COUNT [LABEL] [--with TEXT] [--without TEXT] [--pv N]"
    argv, want_in, want_out, want_pv = list(argv), [], [], []
    for opt, into in (("--with", want_in), ("--without", want_out), ("--pv", want_pv)):
        while opt in argv:
            at = argv.index(opt)
            if at + 1 >= len(argv):
                fail(usage)
            into.append(argv[at + 1])
            del argv[at:at + 2]
    if len(argv) not in (5, 6):
        fail(usage)
    path, kernel, mnemonic, want = argv[1], argv[2], argv[3], argv[4]
    label = argv[5] if len(argv) == 6 else path
    try:
        want = int(want)
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except (ValueError, OSError) as e:
        fail("%s: %s" % (path, e))
    # The kernel's symbol: a label line naming it, mangled or not.
    sym = None
    t = re.match(r"^(\w+)<(\d+(?:,\d+)*)>$", kernel)
    prefix = ("_Z%d%sI%sE" % (len(t.group(1)), t.group(1),
                              "".join("Li%sE" % n for n in t.group(2).split(","))) if t
              else "_Z%d%s" % (len(kernel), kernel))
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if m and (m.group(1) == kernel or m.group(1).startswith(prefix)):
            sym, start = m.group(1), i
            break
    if sym is None:
        fail("%s: no kernel '%s'" % (path, kernel))
    body, stats, operands = 0, {}, []
    for line in lines[start + 1:]:
        if line.startswith(".Lfunc_end"):
            break
        if line.split(";")[0].split() [:1] == [mnemonic]:
            body += 1
            operands.append(line.split(";")[0])
    # The comments the AMDGPU backend prints after the function, and the
    # kernel descriptor's private segment size.
    in_kd = False
    for line in lines[start:]:
        m = re.match(r"^\s*; (NumVgprs|NumAgprs|TotalNumVgprs|NumSgprs|ScratchSize): (\d+)", line)
        if m and m.group(1) not in stats:
            stats[m.group(1)] = int(m.group(2))
        if re.match(r"^\s*\.amdhsa_kernel %s\s*$" % re.escape(sym), line):
            in_kd = True
        m = re.match(r"^\s*\.amdhsa_private_segment_fixed_size (\d+)", line)
        if in_kd and m:
            stats["private"] = int(m.group(1))
            in_kd = False
    for k in ("NumVgprs", "ScratchSize", "private"):
        if k not in stats:
            fail("%s: kernel '%s' has no %s" % (path, kernel, k))
    problems = []
    if body != want:
        problems.append("%d x %s, want %d" % (body, mnemonic, want))
    for text in want_in:
        n = sum(text not in o for o in operands)
        if n:
            problems.append("%d of them without %s" % (n, text))
    for text in want_out:
        n = sum(text in o for o in operands)
        if n:
            problems.append("%d of them with %s" % (n, text))
    pv = None
    if want_pv:
        # operands: D, A, B, C (and modifiers after C)
        fresh = {}
        for o in operands:
            ops = [x.strip() for x in o.split(None, 1)[1].split(",")]
            if len(ops) >= 4 and ops[3].split()[0] == "0":
                fresh[ops[1]] = fresh.get(ops[1], 0) + 1
        pv = max(fresh.values()) if fresh else 0
        try:
            if pv != int(want_pv[-1]):
                problems.append("%d from C = 0 on one A operand, want %s" % (pv, want_pv[-1]))
        except ValueError:
            fail(usage)
    if stats["private"] or stats["ScratchSize"]:
        problems.append("scratch: private segment %d, ScratchSize %d"
                        % (stats["private"], stats["ScratchSize"]))
    regs = "VGPRs %d" % stats["NumVgprs"]
    if "NumAgprs" in stats:
        regs += " + AGPRs %d = %d" % (stats["NumAgprs"],
                                     stats.get("TotalNumVgprs", stats["NumVgprs"]))
    mods = "".join(", with %s" % t for t in want_in) + "".join(", without %s" % t for t in want_out)
    if pv is not None:
        mods += "; %d of them from C = 0 on one A operand (PV, want %s)" % (pv, want_pv[-1])
    print("%s: %s: %d x %s (want %d%s), scratch %d, %s, SGPRs %s: %s"
          % (label, kernel, body, mnemonic, want, mods, stats["private"], regs,
             stats.get("NumSgprs", "?"), "; ".join(problems) if problems else "OK"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
