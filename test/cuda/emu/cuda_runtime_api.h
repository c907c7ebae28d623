// A CPU stand-in for the parts of CUDA the generated code uses, for test/cuda/emulate.test.ts
// only: kernels run block by block, each thread of a block a ucontext fiber; __syncthreads,
// __syncwarp and every shuffle are barriers at which all fibers of the block take turns, so
// lanes of a warp (and threads of a block) meet there as on a GPU, provided, as CUDA itself
// requires, that they all reach the same sequence of barriers. Memory is host memory.
#ifndef DY_EMU_CUDA_RUNTIME_API_H
#define DY_EMU_CUDA_RUNTIME_API_H

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <ucontext.h>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static

struct uint3 { unsigned x, y, z; };
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
typedef struct dy_emu_stream* cudaStream_t;
typedef struct { std::chrono::steady_clock::time_point t; }* cudaEvent_t;
struct cudaDeviceProp { char name[64]; int major, minor; };

namespace dy_emu {
struct Fiber {
  ucontext_t ctx;
  uint3 tid;
  bool done;
};
struct State {
  ucontext_t sched;
  std::vector<Fiber> fibers;
  std::vector<char> stacks;
  size_t cur = 0;
  uint3 block{0, 0, 0};
  dim3 bdim, gdim;
  unsigned char slots[1024][8];
};
inline State& st() { static State s; return s; }
constexpr size_t STACK = 48 * 1024;
inline void yield() { State& s = st(); swapcontext(&s.fibers[s.cur].ctx, &s.sched); }
template <typename F> struct Body { static F* f; static void entry() { (*f)(); State& s = st(); s.fibers[s.cur].done = true; swapcontext(&s.fibers[s.cur].ctx, &s.sched); } };
template <typename F> F* Body<F>::f = nullptr;

template <typename F> void launch(dim3 g, dim3 b, F body) {
  State& s = st();
  const size_t n = (size_t)b.x * b.y * b.z;
  if (n > 1024) { std::fprintf(stderr, "emu: block too large\n"); std::abort(); }
  s.fibers.assign(n, Fiber{});
  if (s.stacks.size() < n * STACK) s.stacks.resize(n * STACK);
  s.gdim = g;
  s.bdim = b;
  Body<F>::f = &body;
  for (unsigned by = 0; by < g.y; ++by)
    for (unsigned bx = 0; bx < g.x; ++bx) {
      s.block = uint3{bx, by, 0};
      for (size_t t = 0; t < n; ++t) {
        Fiber& f = s.fibers[t];
        f.done = false;
        f.tid = uint3{(unsigned)(t % b.x), (unsigned)((t / b.x) % b.y), (unsigned)(t / ((size_t)b.x * b.y))};
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = s.stacks.data() + t * STACK;
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, (void (*)())Body<F>::entry, 0);
      }
      for (size_t live = n; live > 0;) {
        live = 0;
        for (size_t t = 0; t < n; ++t) {
          if (s.fibers[t].done) continue;
          s.cur = t;
          swapcontext(&s.sched, &s.fibers[t].ctx);
          if (!s.fibers[t].done) ++live;
        }
      }
    }
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
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return "emulated CUDA error"; }
inline cudaError_t cudaMalloc(void** p, size_t n) { *p = std::malloc(n ? n : 1); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMemset(void* p, int v, size_t n) { std::memset(p, v, n); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { std::memmove(d, s, n); return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }
inline cudaError_t cudaStreamCreate(cudaStream_t* s) { *s = nullptr; return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = new std::remove_pointer<cudaEvent_t>::type(); return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) { e->t = std::chrono::steady_clock::now(); return cudaSuccess; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count(); return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) { std::snprintf(p->name, sizeof p->name, "CPU emulation"); p->major = 9; p->minor = 0; return cudaSuccess; }

#endif
