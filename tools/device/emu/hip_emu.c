/*
 * hip_emu.c - libamdhip64.so.5 for tinygrad's mock AMD GPU: the HIP
 * entry points the harnesses import (the tools/device/hip harnesses built by
 * build.sh), no more, with the symbol version ROCm's library gives them
 * (hip_4.2, hip_emu.map). docs/hip-emu.md is the walk-through.
 *
 * Design: the library embeds Python (libpython3.11) and runs the
 * emulator in the harness's own process. The emulator reads and writes
 * memory at host addresses (its vmem buffer starts at address 0), so
 * device memory is host memory this library maps: hipMemcpy is memcpy,
 * a kernel argument pointer is the pointer itself, and nothing crosses a
 * process boundary. The code object is parsed, loaded, relocated and
 * launched by emu_runtime.py (FSQ_EMU_DIR), on the patched tinygrad copy
 * FSQ_EMU_TINYGRAD (patch_tinygrad.py).
 *
 *   hipMalloc                 page-aligned anonymous mappings, recorded
 *   hipMemcpy / hipMemset     memcpy / memset; a device side that lies
 *                             outside every allocation is
 *                             hipErrorInvalidValue
 *   __hipRegisterFatBinary    the offload bundle handed to emu_runtime
 *   __hipRegisterFunction     host stub -> kernel name
 *   __hipPush/PopCallConfiguration, hipLaunchKernel
 *                             one run_asm of the emulator per launch,
 *                             synchronous
 *   hipGetLastError, hipGetErrorString, hipDeviceSynchronize
 *
 * A failure inside the emulator or a refused kernel descriptor prints
 * "hip-emu: <why>" on stderr and makes the launch's error sticky in
 * hipGetLastError, as a failed launch is on a GPU.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int hipError_t;
typedef struct { uint32_t x, y, z; } dim3;
typedef void *hipStream_t;

enum {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorOutOfMemory = 2,
	hipErrorNotInitialized = 3,
	hipErrorInvalidDeviceFunction = 98,
	hipErrorLaunchFailure = 719,
	hipErrorNotSupported = 801,
};

#define EMU_MAX_ALLOC 4096
#define EMU_MAX_FUNC 64

static struct { char *p; size_t n; } emu_alloc[EMU_MAX_ALLOC];
static struct { const void *host; char name[256]; long module; } emu_func[EMU_MAX_FUNC];
static int emu_nfunc;
static hipError_t emu_last;
static PyObject *emu_mod;
static struct { dim3 grid, block; size_t shmem; hipStream_t stream; int set; } emu_cfg;

static hipError_t emu_fail(hipError_t e) { emu_last = e; return e; }

/* Print the pending Python exception as "hip-emu: ...". */
static void emu_pyerr(const char *what)
{
	PyObject *t, *v, *tb, *s;

	PyErr_Fetch(&t, &v, &tb);
	s = v ? PyObject_Str(v) : NULL;
	fprintf(stderr, "hip-emu: %s: %s\n", what, s ? PyUnicode_AsUTF8(s) : "unknown Python error");
	Py_XDECREF(s), Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
}

/* Start Python and import emu_runtime once; 0 on success. */
static int emu_python(void)
{
	const char *dir = getenv("FSQ_EMU_DIR"), *tg = getenv("FSQ_EMU_TINYGRAD");
	PyObject *path, *s;

	if (emu_mod)
		return 0;
	if (!dir || !tg) {
		fprintf(stderr, "hip-emu: FSQ_EMU_DIR and FSQ_EMU_TINYGRAD must name tools/device/emu and the patched tinygrad copy\n");
		return -1;
	}
	if (!Py_IsInitialized())
		Py_InitializeEx(0);
	path = PySys_GetObject("path");	/* borrowed */
	s = PyUnicode_FromString(tg), PyList_Insert(path, 0, s), Py_DECREF(s);
	s = PyUnicode_FromString(dir), PyList_Insert(path, 0, s), Py_DECREF(s);
	emu_mod = PyImport_ImportModule("emu_runtime");
	if (!emu_mod) {
		emu_pyerr("import emu_runtime");
		return -1;
	}
	return 0;
}

/* The allocation that holds [p, p+n), or -1. */
static int emu_find(const void *p, size_t n)
{
	const char *c = p;

	for (int i = 0; i < EMU_MAX_ALLOC; i++)
		if (emu_alloc[i].p && c >= emu_alloc[i].p && n <= emu_alloc[i].n &&
		    (size_t)(c - emu_alloc[i].p) <= emu_alloc[i].n - n)
			return i;
	return -1;
}

hipError_t hipMalloc(void **ptr, size_t n)
{
	void *p;

	if (!ptr)
		return emu_fail(hipErrorInvalidValue);
	if (n == 0)
		return *ptr = NULL, hipSuccess;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return emu_fail(hipErrorOutOfMemory);
	for (int i = 0; i < EMU_MAX_ALLOC; i++)
		if (!emu_alloc[i].p) {
			emu_alloc[i].p = p, emu_alloc[i].n = n;
			*ptr = p;
			return hipSuccess;
		}
	munmap(p, n);
	return emu_fail(hipErrorOutOfMemory);
}

/* hipMemcpyKind: 0 host-host, 1 host-device, 2 device-host, 3 device-device, 4 default */
hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
	if (n == 0)
		return hipSuccess;
	if (!dst || !src || kind < 0 || kind > 4 ||
	    ((kind == 1 || kind == 3) && emu_find(dst, n) < 0) ||
	    ((kind == 2 || kind == 3) && emu_find(src, n) < 0))
		return emu_fail(hipErrorInvalidValue);
	memmove(dst, src, n);
	return hipSuccess;
}

hipError_t hipMemset(void *dst, int value, size_t n)
{
	if (n && emu_find(dst, n) < 0)
		return emu_fail(hipErrorInvalidValue);
	memset(dst, value, n);
	return hipSuccess;
}

hipError_t hipDeviceSynchronize(void) { return hipSuccess; }	/* launches are synchronous */

hipError_t hipGetLastError(void)
{
	hipError_t e = emu_last;

	emu_last = hipSuccess;
	return e;
}

const char *hipGetErrorString(hipError_t e)
{
	switch (e) {
	case hipSuccess: return "hipSuccess";
	case hipErrorInvalidValue: return "hipErrorInvalidValue";
	case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
	case hipErrorNotInitialized: return "hipErrorNotInitialized";
	case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
	case hipErrorLaunchFailure: return "hipErrorLaunchFailure (hip-emu: see the message above)";
	case hipErrorNotSupported: return "hipErrorNotSupported (hip-emu: see the message above)";
	default: return "unknown hip-emu error";
	}
}

/* The wrapper clang emits: magic "HIPF", version, the offload bundle. */
struct emu_fatbin_wrapper { uint32_t magic, version; const void *binary; const void *unused; };

void **__hipRegisterFatBinary(const void *data)
{
	const struct emu_fatbin_wrapper *w = data;
	const char *b = w->binary;
	uint64_t n, end = 0;
	PyObject *r;
	long h;

	/* The bundle's own header gives its length: magic, count, then per
	 * entry offset, size, id length, id. */
	if (w->magic != 0x48495046 || memcmp(b, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
		fprintf(stderr, "hip-emu: the fat binary is not an uncompressed clang offload bundle\n");
		exit(3);
	}
	memcpy(&n, b + 24, 8);
	for (uint64_t i = 0, at = 32; i < n && i < 64; i++) {
		uint64_t off, size, idlen;

		memcpy(&off, b + at, 8), memcpy(&size, b + at + 8, 8), memcpy(&idlen, b + at + 16, 8);
		if (off + size > end)
			end = off + size;
		at += 24 + idlen;
	}
	if (emu_python())
		exit(3);
	r = PyObject_CallMethod(emu_mod, "register_bundle", "y#", b, (Py_ssize_t)end);
	if (!r) {
		emu_pyerr("loading the code object");
		exit(3);
	}
	h = PyLong_AsLong(r);
	Py_DECREF(r);
	return (void **)(intptr_t)(h + 1);
}

void __hipUnregisterFatBinary(void **modules) { (void)modules; }

void __hipRegisterFunction(void **modules, const void *host, char *device_fn, const char *name,
			   unsigned limit, void *tid, void *bid, dim3 *block, dim3 *grid, int *wsize)
{
	(void)device_fn, (void)limit, (void)tid, (void)bid, (void)block, (void)grid, (void)wsize;
	if (emu_nfunc == EMU_MAX_FUNC) {
		fprintf(stderr, "hip-emu: more than %d kernels\n", EMU_MAX_FUNC);
		exit(3);
	}
	emu_func[emu_nfunc].host = host;
	snprintf(emu_func[emu_nfunc].name, sizeof(emu_func[0].name), "%s", name);
	emu_func[emu_nfunc].module = (long)(intptr_t)modules - 1;
	emu_nfunc++;
}

hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, hipStream_t stream)
{
	emu_cfg.grid = grid, emu_cfg.block = block, emu_cfg.shmem = shmem, emu_cfg.stream = stream;
	emu_cfg.set = 1;
	return hipSuccess;
}

hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, hipStream_t *stream)
{
	if (!emu_cfg.set)
		return emu_fail(hipErrorInvalidValue);
	*grid = emu_cfg.grid, *block = emu_cfg.block, *shmem = emu_cfg.shmem, *stream = emu_cfg.stream;
	emu_cfg.set = 0;
	return hipSuccess;
}

hipError_t hipLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args, size_t shmem,
			   hipStream_t stream)
{
	PyObject *ptrs, *r;
	int k;

	(void)stream;
	if (!emu_mod)	/* no code object was registered */
		return emu_fail(hipErrorNotInitialized);
	for (k = 0; k < emu_nfunc && emu_func[k].host != fn; k++)
		;
	if (k == emu_nfunc)
		return emu_fail(hipErrorInvalidDeviceFunction);
	/* args[i] points at argument i; emu_runtime reads as many as the
	 * code object's metadata lists, at their sizes and offsets. */
	ptrs = PyLong_FromVoidPtr(args);
	r = PyObject_CallMethod(emu_mod, "launch", "ls(III)(III)nO", emu_func[k].module, emu_func[k].name,
				grid.x, grid.y, grid.z, block.x, block.y, block.z, (Py_ssize_t)shmem, ptrs);
	Py_DECREF(ptrs);
	if (!r) {
		emu_pyerr(emu_func[k].name);
		return emu_fail(hipErrorLaunchFailure);
	}
	if (PyUnicode_Check(r) && PyUnicode_GetLength(r)) {	/* a refusal, with its reason */
		fprintf(stderr, "hip-emu: %s: %s\n", emu_func[k].name, PyUnicode_AsUTF8(r));
		Py_DECREF(r);
		return emu_fail(hipErrorNotSupported);
	}
	Py_DECREF(r);
	return hipSuccess;
}
