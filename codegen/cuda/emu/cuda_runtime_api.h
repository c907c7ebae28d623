// A CPU stand-in for the parts of the CUDA runtime API that dype's generated code uses, shipped
// in every CUDA project as emu/cuda_runtime_api.h. Compiling <prog>.cu and <prog>_abi.cu as C++
// against it (`make emu`: g++ -DDYPE_CUDA_EMU -Iemu) gives lib<prog>_cuda_emu.so, which runs the
// same kernels without a GPU, in process, with the same C interface and ABI.
//
// Kernels run block by block, each thread of a block a fiber; __syncthreads, __syncwarp
// and every shuffle are points at which all fibers of the block take turns, so lanes of a warp
// (and threads of a block) meet there as on a GPU, provided, as CUDA itself requires, that they
// all reach the same sequence of them. The fiber scheduler, __shared__ arrays and the current
// device are per host thread, so different threads may run kernels at the same time. On x86-64
// a fiber switch saves the callee-saved registers and swaps stacks; elsewhere (and where shadow
// stacks are compiled in) it is swapcontext, which also saves the signal mask, a system call
// per switch that makes the emulation several times slower.
//
// Devices: cudaGetDeviceCount reports DYPE_EMU_DEVICES from the environment (default 8, read at
// the first call), since the emulation stands for whatever machine a system file describes.
// Every allocation remembers its device and size, and copies and memsets check that they stay
// inside one (cudaErrorInvalidValue otherwise), so a test on the emulation proves that data was
// where it had to be. Devices can access one another as peers unless DYPE_EMU_PEER=0 (which
// makes callers take their staged paths). Memory is host memory; work runs synchronously at the
// call, whatever the stream (a stream is a handle that remembers its device); events record
// host time. Failures are returned and kept as the thread's last error, like CUDA's; nothing
// here prints or aborts.
//
// Launches beyond the limits of a real device (grid.x < 2^31, grid.y and grid.z <= 65535, at
// most 1024 threads a block, block.z <= 64) fail with cudaErrorInvalidConfiguration, as on a
// GPU. DYPE_EMU_LAST_BLOCKS=N runs only the last N blocks of every grid (in launch order), and
// allocations of 64 MiB or more are mapped lazily (only pages touched take memory): together
// they let a test run the highest rows and indices of a launch over 2^27 rows or 2^31
// elements, where 32-bit index arithmetic would wrap, without running or storing the rest.
#ifndef DY_EMU_CUDA_RUNTIME_API_H
#define DY_EMU_CUDA_RUNTIME_API_H

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <math.h>
#include <mutex>
#include <new>
#include <stddef.h>
#include <stdint.h>
#if !(defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2)))
#include <ucontext.h>
#endif
#include <sys/mman.h>
#include <vector>
// Under AddressSanitizer: a fiber ends by switching away, never returning from its first frame, so
// that frame's redzones stay poisoned in the stack memory the next launch reuses, and ASan reports
// the next launch's own writes there as overflows. Each fiber's stack is unpoisoned as it is set up.
#if defined(__SANITIZE_ADDRESS__)
#define DY_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DY_EMU_ASAN 1
#endif
#endif
#ifdef DY_EMU_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
// One copy per host thread: the fibers of the block running on that thread share it, as a block does.
#define __shared__ static thread_local

// Symbols stay inside the library that includes this, so that two emulated libraries in one
// process (or two versions of this header) never share state by symbol interposition.
#pragma GCC visibility push(hidden)

struct uint3 { unsigned x, y, z; };
// The 16-byte vectors of vector_types.h, with CUDA's alignment: a misaligned vector access is as
// undefined here as on a GPU (the generated launches check alignment before using them).
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

// The values are CUDA's own, so that codes crossing the ABI mean the same in both builds.
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
struct dy_emu_stream { int dev; };
typedef struct dy_emu_stream* cudaStream_t;
struct dy_emu_event { std::chrono::steady_clock::time_point t; bool recorded; };
typedef struct dy_emu_event* cudaEvent_t;
struct cudaDeviceProp { char name[256]; int major, minor, multiProcessorCount; size_t totalGlobalMem; };

#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define DY_EMU_FAST_SWITCH 1
#endif

namespace dy_emu {

#ifdef DY_EMU_FAST_SWITCH
// Pushes the callee-saved registers, MXCSR and the x87 control word, stores the stack pointer
// in *from, and resumes the context whose stack pointer is `to` (the reverse of the same).
__attribute__((naked, noinline)) static void switch_to(void** /*from*/, void* /*to*/) {
  __asm__ volatile(
      "pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
      "subq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n\t"
      "popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret\n\t");
}
#endif

// ---------------------------------------------------------------- per-thread state
struct Fiber {
#ifdef DY_EMU_FAST_SWITCH
  void* sp;
#else
  ucontext_t ctx;
#endif
  uint3 tid;
  bool done;
};
struct State {
#ifdef DY_EMU_FAST_SWITCH
  void* sched = nullptr;
#else
  ucontext_t sched;
#endif
  std::vector<Fiber> fibers;
  std::vector<char> stacks;
  size_t cur = 0;
  uint3 block{0, 0, 0};
  dim3 bdim, gdim;
  unsigned char slots[1024][8];
  int device = 0;
  cudaError_t last = cudaSuccess;
  // Kernel launches and memsets this thread has queued: what a stream would carry (tests count them).
  unsigned long long queued = 0;
};
inline State& st() { static thread_local State s; return s; }
inline cudaError_t fail(cudaError_t e) { st().last = e; return e; }
constexpr size_t STACK = 48 * 1024;

// ---------------------------------------------------------------- devices
inline int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (*end == '\0' && n >= lo && n <= hi) ? (int)n : -1;
}
// -1 when DYPE_EMU_DEVICES is not an integer in 0..1024.
inline int devices() { static const int n = env_int("DYPE_EMU_DEVICES", 8, 0, 1024); return n; }
inline bool valid_device(int d) { return d >= 0 && d < devices(); }
inline bool peers() { static const bool p = env_int("DYPE_EMU_PEER", 1, 0, 1) != 0; return p; }
// 0: every block; N: the last N blocks of each grid; -1: not an integer in 0..2^30 (launches fail).
inline long long last_blocks() { static const int n = env_int("DYPE_EMU_LAST_BLOCKS", 0, 0, 1 << 30); return n; }

// ---------------------------------------------------------------- allocations
struct Alloc { size_t size; int dev; };
struct Memory {
  std::mutex m;
  std::map<uintptr_t, Alloc> live;
};
// Never destroyed: other libraries' static destructors may still free memory at exit.
inline Memory& memory() { static Memory* m = new Memory; return *m; }

struct Where { uintptr_t base; size_t size; int dev; };
// The allocation holding p (interior pointers included; a 0-byte allocation holds its base).
inline bool find(const void* p, Where* w) {
  const uintptr_t a = (uintptr_t)p;
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.m);
  auto it = m.live.upper_bound(a);
  if (it == m.live.begin()) return false;
  --it;
  if (a >= it->first + (it->second.size > 0 ? it->second.size : 1)) return false;
  *w = Where{it->first, it->second.size, it->second.dev};
  return true;
}
// [p, p + n) lies inside one allocation (of device dev, when dev >= 0).
inline bool inside(const void* p, size_t n, int dev = -1) {
  Where w;
  if (!find(p, &w) || (dev >= 0 && w.dev != dev)) return false;
  const size_t off = (size_t)((uintptr_t)p - w.base);
  return n <= w.size && off <= w.size - n;
}
// Allocations from this size on are mapped with MAP_NORESERVE: pages cost memory when touched.
constexpr size_t LAZY = (size_t)64 << 20;
inline void unmap(void* q, size_t rounded) {
  if (rounded >= LAZY) munmap(q, rounded);
  else std::free(q);
}
inline cudaError_t alloc(void** p, size_t n) {
  if (!p) return fail(cudaErrorInvalidValue);
  *p = nullptr;
  if (!valid_device(st().device)) return fail(cudaErrorInvalidDevice);
  const size_t rounded = (n + 255) / 256 * 256;
  if (rounded < n) return fail(cudaErrorMemoryAllocation);
  void* q = nullptr;
  if (rounded >= LAZY) {
    q = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (q == MAP_FAILED) q = nullptr;
  } else {
    q = std::aligned_alloc(256, rounded > 0 ? rounded : 256);
  }
  if (!q) return fail(cudaErrorMemoryAllocation);
  try {
    Memory& m = memory();
    std::lock_guard<std::mutex> lock(m.m);
    m.live[(uintptr_t)q] = Alloc{n, st().device};
  } catch (const std::bad_alloc&) {
    unmap(q, rounded);
    return fail(cudaErrorMemoryAllocation);
  }
  *p = q;
  return cudaSuccess;
}
inline cudaError_t release(void* p) {
  if (!p) return cudaSuccess;
  size_t n = 0;
  {
    Memory& m = memory();
    std::lock_guard<std::mutex> lock(m.m);
    auto it = m.live.find((uintptr_t)p);
    if (it == m.live.end()) return fail(cudaErrorInvalidValue);
    n = it->second.size;
    m.live.erase(it);
  }
  unmap(p, (n + 255) / 256 * 256);
  return cudaSuccess;
}
inline cudaError_t copy(void* d, const void* s, size_t n, cudaMemcpyKind k) {
  if (n == 0) return cudaSuccess;
  if (!d || !s) return fail(cudaErrorInvalidValue);
  const bool dd = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
  const bool sd = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
  if (k < cudaMemcpyHostToHost || k > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
  Where w;
  // cudaMemcpyDefault: whichever side is device memory must fit in its allocation.
  if ((dd || (k == cudaMemcpyDefault && find(d, &w))) && !inside(d, n)) return fail(cudaErrorInvalidValue);
  if ((sd || (k == cudaMemcpyDefault && find(s, &w))) && !inside(s, n)) return fail(cudaErrorInvalidValue);
  std::memmove(d, s, n);
  return cudaSuccess;
}

// ---------------------------------------------------------------- kernel launches
// From the running fiber to the scheduler, and back.
inline void yield() {
  State& s = st();
#ifdef DY_EMU_FAST_SWITCH
  switch_to(&s.fibers[s.cur].sp, s.sched);
#else
  swapcontext(&s.fibers[s.cur].ctx, &s.sched);
#endif
}
inline void resume(size_t t) {
  State& s = st();
  s.cur = t;
#ifdef DY_EMU_FAST_SWITCH
  switch_to(&s.sched, s.fibers[t].sp);
#else
  swapcontext(&s.sched, &s.fibers[t].ctx);
#endif
}
// A fiber's first code; it ends by switching away for good.
template <typename F> struct Body {
  static thread_local F* f;
  static void entry() {
    (*f)();
    st().fibers[st().cur].done = true;
    yield();
  }
};
template <typename F> thread_local F* Body<F>::f = nullptr;

// Runs a grid on the calling thread; what CUDA would reject is kept as the last error instead.
template <typename F> void launch(dim3 g, dim3 b, cudaStream_t stream, F body) {
  State& s = st();
  const size_t n = (size_t)b.x * b.y * b.z;
  // A real device's limits (compute capability 3.0 and later): what a GPU would refuse is refused here.
  if (n == 0 || n > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64 || g.x == 0 || g.y == 0 || g.z == 0 ||
      g.x > 2147483647u || g.y > 65535 || g.z > 65535 || last_blocks() < 0) {
    fail(cudaErrorInvalidConfiguration);
    return;
  }
  if (!valid_device(s.device) || (stream && stream->dev != s.device)) { fail(cudaErrorInvalidResourceHandle); return; }
  ++s.queued;
  try {
    s.fibers.assign(n, Fiber{});
    if (s.stacks.size() < n * STACK) s.stacks.resize(n * STACK);
  } catch (const std::bad_alloc&) {
    fail(cudaErrorMemoryAllocation);
    return;
  }
  s.gdim = g;
  s.bdim = b;
  Body<F>::f = &body;
#ifdef DY_EMU_FAST_SWITCH
  uint32_t mxcsr = 0;
  uint16_t fpucw = 0;
  __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fpucw));
  const uint64_t control = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
#endif
  const unsigned long long blocks = (unsigned long long)g.x * g.y * g.z;
  const unsigned long long first = last_blocks() > 0 && (unsigned long long)last_blocks() < blocks ? blocks - last_blocks() : 0;
  for (unsigned long long lin = first; lin < blocks; ++lin) {
    const unsigned bx = (unsigned)(lin % g.x), by = (unsigned)((lin / g.x) % g.y), bz = (unsigned)(lin / ((unsigned long long)g.x * g.y));
    s.block = uint3{bx, by, bz};
    for (size_t t = 0; t < n; ++t) {
      Fiber& f = s.fibers[t];
      f.done = false;
      f.tid = uint3{(unsigned)(t % b.x), (unsigned)((t / b.x) % b.y), (unsigned)(t / ((size_t)b.x * b.y))};
#ifdef DY_EMU_ASAN
      ASAN_UNPOISON_MEMORY_REGION(s.stacks.data() + t * STACK, STACK);
#endif
#ifdef DY_EMU_FAST_SWITCH
      // What switch_to pops: the FP control words (this thread's), six registers, then the
      // "return" into entry, entered as if called (its stack 8 past a 16-byte boundary).
      uint64_t* sp = (uint64_t*)((uintptr_t)(s.stacks.data() + (t + 1) * STACK) & ~(uintptr_t)15);
      *--sp = 0;
      *--sp = (uint64_t)(uintptr_t)&Body<F>::entry;
      for (int r = 0; r < 6; ++r) *--sp = 0;
      *--sp = control;
      f.sp = sp;
#else
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = s.stacks.data() + t * STACK;
      f.ctx.uc_stack.ss_size = STACK;
      f.ctx.uc_link = nullptr;
      makecontext(&f.ctx, (void (*)())Body<F>::entry, 0);
#endif
    }
    for (size_t live = n; live > 0;) {
      live = 0;
      for (size_t t = 0; t < n; ++t) {
        if (s.fibers[t].done) continue;
        resume(t);
        if (!s.fibers[t].done) ++live;
      }
    }
  }
  Body<F>::f = nullptr;
}
}  // namespace dy_emu

#define threadIdx (dy_emu::st().fibers[dy_emu::st().cur].tid)
#define blockIdx (dy_emu::st().block)
#define blockDim (dy_emu::st().bdim)
#define gridDim (dy_emu::st().gdim)

inline void __syncthreads() { dy_emu::yield(); }
inline void __syncwarp(unsigned = 0xffffffffu) { dy_emu::yield(); }
template <typename T> T __shfl_xor_sync(unsigned, T v, int m) {
  dy_emu::State& s = dy_emu::st();
  const size_t me = s.cur;
  std::memcpy(s.slots[me], &v, sizeof(T));
  dy_emu::yield();
  T out;
  std::memcpy(&out, s.slots[(me & ~(size_t)31) | ((me & 31) ^ (size_t)m)], sizeof(T));
  dy_emu::yield();
  return out;
}
// Fibers switch only at barriers and shuffles, and a grid's blocks run one after another: a plain update is atomic.
template <typename T> T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }

// ---------------------------------------------------------------- errors
inline cudaError_t cudaGetLastError() { const cudaError_t e = dy_emu::st().last; dy_emu::st().last = cudaSuccess; return e; }
inline cudaError_t cudaPeekAtLastError() { return dy_emu::st().last; }
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error (CPU emulation)";
    case cudaErrorInvalidValue: return "invalid argument (CPU emulation: a null pointer, or memory outside its allocation)";
    case cudaErrorMemoryAllocation: return "out of memory (CPU emulation)";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument (CPU emulation)";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy (CPU emulation)";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected (CPU emulation: DYPE_EMU_DEVICES=0)";
    case cudaErrorInvalidDevice: return "invalid device ordinal (CPU emulation: see DYPE_EMU_DEVICES)";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle (CPU emulation: a stream of another device)";
  }
  return "unknown error (CPU emulation)";
}

// ---------------------------------------------------------------- devices
inline cudaError_t cudaGetDeviceCount(int* n) {
  if (!n) return dy_emu::fail(cudaErrorInvalidValue);
  const int d = dy_emu::devices();
  *n = d > 0 ? d : 0;
  return d > 0 ? cudaSuccess : dy_emu::fail(d == 0 ? cudaErrorNoDevice : cudaErrorInvalidValue);
}
inline cudaError_t cudaSetDevice(int d) {
  if (!dy_emu::valid_device(d)) return dy_emu::fail(cudaErrorInvalidDevice);
  dy_emu::st().device = d;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
  if (!d) return dy_emu::fail(cudaErrorInvalidValue);
  *d = dy_emu::st().device;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (!p) return dy_emu::fail(cudaErrorInvalidValue);
  if (!dy_emu::valid_device(d)) return dy_emu::fail(cudaErrorInvalidDevice);
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "CPU emulation of a CUDA device (%d of %d)", d, dy_emu::devices());
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer) {
  if (!can) return dy_emu::fail(cudaErrorInvalidValue);
  if (!dy_emu::valid_device(d) || !dy_emu::valid_device(peer)) return dy_emu::fail(cudaErrorInvalidDevice);
  *can = d != peer && dy_emu::peers() ? 1 : 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return dy_emu::valid_device(dy_emu::st().device) ? cudaSuccess : dy_emu::fail(cudaErrorInvalidDevice); }

// ---------------------------------------------------------------- memory
inline cudaError_t cudaMalloc(void** p, size_t n) { return dy_emu::alloc(p, n); }
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return dy_emu::alloc(p, n); }
inline cudaError_t cudaFree(void* p) { return dy_emu::release(p); }
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return dy_emu::release(p); }
inline cudaError_t cudaMemset(void* p, int v, size_t n) {
  if (n == 0) return cudaSuccess;
  if (!dy_emu::inside(p, n)) return dy_emu::fail(cudaErrorInvalidValue);
  std::memset(p, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t) {
  ++dy_emu::st().queued;
  return cudaMemset(p, v, n);
}
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { return dy_emu::copy(d, s, n, k); }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return dy_emu::copy(d, s, n, k); }
inline cudaError_t cudaMemcpyPeerAsync(void* d, int dd, const void* s, int sd, size_t n, cudaStream_t) {
  if (!dy_emu::valid_device(dd) || !dy_emu::valid_device(sd)) return dy_emu::fail(cudaErrorInvalidDevice);
  if (n == 0) return cudaSuccess;
  if (!dy_emu::inside(d, n, dd) || !dy_emu::inside(s, n, sd)) return dy_emu::fail(cudaErrorInvalidValue);
  std::memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyPeer(void* d, int dd, const void* s, int sd, size_t n) { return cudaMemcpyPeerAsync(d, dd, s, sd, n, nullptr); }

// ---------------------------------------------------------------- streams and events
inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  if (!s) return dy_emu::fail(cudaErrorInvalidValue);
  if (!dy_emu::valid_device(dy_emu::st().device)) return dy_emu::fail(cudaErrorInvalidDevice);
  *s = new (std::nothrow) dy_emu_stream{dy_emu::st().device};
  return *s ? cudaSuccess : dy_emu::fail(cudaErrorMemoryAllocation);
}
// Work runs at the call, so a non-blocking stream is an ordinary one here.
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  if (flags > cudaStreamNonBlocking) return dy_emu::fail(cudaErrorInvalidValue);
  return cudaStreamCreate(s);
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!s) return dy_emu::fail(cudaErrorInvalidResourceHandle);
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (!e) return dy_emu::fail(cudaErrorInvalidValue);
  *e = new (std::nothrow) dy_emu_event{std::chrono::steady_clock::now(), false};
  return *e ? cudaSuccess : dy_emu::fail(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (!e) return dy_emu::fail(cudaErrorInvalidResourceHandle);
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
  if (!e) return dy_emu::fail(cudaErrorInvalidResourceHandle);
  e->t = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return e ? cudaSuccess : dy_emu::fail(cudaErrorInvalidResourceHandle); }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!ms || !a || !b || !a->recorded || !b->recorded) return dy_emu::fail(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}

#pragma GCC visibility pop

#endif
