// The dype native ABI (version 2): what every generated native library exports
// besides its own kernel stubs, so that one loader (runtime/native/) serves the
// CUDA library, its CPU emulation, the FPGA host library over XRT and its
// C-simulation build alike. Shipped verbatim into every compiled project.
//
// Symbols are prefixed per program and family, `dype_<program>_abi_<family>_`
// (family: cuda or fpga), so that libraries of several programs, or the GPU and
// FPGA libraries of one program, link into one process without clashing. The
// library defines DYPE_ABI_PREFIX before including this header.
//
// Conventions:
//  - Devices are numbered 0 .. device_count()-1; DYPE_HOST (-1) is host memory.
//  - Every function returns 0 on success, a positive code of the device runtime
//    (cudaError_t, an errno of XRT) or a negative DYPE_ERR_* code; error_text(code)
//    explains any of them. Nothing aborts or exits the process.
//  - A stream is an opaque handle from stream_create (NULL: the device's default
//    stream). Calls that take a stream may return before the work is done; host
//    memory passed to upload/download must stay valid until sync(dev, stream).
//    Errors of work already queued show up at sync.
//  - Functions may be called at the same time from different threads for
//    different devices or streams.
//  - Buffers hold elements in the storage of the wasm manifest
//    (runtime/wasm/manifest.ts): f32, f64, i32, i64 natively, `index` as int32,
//    bool as one int32 (0 or 1); dense row-major; sparse as CSR or CSC arrays.
//  - launch(): `buffers` are device pointers in the order of the op's buffers in
//    the manifest; `sizes` are the op's sizes in manifest order followed by five
//    figures of the pattern of the op's sparse operand: rows, cols, stored
//    entries, the most entries of one row, the most entries of one column (all
//    0 for an op without one). A longest figure may be 0 for "not known"; one
//    above 0 must be at least the true figure: a stub that runs long rows in a
//    pass of their own skips that pass when the figure shows no row is long.
//    [row_begin, row_end) clamps the op's top-level parallel loop (row_end < 0:
//    no upper clamp); an op whose manifest entry is not `splittable` accepts
//    only 0, -1.
#ifndef DYPE_ABI_H
#define DYPE_ABI_H

#include <stddef.h>

#define DYPE_ABI_VERSION 2
/* launch()'s sizes end with this many pattern figures (rows, cols, entries, longest row, longest column). */
#define DYPE_PATTERN_FIGURES 5
#define DYPE_HOST (-1)

#define DYPE_ERR_BAD_SIZE (-1)
#define DYPE_ERR_TOO_LARGE (-2)
#define DYPE_ERR_BAD_VARIANT (-3)
#define DYPE_ERR_BAD_DEVICE (-4)
#define DYPE_ERR_ALLOC (-5)
#define DYPE_ERR_RANGE (-6)
#define DYPE_ERR_UNSUPPORTED (-7)
#define DYPE_ERR_BACKEND (-8)

#ifndef DYPE_ABI_PREFIX
#error "define DYPE_ABI_PREFIX (dype_<program>_abi_<family>_) before including dype_abi.h"
#endif
#define DYPE_ABI_CAT2(a, b) a##b
#define DYPE_ABI_CAT(a, b) DYPE_ABI_CAT2(a, b)
#define DYPE_ABI(name) DYPE_ABI_CAT(DYPE_ABI_PREFIX, name)

#ifdef __cplusplus
extern "C" {
#endif

/** DYPE_ABI_VERSION of the library; the loader refuses any other. */
int DYPE_ABI(abi_version)(void);
/** The program the library was generated from, and the hash of its loop IR (plan.json and project.json carry the same). */
const char* DYPE_ABI(program)(void);
const char* DYPE_ABI(program_hash)(void);
/** What executes: "cuda", "cuda-emu", "xrt" or "fpga-csim". */
const char* DYPE_ABI(backend)(void);
/** Devices this library can run on (0 where none is present). */
int DYPE_ABI(device_count)(void);
/** A human-readable name of device `dev` (NULL when out of range). */
const char* DYPE_ABI(device_name)(int dev);

int DYPE_ABI(alloc)(int dev, size_t bytes, void** out);
int DYPE_ABI(free)(int dev, void* p);
int DYPE_ABI(stream_create)(int dev, void** out);
int DYPE_ABI(stream_destroy)(int dev, void* stream);
/** Host to device: bytes from src to dst + dst_off. */
int DYPE_ABI(upload)(int dev, void* dst, size_t dst_off, const void* src, size_t bytes, void* stream);
/** Device to host: bytes from src + src_off to dst. */
int DYPE_ABI(download)(int dev, void* dst, const void* src, size_t src_off, size_t bytes, void* stream);
/** Device to device of this library: peer to peer where the devices allow, else staged through the host. */
int DYPE_ABI(copy)(int dst_dev, void* dst, size_t dst_off, int src_dev, const void* src, size_t src_off, size_t bytes, void* stream);
/** Waits until the work queued on the stream (NULL: the default stream) of device dev is done. */
int DYPE_ABI(sync)(int dev, void* stream);

/** The handle of op `op` of kernel `kernel` in implementation `impl` (>= 0), or DYPE_ERR_BAD_VARIANT. */
int DYPE_ABI(op_lookup)(const char* kernel, const char* op, const char* impl);
/** The implementations emitted for an op, comma-separated, in the order plan.json lists them (NULL for an unknown op). */
const char* DYPE_ABI(op_impls)(const char* kernel, const char* op);
/** Buffers and sizes (the five pattern figures included) launch() expects for a handle; -1 for a bad handle. */
int DYPE_ABI(op_buffer_count)(int handle);
int DYPE_ABI(op_size_count)(int handle);
int DYPE_ABI(launch)(int dev, int handle, void* const* buffers, const long long* sizes, long long row_begin, long long row_end, void* stream);

/** Text of any code these functions return. */
const char* DYPE_ABI(error_text)(int code);

#ifdef __cplusplus
}
#endif

#endif
