/**
 * The C source of a native CPU library: the ops of some kernels
 * (codegen/cpu/emit.ts) behind the native ABI (codegen/native/dype_abi.h,
 * family `cpu`, backend `native`), so that runtime/native's loader opens it
 * as it opens the CUDA and FPGA libraries. Device 0 is this CPU and its
 * memory is host memory: alloc is an aligned malloc, copies are memcpy,
 * streams are NULL and sync returns at once.
 *
 * Threads: `launch` splits a splittable op's row range over the calling
 * thread's count (`set_threads`, outside the ABI; each thread of a process
 * sets and reads its own): chunks balanced by stored
 * entries + rows of the row pointers the loop indexes, claimed by the caller
 * and the library's own worker threads (the protocol of
 * runtime/wasm/threads.ts; see dy_claim below). Each row is computed by one
 * thread with the same code, so results do not depend on the count. Ranges
 * of fewer than 256 rows run on the calling thread.
 */
import type { Kernel } from '../../ir/module.js';
import { cpuImplOf, MIN_SPLIT_ROWS } from '../../runtime/catalogue/cpu.js';
import { abiPrefix, NATIVE_BACKENDS } from '../../runtime/native/abi.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { CHUNKS_PER_THREAD, MIN_CHUNK_ROWS, SPIN_US } from '../../runtime/wasm/threads.js';
import { cString, symbolPart } from '../cuda/names.js';
import { C_HELPERS } from './cprint.js';
import { TRANSPOSE_HELPERS } from './transposed.js';
import { emitCpuFunction } from './emit.js';

export interface CpuKernel {
  kernel: Kernel;
  manifest: WasmManifest;
}

/** Changes whenever the C printed for the same loop IR may change (the library cache keys on it). */
export const CPU_EMITTER_VERSION = 25;

/** How the library prints its loops and allocates (bench/cpu-pairs.ts, bench/cpu-pages.ts compare them); results are bit-identical either way. */
export interface CpuEmitOptions {
  /** Two cursors over a long-rowed fold's rows (./pairs.ts); default true. */
  pairs?: boolean;
  /** SDDMM's short f32 rows, and the last entries of its long ones, in lanes across rows (./transposed.ts crossRowShort, crossRowLong); default true. */
  crossRows?: boolean;
  /** Buffers of 2 MiB or more on transparent huge pages where the system has them (see `alloc` below); default true. */
  hugePages?: boolean;
}

/** Every buffer on a 64-byte boundary, on the system's ordinary pages. */
const PLAIN_ALLOC = `int DYPE_ABI(alloc)(int dev, size_t bytes, void **out) {
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return DYPE_ERR_ALLOC;
  *out = p;
  return 0;
}`;

/**
 * A buffer of 2 MiB or more (the executor lays a kernel's operands out in one) starts on a 2 MiB boundary,
 * rounded up to whole 2 MiB, and asks Linux for transparent huge pages (a no-op where THP is off or the
 * system has no madvise). SpMM's rows of B and SpMV's x are gathered at random: on 4 KiB pages nearly every
 * gather of a large operand misses the TLB. bench/cpu-pages.ts: SpMM K = 32 on random-1M-15 (B of 128 MB) and
 * luxembourg_osm (B of 15 MB) 1.06-1.13x faster, the matrices whose operands fit the TLB's reach alike
 * (docs/PERFORMANCE.md, *Huge pages*). The rounding is address space: pages never touched cost nothing.
 * Pages glibc hands back from memory it has already touched (a block of under its mmap threshold, which
 * grows as large blocks are freed) stay small until the kernel collapses them: the advice then helps later.
 */
const HUGE_ALLOC = `#define DY_HUGE ((size_t)2 << 20)
int DYPE_ABI(alloc)(int dev, size_t bytes, void **out) {
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  void *p = NULL;
  size_t n = bytes ? bytes : 64;
  if (n >= DY_HUGE) {
    if (n > SIZE_MAX - DY_HUGE) return DYPE_ERR_ALLOC;
    n = (n + DY_HUGE - 1) / DY_HUGE * DY_HUGE;
    if (posix_memalign(&p, DY_HUGE, n) != 0) return DYPE_ERR_ALLOC;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  } else if (posix_memalign(&p, 64, n) != 0)
    return DYPE_ERR_ALLOC;
  *out = p;
  return 0;
}`;

/** The library's C source for `program` (a C identifier); `hash` is what program_hash() returns. */
export function cpuLibrarySource(
  program: string,
  hash: string,
  kernels: readonly CpuKernel[],
  file?: string,
  opts: CpuEmitOptions = {},
): string {
  const prefix = abiPrefix(program, 'cpu');
  const fns: string[] = [];
  const table: string[] = [];
  for (const { kernel, manifest } of kernels) {
    const ctx = { kernel: kernel.name, ...(file ? { file } : {}), ...(kernel.span ? { span: kernel.span } : {}) };
    symbolPart(ctx, 'kernel', kernel.name);
    const loops = kernel.loops;
    if (!loops) throw new Error(`native cpu emitter: kernel ${kernel.name} has no loop IR; run lower-kernels first`);
    for (const f of loops) {
      const o = manifest.ops.find((x) => x.op === f.op);
      if (!o) throw new Error(`native cpu emitter: kernel ${kernel.name}: the manifest has no op ${f.op}`);
      const fn = `dy_f${table.length}`;
      fns.push(emitCpuFunction(f, fn, ctx, opts.pairs ?? true, opts.crossRows ?? true));
      const split = o.splittable && o.splitRange !== undefined;
      const rangeSize = typeof o.splitRange === 'string' ? f.sizes.indexOf(o.splitRange) : -1;
      const rangeLit = typeof o.splitRange === 'number' ? o.splitRange : 0;
      const balance = o.balanceBy ? f.buffers.findIndex((b) => b.role === 'rowPtr' || b.role === 'colPtr') : -1;
      table.push(
        `  {${cString(kernel.name)}, ${cString(f.op)}, ${cString(cpuImplOf(o))}, ${fn}, ${f.buffers.length}, ${f.sizes.length}, ${split ? 1 : 0}, ${rangeSize}, ${rangeLit}LL, ${balance}},`,
      );
    }
  }
  return `/* The native CPU library of dype program ${program} (generated: do not edit). */
/* madvise and MADV_HUGEPAGE (and posix_memalign) whatever C dialect the compiler defaults to, and sched_getcpu. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#define DYPE_ABI_PREFIX ${prefix}
#include "dype_abi.h"

/* The copy for half a column block (f32 K = 16, f64 K = 8: codegen/cpu/emit.ts): gcc 12 on an AVX-512 host
   leaves that copy scalar unless it prefers 256-bit vectors, and the preference for the whole library slowed
   other widths by up to 1.7x; on other compilers and hosts, and gcc before 8 (which has no such target
   option), nothing. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && (defined(__x86_64__) || defined(__i386__))
#define DY_HALF_BLOCK __attribute__((target("prefer-vector-width=256")))
#else
#define DY_HALF_BLOCK
#endif

${C_HELPERS}${TRANSPOSE_HELPERS}
${fns.join('\n\n')}

typedef void (*dy_fn)(char *const *, const long long *, long long, long long);
struct dy_op {
  const char *kernel, *op, *impl;
  dy_fn fn;
  int nbuf, nsize, split, range_size;
  long long range_lit;
  int balance;
};
static const struct dy_op dy_ops[] = {
${table.join('\n')}
};
#define DY_NOPS ((int)(sizeof dy_ops / sizeof dy_ops[0]))
#define DY_MIN_SPLIT_ROWS ${MIN_SPLIT_ROWS}
/* Per calling thread: one thread's set_threads never changes how another thread's launch splits (with one count
   per process, two threads running executors of different counts over one library split each other's ops, and
   the count was a plain int read and written from both: a data race). */
static _Thread_local int dy_threads = 1;

/* Outside the ABI: the threads launch() splits an op over on the calling thread (n < 1 leaves it); returns the
   count in force. */
int DYPE_ABI(set_threads)(int n) {
  if (n >= 1) dy_threads = n;
  return dy_threads;
}

int DYPE_ABI(abi_version)(void) { return DYPE_ABI_VERSION; }
const char *DYPE_ABI(program)(void) { return ${cString(program)}; }
const char *DYPE_ABI(program_hash)(void) { return ${cString(hash)}; }
const char *DYPE_ABI(backend)(void) { return ${cString(NATIVE_BACKENDS.cpu.real)}; }
int DYPE_ABI(device_count)(void) { return 1; }
const char *DYPE_ABI(device_name)(int dev) { return dev == 0 ? "host CPU" : NULL; }
static int dy_dev_ok(int dev) { return dev == 0 || dev == DYPE_HOST; }

${(opts.hugePages ?? true) ? HUGE_ALLOC : PLAIN_ALLOC}
int DYPE_ABI(free)(int dev, void *p) {
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  free(p);
  return 0;
}
int DYPE_ABI(stream_create)(int dev, void **out) {
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  *out = NULL;
  return 0;
}
int DYPE_ABI(stream_destroy)(int dev, void *stream) {
  (void)stream;
  return dy_dev_ok(dev) ? 0 : DYPE_ERR_BAD_DEVICE;
}
int DYPE_ABI(upload)(int dev, void *dst, size_t dst_off, const void *src, size_t bytes, void *stream) {
  (void)stream;
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  memcpy((char *)dst + dst_off, src, bytes);
  return 0;
}
int DYPE_ABI(download)(int dev, void *dst, const void *src, size_t src_off, size_t bytes, void *stream) {
  (void)stream;
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  memcpy(dst, (const char *)src + src_off, bytes);
  return 0;
}
int DYPE_ABI(copy)(int dst_dev, void *dst, size_t dst_off, int src_dev, const void *src, size_t src_off, size_t bytes, void *stream) {
  (void)stream;
  if (!dy_dev_ok(dst_dev) || !dy_dev_ok(src_dev)) return DYPE_ERR_BAD_DEVICE;
  memmove((char *)dst + dst_off, (const char *)src + src_off, bytes);
  return 0;
}
int DYPE_ABI(sync)(int dev, void *stream) {
  (void)stream;
  return dy_dev_ok(dev) ? 0 : DYPE_ERR_BAD_DEVICE;
}

int DYPE_ABI(op_lookup)(const char *kernel, const char *op, const char *impl) {
  for (int h = 0; h < DY_NOPS; h++)
    if (!strcmp(dy_ops[h].kernel, kernel) && !strcmp(dy_ops[h].op, op) && !strcmp(dy_ops[h].impl, impl)) return h;
  return DYPE_ERR_BAD_VARIANT;
}
const char *DYPE_ABI(op_impls)(const char *kernel, const char *op) {
  for (int h = 0; h < DY_NOPS; h++)
    if (!strcmp(dy_ops[h].kernel, kernel) && !strcmp(dy_ops[h].op, op)) return dy_ops[h].impl;
  return NULL;
}
int DYPE_ABI(op_buffer_count)(int h) { return h >= 0 && h < DY_NOPS ? dy_ops[h].nbuf : -1; }
int DYPE_ABI(op_size_count)(int h) { return h >= 0 && h < DY_NOPS ? dy_ops[h].nsize + DYPE_PATTERN_FIGURES : -1; }

/* The first row r of [lo, hi] whose entries + rows before it reach target (ptr: the row pointers). */
static long long dy_cut(const int *ptr, long long lo, long long hi, long long target) {
  long long a = lo, b = hi;
  while (a < b) {
    long long m = a + (b - a) / 2;
    if ((long long)(ptr[m] - ptr[lo]) + (m - lo) < target) a = m + 1;
    else b = m;
  }
  return a;
}

/* The library's worker threads (the protocol of runtime/wasm/threads.ts): an op's rows are cut into chunks,
   DY_CHUNKS_PER_THREAD per thread, and the caller and the workers claim chunks from one word until none is left,
   so the caller starts at once and a worker that wakes late takes only what is left. next holds the op's tag
   (32 bits), its chunk count and the next chunk (16 bits each); a claim is a compare-exchange on it, so a claim
   of a closed op fails. A worker that has run out of chunks watches next for DY_SPIN_NS before it parks, and
   the caller skips the wake-up (a futex wake) while one does. One op at a time: a launch that finds the pool
   busy (another thread's launch) runs its rows alone. */
#define DY_CHUNKS_PER_THREAD ${CHUNKS_PER_THREAD}
#define DY_MIN_CHUNK_ROWS ${MIN_CHUNK_ROWS}
#define DY_MAX_CHUNKS 1024
#define DY_MAX_WORKERS 255
#define DY_SPIN_NS ${SPIN_US * 1000}LL
#if defined(__x86_64__) || defined(__i386__)
#define dy_pause() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define dy_pause() __asm__ __volatile__("yield")
#else
#define dy_pause() ((void)0)
#endif

static struct {
  pthread_mutex_t mu;
  pthread_cond_t go, finished;
  atomic_ullong next;
  atomic_int done, joined, helpers, spinners, busy;
  /* The core the launching thread was on as it opened the op (-1: not known), for dy_placement. */
  atomic_int caller_cpu;
  int started;
  unsigned tag;
  /* The op: written before next opens it, read after a claim succeeds, unchanged until every chunk is done. */
  dy_fn fn;
  char *const *b;
  const long long *sizes;
  long long cuts[DY_MAX_CHUNKS + 1];
} dy_pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER, .finished = PTHREAD_COND_INITIALIZER};

/* Where the workers ran, since the library was loaded: split launches, workers' joins of them, and joins on the
   core the launching thread opened the op on. A worker woken after an idle spell can wake on the caller's core and
   stay there (docs/PERFORMANCE.md, *Calibration at two threads*): the op then runs its threads one after the
   other, and a timing of it measures the scheduler's placement, not the op. dy_placement says so to whoever
   times (dype calibrate), and so does the share of chunks the workers ran: where it is small, the workers' cores
   were busy with other work. */
static atomic_llong dy_placement[5];

/* The core the calling thread runs on, -1 where the platform does not say (glibc reads it from the thread's rseq
   area, a load). */
static int dy_cpu(void) {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

/* Outside the ABI: dy_placement[what] (0 split launches, 1 joins, 2 joins on the caller's core, 3 their chunks,
   4 the chunks workers ran), -1 for a count this platform cannot keep or another what. */
long long DYPE_ABI(placement)(int what) {
  if (what < 0 || what > 4) return -1;
#if !defined(__linux__)
  if (what == 2) return -1;
#endif
  return atomic_load(&dy_placement[what]);
}

static long long dy_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Claims and runs chunks of op tag until none is left; a worker wakes the caller after the op's last chunk. */
static void dy_claim(unsigned tag, int worker) {
  unsigned long long v = atomic_load(&dy_pool.next);
  for (;;) {
    unsigned k = (unsigned)(v & 0xffff), n = (unsigned)((v >> 16) & 0xffff);
    if ((unsigned)(v >> 32) != tag || k >= n) return;
    if (!atomic_compare_exchange_weak(&dy_pool.next, &v, v + 1)) continue;
    dy_pool.fn(dy_pool.b, dy_pool.sizes, dy_pool.cuts[k], dy_pool.cuts[k + 1]);
    if (worker) atomic_fetch_add_explicit(&dy_placement[4], 1, memory_order_relaxed);
    if (atomic_fetch_add(&dy_pool.done, 1) + 1 == (int)n && worker) {
      pthread_mutex_lock(&dy_pool.mu);
      pthread_cond_signal(&dy_pool.finished);
      pthread_mutex_unlock(&dy_pool.mu);
    }
    v = atomic_load(&dy_pool.next);
  }
}

static void *dy_worker(void *arg) {
  (void)arg;
  unsigned long long seen = atomic_load(&dy_pool.next);
  unsigned tag = (unsigned)(seen >> 32);
  int mine = 0;
  for (;;) {
    unsigned long long v = atomic_load(&dy_pool.next);
    if (v != seen) {
      if ((unsigned)(v >> 32) != tag) {
        tag = (unsigned)(v >> 32);
        /* An op on fewer threads than the pool: places are taken in waking order, the rest sit it out. */
        mine = atomic_fetch_add(&dy_pool.joined, 1) < atomic_load(&dy_pool.helpers);
        if (mine) {
          int c = atomic_load_explicit(&dy_pool.caller_cpu, memory_order_relaxed);
          atomic_fetch_add_explicit(&dy_placement[1], 1, memory_order_relaxed);
          if (c >= 0 && dy_cpu() == c) atomic_fetch_add_explicit(&dy_placement[2], 1, memory_order_relaxed);
        }
      }
      if (mine) dy_claim(tag, 1);
      seen = v;
      continue;
    }
    /* Counted as spinning before the last look at next and uncounted before parking: against the caller's
       store of next and its read of spinners, a skipped wake-up finds next already changed. */
    atomic_fetch_add(&dy_pool.spinners, 1);
    long long until = dy_now_ns() + DY_SPIN_NS;
    int moved = 0;
    for (unsigned i = 1; !moved; i++) {
      moved = atomic_load(&dy_pool.next) != seen;
      if ((i & 63) == 0) {
        if (dy_now_ns() > until) break;
        sched_yield();
      }
      dy_pause();
    }
    atomic_fetch_sub(&dy_pool.spinners, 1);
    if (moved) continue;
    pthread_mutex_lock(&dy_pool.mu);
    while (atomic_load(&dy_pool.next) == seen) pthread_cond_wait(&dy_pool.go, &dy_pool.mu);
    pthread_mutex_unlock(&dy_pool.mu);
  }
  return NULL;
}

/* Workers running, at least want where they can be started (a failed start leaves fewer). */
static int dy_workers(int want) {
  if (want > DY_MAX_WORKERS) want = DY_MAX_WORKERS;
  while (dy_pool.started < want) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, dy_worker, NULL);
    pthread_attr_destroy(&a);
    if (rc != 0) break;
    dy_pool.started++;
  }
  return dy_pool.started < want ? dy_pool.started : want;
}

int DYPE_ABI(launch)(int dev, int h, void *const *buffers, const long long *sizes, long long row_begin, long long row_end, void *stream) {
  (void)stream;
  if (!dy_dev_ok(dev)) return DYPE_ERR_BAD_DEVICE;
  if (h < 0 || h >= DY_NOPS) return DYPE_ERR_BAD_VARIANT;
  const struct dy_op *o = &dy_ops[h];
  /* As the CUDA stubs refuse them: a negative size would run loops over nothing or index before a buffer. */
  for (int i = 0; i < o->nsize; i++)
    if (sizes[i] < 0) return DYPE_ERR_BAD_SIZE;
  char *const *b = (char *const *)buffers;
  if (!o->split) {
    if (row_begin != 0 || row_end >= 0) return DYPE_ERR_RANGE;
    o->fn(b, sizes, 0, LLONG_MAX);
    return 0;
  }
  long long rows = o->range_size >= 0 ? sizes[o->range_size] : o->range_lit;
  long long lo = row_begin < 0 ? 0 : row_begin, hi = row_end < 0 || row_end > rows ? rows : row_end;
  if (lo >= hi) return 0;
  int nt = dy_threads;
  if (nt <= 1 || hi - lo < DY_MIN_SPLIT_ROWS || atomic_exchange(&dy_pool.busy, 1)) {
    o->fn(b, sizes, lo, hi);
    return 0;
  }
  int helpers = dy_workers(nt - 1);
  long long nch = (long long)(helpers + 1) * DY_CHUNKS_PER_THREAD, most = (hi - lo) / DY_MIN_CHUNK_ROWS;
  if (nch > most) nch = most;
  if (nch > DY_MAX_CHUNKS) nch = DY_MAX_CHUNKS;
  if (helpers < 1 || nch < 2) {
    atomic_store(&dy_pool.busy, 0);
    o->fn(b, sizes, lo, hi);
    return 0;
  }
  const int *ptr = o->balance >= 0 ? (const int *)buffers[o->balance] : NULL;
  long long total = ptr ? (long long)(ptr[hi] - ptr[lo]) + (hi - lo) : hi - lo;
  dy_pool.cuts[0] = lo;
  for (long long k = 1; k < nch; k++)
    dy_pool.cuts[k] = ptr ? dy_cut(ptr, lo, hi, total * k / nch) : lo + (hi - lo) * k / nch;
  dy_pool.cuts[nch] = hi;
  dy_pool.fn = o->fn;
  dy_pool.b = b;
  dy_pool.sizes = sizes;
  atomic_store(&dy_pool.done, 0);
  atomic_store(&dy_pool.joined, 0);
  atomic_store(&dy_pool.helpers, helpers);
  atomic_store_explicit(&dy_pool.caller_cpu, dy_cpu(), memory_order_relaxed);
  atomic_fetch_add_explicit(&dy_placement[0], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&dy_placement[3], nch, memory_order_relaxed);
  unsigned tag = ++dy_pool.tag;
  atomic_store(&dy_pool.next, (unsigned long long)tag << 32 | (unsigned long long)nch << 16);
  if (atomic_load(&dy_pool.spinners) < helpers) {
    pthread_mutex_lock(&dy_pool.mu);
    pthread_cond_broadcast(&dy_pool.go);
    pthread_mutex_unlock(&dy_pool.mu);
  }
  dy_claim(tag, 0);
  /* The chunks the workers took: watched for DY_SPIN_NS, then slept on. No yield here: on a core shared with
     another busy process a yield hands it a whole time slice (4 ms an op was seen), while sleeping frees the core
     for a worker the scheduler put on it. */
  long long until = 0;
  for (unsigned i = 1; atomic_load(&dy_pool.done) < nch; i++) {
    if ((i & 63) == 0) {
      long long t = dy_now_ns();
      if (until == 0) until = t + DY_SPIN_NS;
      else if (t > until) {
        pthread_mutex_lock(&dy_pool.mu);
        while (atomic_load(&dy_pool.done) < nch) pthread_cond_wait(&dy_pool.finished, &dy_pool.mu);
        pthread_mutex_unlock(&dy_pool.mu);
        break;
      }
    }
    dy_pause();
  }
  atomic_store(&dy_pool.busy, 0);
  return 0;
}

const char *DYPE_ABI(error_text)(int code) {
  switch (code) {
    case 0: return "success";
    case DYPE_ERR_BAD_SIZE: return "bad size";
    case DYPE_ERR_TOO_LARGE: return "too large";
    case DYPE_ERR_BAD_VARIANT: return "no such op or implementation";
    case DYPE_ERR_BAD_DEVICE: return "no such device (the native CPU library has device 0, the host CPU)";
    case DYPE_ERR_ALLOC: return "out of host memory";
    case DYPE_ERR_RANGE: return "row range given for an op that cannot be split";
    case DYPE_ERR_UNSUPPORTED: return "unsupported";
    case DYPE_ERR_BACKEND: return "backend error";
    default: return "unknown error";
  }
}
`;
}
