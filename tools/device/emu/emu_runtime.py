"""emu_runtime.py - the Python half of hip_emu.c (libamdhip64.so.5 for
tinygrad's mock AMD GPU; docs/hip-emu.md): the code-object loader and
the launch.

  register_bundle(bundle)   the offload bundle of one __hipRegisterFatBinary:
                            its gfx94x (CDNA3) or gfx11 (RDNA3) code
                            object is loaded (segments,
                            R_AMDGPU_ABS64 / RELATIVE64 relocations) and
                            its metadata read; returns the module number
  launch(module, name, grid, block, shmem, args)
                            lays out the kernel arguments (explicit from
                            args, a void** of the harness, hidden ones
                            filled, code object v4 and v5), checks the
                            kernel descriptor and calls the emulator's
                            run_asm; returns "" or the reason it refuses

Nothing here is tinygrad's: the emulator (test/mockgpu/amd/emu.py of the
patched copy on sys.path) only executes the instructions.
"""
import ctypes
import mmap
import struct

_modules = []   # [(mapping, base, {symbol: value}, {kernel name: metadata})]
_keep = []      # kernarg buffers of past launches (the emulator is done with them)


class EmuError(Exception):
    pass


# --- msgpack (the AMDGPU metadata note), the subset the note uses ----------
def _unpack(b, i):
    t = b[i]
    i += 1
    if t <= 0x7f:
        return t, i
    if t >= 0xe0:
        return t - 0x100, i
    if 0xa0 <= t <= 0xbf:
        n = t & 0x1f
        return b[i:i + n].decode(), i + n
    if 0x90 <= t <= 0x9f:
        return _array(b, i, t & 0x0f)
    if 0x80 <= t <= 0x8f:
        return _map(b, i, t & 0x0f)
    fixed = {0xcc: "B", 0xcd: ">H", 0xce: ">I", 0xcf: ">Q", 0xd0: "b", 0xd1: ">h",
             0xd2: ">i", 0xd3: ">q", 0xca: ">f", 0xcb: ">d"}
    if t in fixed:
        n = struct.calcsize(fixed[t])
        return struct.unpack_from(fixed[t], b, i)[0], i + n
    if t in (0xc0, 0xc2, 0xc3):
        return {0xc0: None, 0xc2: False, 0xc3: True}[t], i
    if t in (0xd9, 0xda, 0xdb, 0xc4, 0xc5, 0xc6):
        w = {0xd9: 1, 0xda: 2, 0xdb: 4, 0xc4: 1, 0xc5: 2, 0xc6: 4}[t]
        n = int.from_bytes(b[i:i + w], "big")
        i += w
        raw = bytes(b[i:i + n])
        return (raw.decode() if t >= 0xd9 else raw), i + n
    if t in (0xdc, 0xdd):
        w = 2 if t == 0xdc else 4
        return _array(b, i + w, int.from_bytes(b[i:i + w], "big"))
    if t in (0xde, 0xdf):
        w = 2 if t == 0xde else 4
        return _map(b, i + w, int.from_bytes(b[i:i + w], "big"))
    raise EmuError(f"metadata: msgpack type 0x{t:02x} not understood")


def _array(b, i, n):
    out = []
    for _ in range(n):
        v, i = _unpack(b, i)
        out.append(v)
    return out, i


def _map(b, i, n):
    out = {}
    for _ in range(n):
        k, i = _unpack(b, i)
        v, i = _unpack(b, i)
        out[k] = v
    return out, i


# --- the offload bundle and the ELF code object -----------------------------
# The targets a code object may be for, and the emulator's arch for each:
# its CDNA tables (CDNA4's, which encode these instructions alike) or its
# RDNA3 ones.
_ARCH = {"gfx940": "cdna", "gfx941": "cdna", "gfx942": "cdna", "gfx1100": "rdna3",
         "gfx1101": "rdna3", "gfx1102": "rdna3", "gfx1103": "rdna3", "gfx1150": "rdna3",
         "gfx1151": "rdna3"}


def _bundle_entry(bundle):
    if bundle[:24] != b"__CLANG_OFFLOAD_BUNDLE__":
        raise EmuError("not a clang offload bundle")
    (n,) = struct.unpack_from("<Q", bundle, 24)
    at, ids = 32, []
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", bundle, at)
        ident = bundle[at + 24:at + 24 + idlen].decode()
        at += 24 + idlen
        ids.append(ident)
        if "amdgcn-amd-amdhsa" in ident and ident.split("-")[-1].split(":")[0] in _ARCH:
            return ident, bundle[off:off + size]
    raise EmuError(f"the bundle has no gfx940-942 or gfx1100-1151 code object (entries: {', '.join(ids)})")


def _load_elf(img):
    if img[:4] != b"\x7fELF" or img[4] != 2:
        raise EmuError("the code object is not a 64-bit ELF")
    (e_machine,) = struct.unpack_from("<H", img, 18)
    if e_machine != 224:    # EM_AMDGPU
        raise EmuError(f"the code object's machine is {e_machine}, not EM_AMDGPU (224)")
    e_phoff, e_shoff = struct.unpack_from("<QQ", img, 32)
    e_phentsize, e_phnum, e_shentsize, e_shnum = struct.unpack_from("<HHHH", img, 54)
    phs = [struct.unpack_from("<IIQQQQQQ", img, e_phoff + k * e_phentsize) for k in range(e_phnum)]
    loads = [p for p in phs if p[0] == 1]   # PT_LOAD
    size = max(p[3] + p[6] for p in loads)  # p_vaddr + p_memsz
    size = (size + 0xfff) & ~0xfff
    m = mmap.mmap(-1, size, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    for p in loads:
        _, _, off, vaddr, _, filesz, _, _ = p
        m[vaddr:vaddr + filesz] = img[off:off + filesz]
    shs = [struct.unpack_from("<IIQQQQIIQQ", img, e_shoff + k * e_shentsize) for k in range(e_shnum)]
    syms, notes = {}, []
    strtabs = {}
    for sh in shs:
        sh_type, sh_off, sh_size, sh_link = sh[1], sh[4], sh[5], sh[6]
        if sh_type in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            st = shs[sh_link]
            strs = img[st[4]:st[4] + st[5]]
            tab = []
            for k in range(sh_size // 24):
                st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", img, sh_off + 24 * k)
                name = strs[st_name:strs.index(b"\0", st_name)].decode()
                tab.append((name, st_value, st_shndx))
                if name and st_shndx:
                    syms[name] = st_value
            strtabs[id(sh)] = tab
        if sh_type == 7:        # SHT_NOTE
            notes.append(img[sh_off:sh_off + sh_size])
    for sh in shs:
        if sh[1] != 4:          # SHT_RELA
            continue
        tab = strtabs[id(shs[sh[6]])]
        for k in range(sh[5] // 24):
            r_offset, r_info, r_addend = struct.unpack_from("<QQq", img, sh[4] + 24 * k)
            rtype, rsym = r_info & 0xffffffff, r_info >> 32
            if rtype == 3:      # R_AMDGPU_ABS64: S + A
                name, value, shndx = tab[rsym]
                if not shndx:
                    raise EmuError(f"relocation against undefined symbol '{name}'")
                val = base + value + r_addend
            elif rtype == 13:   # R_AMDGPU_RELATIVE64: B + A
                val = base + r_addend
            else:
                raise EmuError(f"relocation type {rtype} at 0x{r_offset:x} not handled "
                               "(R_AMDGPU_ABS64 and R_AMDGPU_RELATIVE64 are)")
            struct.pack_into("<Q", m, r_offset, val & (2**64 - 1))
    meta = None
    for n in notes:
        at = 0
        while at + 12 <= len(n):
            namesz, descsz, ntype = struct.unpack_from("<III", n, at)
            name = n[at + 12:at + 12 + namesz].rstrip(b"\0")
            desc_at = at + 12 + ((namesz + 3) & ~3)
            if name == b"AMDGPU" and ntype == 32:   # NT_AMDGPU_METADATA
                meta, _ = _unpack(n[desc_at:desc_at + descsz], 0)
            at = desc_at + ((descsz + 3) & ~3)
    if meta is None:
        raise EmuError("the code object has no AMDGPU metadata note (code object v3 or later)")
    return m, base, syms, meta


def register_bundle(bundle):
    ident, img = _bundle_entry(bytes(bundle))
    m, base, syms, meta = _load_elf(img)
    kernels = {k[".name"]: k for k in meta.get("amdhsa.kernels", [])}
    _modules.append((m, base, syms, kernels, tuple(meta.get("amdhsa.version", [0, 0])), ident,
                     _ARCH[ident.split("-")[-1].split(":")[0]]))
    return len(_modules) - 1


# --- the launch --------------------------------------------------------------
# kernel_code_properties bits (AMDHSA kernel descriptor, offset 56): the
# user SGPRs a descriptor may ask for. The mock dispatch (run_asm's
# user_data) loads what we pass; we pass only the kernarg pointer.
_USER_SGPRS = [(0, "private_segment_buffer", 4), (1, "dispatch_ptr", 2), (2, "queue_ptr", 2),
               (3, "kernarg_segment_ptr", 2), (4, "dispatch_id", 2), (5, "flat_scratch_init", 2),
               (6, "private_segment_size", 1)]

_HIDDEN_ZERO = {"hidden_none", "hidden_printf_buffer", "hidden_hostcall_buffer",
                "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_default_queue",
                "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_queue_ptr",
                "hidden_private_base", "hidden_shared_base", "hidden_global_offset_x",
                "hidden_global_offset_y", "hidden_global_offset_z", "hidden_remainder_x",
                "hidden_remainder_y", "hidden_remainder_z"}


def _descriptor(base, syms, name):
    kd = syms.get(name + ".kd")
    if kd is None:
        raise EmuError(f"no symbol {name}.kd in the code object")
    raw = ctypes.string_at(base + kd, 64)
    group, private, kernarg = struct.unpack_from("<III", raw, 0)
    (entry,) = struct.unpack_from("<q", raw, 16)
    rsrc3, rsrc1, rsrc2, props = struct.unpack_from("<IIIH", raw, 44)
    return dict(addr=base + kd, group=group, private=private, kernarg=kernarg, entry=base + kd + entry,
                rsrc1=rsrc1, rsrc2=rsrc2, rsrc3=rsrc3, props=props)


def check_descriptor(kd, arch="cdna"):
    """"" if the mock dispatch can run the descriptor for arch (cdna or
    rdna3), else why not."""
    asked = [f"{n} ({c} SGPRs)" for bit, n, c in _USER_SGPRS if kd["props"] >> bit & 1 and n != "kernarg_segment_ptr"]
    if asked:
        return ("its kernel descriptor asks for user SGPRs the mock dispatch does not set: " +
                ", ".join(asked) + "; run_asm loads only the kernarg pointer")
    if not kd["props"] >> 3 & 1:
        return "its kernel descriptor does not ask for the kernarg segment pointer"
    # The system SGPRs (workgroup ids) follow the USER_SGPR_COUNT user
    # SGPRs, and run_asm puts them there. LLVM 15's gfx11 descriptors say
    # 15 with only the kernarg pointer (s[0:1]) enabled: s2-s14 unset, the
    # workgroup id x in s15, as on the GPU.
    user = kd["rsrc2"] >> 1 & 0x1f
    if user != 2 and not (arch == "rdna3" and 2 < user <= 16):
        return (f"COMPUTE_PGM_RSRC2.USER_SGPR_COUNT is {user}, the kernarg pointer alone is 2"
                + (" (or up to 16 on RDNA3)" if arch == "rdna3" else ""))
    if kd["private"] or kd["rsrc2"] & 1:
        return (f"it uses scratch (private_segment_fixed_size {kd['private']}): the mock gives "
                "no private segment buffer (make hip-check rules scratch out)")
    # The emulator's wave is 64 lanes for cdna, 32 for rdna3 (its WMMA is
    # written for wave32): a wave64 RDNA3 kernel cannot run on it.
    if arch == "cdna" and kd["props"] >> 10 & 1:
        return "it is a wave32 kernel; CDNA3 runs wave64"
    if arch == "rdna3" and not kd["props"] >> 10 & 1:
        return "it is a wave64 kernel; the emulator runs RDNA3 waves of 32 lanes only"
    return ""


def launch(module, name, grid, block, shmem, args):
    m, base, syms, kernels, version, ident, arch = _modules[module]
    k = kernels.get(name)
    if k is None:
        raise EmuError(f"kernel {name} is not in the code object's metadata")
    kd = _descriptor(base, syms, name)
    why = check_descriptor(kd, arch)
    if why:
        return why
    size = max(k.get(".kernarg_segment_size", 0), kd["kernarg"], 8)
    buf = (ctypes.c_char * (size + 64))()
    kargs = (ctypes.addressof(buf) + 63) & ~63
    explicit = 0
    argv = ctypes.cast(args, ctypes.POINTER(ctypes.c_void_p)) if args else None
    dims = 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
    for a in k.get(".args", []):
        kind, off, n = a[".value_kind"], a[".offset"], a[".size"]
        if off + n > size:
            raise EmuError(f"argument at {off}+{n} past the kernarg segment ({size})")
        if kind in ("by_value", "global_buffer", "dynamic_shared_pointer"):
            if argv is None:
                raise EmuError("the launch passed no arguments")
            ctypes.memmove(kargs + off, argv[explicit], n)
            explicit += 1
            continue
        v5 = {"hidden_block_count_x": grid[0], "hidden_block_count_y": grid[1],
              "hidden_block_count_z": grid[2], "hidden_group_size_x": block[0],
              "hidden_group_size_y": block[1], "hidden_group_size_z": block[2],
              "hidden_grid_dims": dims, "hidden_dynamic_lds_size": shmem}
        if kind in v5:
            val = v5[kind]
        elif kind in _HIDDEN_ZERO:
            val = 0
        else:
            return f"kernel argument kind {kind} at offset {off} is not one this runtime fills"
        ctypes.memmove(kargs + off, (val & (2**(8 * n) - 1)).to_bytes(n, "little"), n)
    _keep.append(buf)
    lds = kd["group"] + shmem
    rsrc2 = kd["rsrc2"] & ~(0x1ff << 15) | (((lds + 511) // 512) << 15)
    from test.mockgpu.amd import emu
    emu.run_asm(kd["entry"], 0, grid[0], grid[1], grid[2], block[0], block[1], block[2], kargs,
                rsrc2=rsrc2, scratch_size=0, arch=arch, user_data=[kargs & 0xffffffff, kargs >> 32])
    return ""
