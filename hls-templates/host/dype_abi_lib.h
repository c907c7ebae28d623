// What stands behind the native ABI (dype_abi.h) of a generated FPGA library:
// devices, device memory, streams, error texts, and the checks launch() makes
// before it calls an op's launch function. The generated
// host/<program>_fpga_abi.cpp defines the C functions, each a call into here
// with its table of ops. Two builds of that one file:
//
//  - C simulation (backend "fpga-csim"): DYPE_EMU_DEVICES devices (default 8,
//    read once; anything but a count in 1..1024 gives no device), standing for
//    whatever count a system file asks. The kernels are the HLS C++ compiled
//    with g++ and called directly, as Vitis sw_emu runs them.
//  - XRT (-DDYPE_XRT, backend "xrt"): the cards XRT opens (xrt::device 0, 1,
//    ... until one fails to open); each launch loads DYPE_XCLBIN on its card
//    the first time (dype_xrt.h) and runs through the XRT path of the op's
//    launch function.
//
// Device memory is host memory in both builds: the launch functions take
// host pointers, so over XRT an allocation is a host shadow of the card's
// memory; a launch moves its dense operands to the card, keeps a sparse-rows
// design's packed matrix there while the versions of its buffers say it is
// unchanged (every write into an allocation gives it a new version), and
// leaves the rows it computed there: the allocation records which card buffer
// holds which bytes (Block::held), a later launch on that card reads them
// there, and they come home when the host side reads or writes that memory
// (docs/HLS.md says what moves when).
// Every allocation remembers its device and size, so that a pointer of
// another device is DYPE_ERR_BAD_DEVICE and a transfer past its
// end DYPE_ERR_RANGE in both builds: the runtime must move data as it would
// between real memories. copy() between devices is staged through the host,
// which here is one memcpy between the two allocations. Work runs at the
// call: streams are checked handles, and sync() has nothing to wait for.
//
// Nothing here aborts or prints: every failure is a code, and the message
// behind it is kept per thread for error_text().
#ifndef DYPE_ABI_LIB_H
#define DYPE_ABI_LIB_H
#ifndef DYPE_ABI_H
#error "include dype_abi.h (with DYPE_ABI_PREFIX defined) before dype_abi_lib.h"
#endif
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>
#include "dype_util.h"
#ifdef DYPE_XRT
#include <xrt/xrt_device.h>
#endif

namespace dype {
namespace abi {

// A failure found by the library itself, with the code the C function returns.
struct Failure {
  int code;
  std::string msg;
};
[[noreturn]] static inline void raise(int code, const std::string& msg) { throw Failure{code, msg}; }

struct LastError {
  int code = 0;
  std::string text;
};
static inline LastError& last_error() {
  thread_local LastError e;
  return e;
}
static inline int record(int code, const std::string& msg) {
  LastError& e = last_error();
  e.code = code;
  e.text = msg;
  return code;
}

// Runs the body of a C function: an exception never crosses the ABI.
template <class F>
static inline int guarded(F&& body) {
  try {
    return body();
  } catch (const Failure& e) {
    return record(e.code, e.msg);
  } catch (const std::bad_alloc&) {
    return record(DYPE_ERR_ALLOC, "out of host memory");
  } catch (const std::exception& e) {
    return record(DYPE_ERR_BACKEND, e.what());
  } catch (...) {
    return record(DYPE_ERR_BACKEND, "an unknown exception");
  }
}

// ---------------------------------------------------------------- devices

struct Devices {
  std::vector<std::string> names;
  std::string why_none;  // when there are none: why
};

#ifdef DYPE_XRT
static inline Devices probe_devices() {
  Devices d;
  for (unsigned i = 0; i < 64; i++) {
    try {
      xrt::device card(i);
      d.names.push_back(card.get_info<xrt::info::device::name>() + " (XRT card " + std::to_string(i) + ")");
    } catch (const std::exception& e) {
      if (i == 0) d.why_none = std::string("XRT opens no card: ") + e.what();
      break;
    }
  }
  return d;
}
static inline const char* backend() { return "xrt"; }
#else
static inline Devices probe_devices() {
  Devices d;
  const char* env = std::getenv("DYPE_EMU_DEVICES");
  long n = 8;
  if (env) {
    char* end = nullptr;
    n = std::strtol(env, &end, 10);
    if (*env == '\0' || *end != '\0' || n < 1 || n > 1024) {
      d.why_none = std::string("DYPE_EMU_DEVICES='") + env + "' is not a device count in 1..1024";
      return d;
    }
  }
  for (long i = 0; i < n; i++) d.names.push_back("emulated FPGA " + std::to_string(i) + " (C simulation of the HLS kernels)");
  return d;
}
static inline const char* backend() { return "fpga-csim"; }
#endif

static inline const Devices& devices() {
  static const Devices d = probe_devices();
  return d;
}
static inline int device_count() {
  return int(devices().names.size());
}
static inline const char* device_name(int dev) {
  return dev >= 0 && dev < device_count() ? devices().names[size_t(dev)].c_str() : nullptr;
}
static inline void check_device(int dev, const char* what) {
  if (dev >= 0 && dev < device_count()) return;
  std::string msg = std::string(what) + ": device " + std::to_string(dev) + " is not one of this library's " + std::to_string(device_count()) + " devices";
  if (device_count() == 0) msg += " (" + devices().why_none + ")";
  raise(DYPE_ERR_BAD_DEVICE, msg);
}

// ---------------------------------------------------------------- memory and streams

// Bytes [lo, hi) of an allocation that a card holds newer than the host (XRT: a launch's output left
// there), held by a card buffer of a card, and how to bring them to the host.
struct Held {
  uintptr_t lo, hi;
  uintptr_t base;  // the host address the holder's offset 0 stands for
  const void* holder;
  const void* card;
  std::function<void(void*)> fetch;
};
struct Block {
  int dev;
  size_t bytes;
  // Set from State::writes at allocation and at every write (upload, copy, a launch's output): equal
  // versions, equal contents (LaunchAt::versions).
  uint64_t version;
  std::vector<Held> held;
};
struct Stream {
  int dev;
};
struct State {
  std::mutex lock;
  std::map<uintptr_t, Block> blocks;  // by base address
  std::set<const Stream*> streams;
  uint64_t writes = 0;
};

static inline State& state_of() {
  static State s;
  return s;
}
static inline State& state() { return state_of(); }

// The block holding p (s.lock held), or null.
static inline Block* block_of(State& s, const void* p) {
  auto it = s.blocks.upper_bound(uintptr_t(p));
  if (it == s.blocks.begin()) return nullptr;
  --it;
  return uintptr_t(p) - it->first <= it->second.bytes ? &it->second : nullptr;
}

static inline bool overlaps(const Held& h, uintptr_t lo, uintptr_t hi) { return h.lo < hi && h.hi > lo; }

// Takes out of hs the entries `hit` selects, each brought to the host first unless it lies wholly inside
// [keep_lo, keep_hi) (bytes about to be rewritten: dropped); s.lock held. A fetch is a copy from a card
// buffer into an allocation: it takes no lock of this library.
template <class Hit>
static inline void take_held(std::vector<Held>& hs, Hit hit, uintptr_t keep_lo, uintptr_t keep_hi) {
  for (size_t k = 0; k < hs.size();) {
    Held& h = hs[k];
    if (!hit(h)) {
      k++;
      continue;
    }
    if (h.lo < keep_lo || h.hi > keep_hi) h.fetch(reinterpret_cast<void*>(h.lo));
    hs.erase(hs.begin() + std::ptrdiff_t(k));
  }
}

// Brings to the host what the cards hold of b in [lo, hi); s.lock held.
static inline void settle_range(Block& b, uintptr_t lo, uintptr_t hi) {
  take_held(b.held, [lo, hi](const Held& h) { return overlaps(h, lo, hi); }, 0, 0);
}

// LaunchAt::settle: whatever the cards hold of the allocation around p comes back to the host.
static inline void settle_at(const void* p) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  if (Block* b = block_of(s, p)) settle_range(*b, 0, UINTPTR_MAX);
}

// LaunchAt::settle_holder: what this card buffer holds comes back before it is written again, but for the
// bytes inside [lo, hi), which the coming launch rewrites.
static inline void settle_holder_at(const void* holder, const void* lo, const void* hi) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  for (auto& kv : s.blocks)
    take_held(kv.second.held, [holder](const Held& h) { return h.holder == holder; }, uintptr_t(lo), uintptr_t(hi));
}

// LaunchAt::leave: a launch's output bytes stay on the card. What another card held of them is superseded,
// but an older entry that reaches past them comes back first (its other bytes are still the newest).
static inline void leave_at(const void* base, size_t off, size_t bytes, const void* holder, const void* card, std::function<void(void*)> fetch) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  const uintptr_t lo = uintptr_t(base) + off, hi = lo + bytes;
  Block* b = block_of(s, reinterpret_cast<const void*>(lo));
  if (!b) {
    fetch(reinterpret_cast<void*>(lo));
    return;
  }
  take_held(b->held, [lo, hi](const Held& h) { return overlaps(h, lo, hi); }, lo, hi);
  b->held.push_back(Held{lo, hi, uintptr_t(base), holder, card, std::move(fetch)});
}

// LaunchAt::held_by: the card buffer on `card` that holds all of [p, p + bytes) and nothing else does, or null.
static inline const void* held_by_at(const void* p, size_t bytes, const void* card) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  const Block* b = block_of(s, p);
  if (!b) return nullptr;
  const uintptr_t lo = uintptr_t(p), hi = lo + bytes;
  const Held* only = nullptr;
  for (const Held& h : b->held) {
    if (!overlaps(h, lo, hi)) continue;
    if (only) return nullptr;
    only = &h;
  }
  return only && only->card == card && only->base == lo && only->lo <= lo && only->hi >= hi ? only->holder : nullptr;
}

// Notes a write into the allocation holding p: its contents are new.
static inline void wrote(const void* p) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  if (Block* b = block_of(s, p)) b->version = ++s.writes;
}

// The version of the allocation holding p (0: none).
static inline uint64_t version_of(const void* p) {
  State& s = state_of();
  std::lock_guard<std::mutex> g(s.lock);
  const Block* b = p ? block_of(s, p) : nullptr;
  return b ? b->version : 0;
}

// Page-aligned, as a card's allocations are and as XRT wants host memory it maps.
static const size_t ALIGN = 4096;

static inline int alloc(int dev, size_t bytes, void** out) {
  return guarded([&] {
    check_device(dev, "alloc");
    if (!out) raise(DYPE_ERR_BAD_SIZE, "alloc: no place for the pointer (out is NULL)");
    if (bytes > (size_t(1) << 48)) raise(DYPE_ERR_TOO_LARGE, "alloc: " + std::to_string(bytes) + " bytes is more than any device holds");
    const size_t rounded = (std::max<size_t>(bytes, 1) + ALIGN - 1) / ALIGN * ALIGN;
    void* p = std::aligned_alloc(ALIGN, rounded);
    if (!p) raise(DYPE_ERR_ALLOC, "alloc: " + std::to_string(bytes) + " bytes on device " + std::to_string(dev) + " are not available");
    State& s = state();
    std::lock_guard<std::mutex> g(s.lock);
    s.blocks[uintptr_t(p)] = Block{dev, bytes, ++s.writes};
    *out = p;
    return 0;
  });
}

static inline int free_block(int dev, void* p) {
  return guarded([&] {
    check_device(dev, "free");
    if (!p) return 0;
    State& s = state();
    std::lock_guard<std::mutex> g(s.lock);
    auto it = s.blocks.find(uintptr_t(p));
    if (it == s.blocks.end()) raise(DYPE_ERR_BAD_DEVICE, "free: the pointer is not an allocation of this library");
    if (it->second.dev != dev) raise(DYPE_ERR_BAD_DEVICE, "free: the allocation belongs to device " + std::to_string(it->second.dev) + ", not " + std::to_string(dev));
    s.blocks.erase(it);
    std::free(p);
    return 0;
  });
}

// Checks that [p + off, p + off + bytes) lies inside one allocation of device dev; returns p + off.
static inline char* span(int dev, const void* p, size_t off, size_t bytes, const std::string& what) {
  if (!p) raise(DYPE_ERR_BAD_DEVICE, what + ": NULL is not memory of device " + std::to_string(dev));
  State& s = state();
  std::lock_guard<std::mutex> g(s.lock);
  auto it = s.blocks.upper_bound(uintptr_t(p));
  if (it == s.blocks.begin()) raise(DYPE_ERR_BAD_DEVICE, what + ": the pointer is not memory of any device of this library");
  --it;
  const size_t into = size_t(uintptr_t(p) - it->first);
  const Block& b = it->second;
  if (into > b.bytes) raise(DYPE_ERR_BAD_DEVICE, what + ": the pointer is not memory of any device of this library");
  if (b.dev != dev) raise(DYPE_ERR_BAD_DEVICE, what + ": the memory belongs to device " + std::to_string(b.dev) + ", not " + std::to_string(dev));
  if (off > b.bytes - into || bytes > b.bytes - into - off)
    raise(DYPE_ERR_RANGE, what + ": " + std::to_string(bytes) + " bytes at offset " + std::to_string(into + off) + " pass the end of a " + std::to_string(b.bytes) + "-byte allocation on device " + std::to_string(dev));
  return static_cast<char*>(const_cast<void*>(p)) + off;
}

// The host copy of [p, p + bytes) brought up to date from the cards (before it is read or partly written).
static inline void fresh(const void* p, size_t bytes) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.lock);
  if (Block* b = block_of(s, p)) settle_range(*b, uintptr_t(p), uintptr_t(p) + std::max<size_t>(bytes, 1));
}

// Bytes from p to the end of its allocation on dev (for a dim the sizes do not carry).
static inline size_t extent(int dev, const void* p, const std::string& what) {
  span(dev, p, 0, 0, what);
  State& s = state();
  std::lock_guard<std::mutex> g(s.lock);
  auto it = --s.blocks.upper_bound(uintptr_t(p));
  return it->second.bytes - size_t(uintptr_t(p) - it->first);
}

static inline void check_stream(int dev, const void* stream, const char* what) {
  if (!stream) return;
  State& s = state();
  std::lock_guard<std::mutex> g(s.lock);
  const Stream* st = static_cast<const Stream*>(stream);
  if (!s.streams.count(st)) raise(DYPE_ERR_BAD_DEVICE, std::string(what) + ": not a stream of this library");
  if (st->dev != dev) raise(DYPE_ERR_BAD_DEVICE, std::string(what) + ": the stream belongs to device " + std::to_string(st->dev) + ", not " + std::to_string(dev));
}

static inline int stream_create(int dev, void** out) {
  return guarded([&] {
    check_device(dev, "stream_create");
    if (!out) raise(DYPE_ERR_BAD_SIZE, "stream_create: no place for the handle (out is NULL)");
    Stream* st = new Stream{dev};
    State& s = state();
    std::lock_guard<std::mutex> g(s.lock);
    s.streams.insert(st);
    *out = st;
    return 0;
  });
}

static inline int stream_destroy(int dev, void* stream) {
  return guarded([&] {
    check_device(dev, "stream_destroy");
    if (!stream) return 0;
    check_stream(dev, stream, "stream_destroy");
    State& s = state();
    std::lock_guard<std::mutex> g(s.lock);
    s.streams.erase(static_cast<const Stream*>(stream));
    delete static_cast<Stream*>(stream);
    return 0;
  });
}

static inline int upload(int dev, void* dst, size_t dst_off, const void* src, size_t bytes, void* stream) {
  return guarded([&] {
    check_device(dev, "upload");
    check_stream(dev, stream, "upload");
    char* to = span(dev, dst, dst_off, bytes, "upload to device " + std::to_string(dev));
    if (bytes > 0 && !src) raise(DYPE_ERR_BAD_SIZE, "upload: the host source is NULL");
    fresh(to, bytes);
    if (bytes > 0) std::memcpy(to, src, bytes);
    wrote(to);
    return 0;
  });
}

static inline int download(int dev, void* dst, const void* src, size_t src_off, size_t bytes, void* stream) {
  return guarded([&] {
    check_device(dev, "download");
    check_stream(dev, stream, "download");
    const char* from = span(dev, src, src_off, bytes, "download from device " + std::to_string(dev));
    if (bytes > 0 && !dst) raise(DYPE_ERR_BAD_SIZE, "download: the host destination is NULL");
    fresh(from, bytes);
    if (bytes > 0) std::memcpy(dst, from, bytes);
    return 0;
  });
}

// No peer-to-peer path: staged through the host, which holds both memories here.
static inline int copy(int dst_dev, void* dst, size_t dst_off, int src_dev, const void* src, size_t src_off, size_t bytes, void* stream) {
  return guarded([&] {
    check_device(dst_dev, "copy (destination)");
    check_device(src_dev, "copy (source)");
    if (stream) {
      try {
        check_stream(dst_dev, stream, "copy");
      } catch (const Failure&) {
        check_stream(src_dev, stream, "copy");
      }
    }
    char* to = span(dst_dev, dst, dst_off, bytes, "copy to device " + std::to_string(dst_dev));
    const char* from = span(src_dev, src, src_off, bytes, "copy from device " + std::to_string(src_dev));
    fresh(from, bytes);
    fresh(to, bytes);
    if (bytes > 0) std::memmove(to, from, bytes);
    wrote(to);
    return 0;
  });
}

static inline int sync(int dev, void* stream) {
  return guarded([&] {
    check_device(dev, "sync");
    check_stream(dev, stream, "sync");
    return 0;
  });
}

// ---------------------------------------------------------------- ops

// What run() of an op gets: the launch's device, buffers and sizes, checked as it reads them.
struct Call {
  int dev;
  void* const* buffers;
  std::vector<int32_t> sizes;
  LaunchAt at;
  const char* op;

  int32_t size(int i) const { return sizes[size_t(i)]; }

  // The op wrote buffer i (its result): what was derived from its old contents is stale.
  void wrote(int i) const { abi::wrote(buffers[i]); }

  // Buffer i as `count` elements of T on the launch's device (NULL allowed for none).
  template <class T>
  T* buffer(int i, size_t count) const {
    void* p = buffers[i];
    if (count == 0 && !p) return nullptr;
    span(dev, p, 0, count * sizeof(T), std::string("launch ") + op + ": buffer " + std::to_string(i));
    return static_cast<T*>(p);
  }

  // A dim no size carries, from the extent of buffer i: its elements of `elem` bytes over `per` per step of the dim.
  int32_t dim_from_extent(int i, size_t elem, size_t per, const char* dim) const {
    const size_t n = extent(dev, buffers[i], std::string("launch ") + op + ": buffer " + std::to_string(i)) / elem / std::max<size_t>(per, 1);
    if (n > size_t(INT32_MAX)) raise(DYPE_ERR_TOO_LARGE, std::string("launch ") + op + ": dim '" + dim + "' taken from buffer " + std::to_string(i) + " would be " + std::to_string(n) + ", past the designs' 32-bit counts");
    return int32_t(n);
  }
};

struct Op {
  const char* kernel;
  const char* op;
  const char* impl;  // the FPGA implementation (runtime/catalogue/names.ts) of the op's design
  int buffers;
  int sizes;  // the manifest's; launch() takes DYPE_PATTERN_FIGURES more (the pattern's figures, dype_abi.h)
  bool splittable;
  void (*run)(const Call& c);
};

static inline const Op* find_op(const Op* ops, int n, const char* kernel, const char* op) {
  if (!kernel || !op) return nullptr;
  for (int h = 0; h < n; h++)
    if (std::strcmp(ops[h].kernel, kernel) == 0 && std::strcmp(ops[h].op, op) == 0) return &ops[h];
  return nullptr;
}

static inline int op_lookup(const Op* ops, int n, const char* kernel, const char* op, const char* impl) {
  return guarded([&] {
    const Op* o = find_op(ops, n, kernel, op);
    if (!o) raise(DYPE_ERR_BAD_VARIANT, std::string("op_lookup: no op '") + (op ? op : "(null)") + "' in kernel '" + (kernel ? kernel : "(null)") + "'");
    if (!impl || std::strcmp(o->impl, impl) != 0)
      raise(DYPE_ERR_BAD_VARIANT, std::string("op_lookup: op ") + o->op + " of kernel " + o->kernel + " is implemented as '" + o->impl + "', not '" + (impl ? impl : "(null)") + "'");
    return int(o - ops);
  });
}

static inline int launch(const Op* ops, int n, int dev, int handle, void* const* buffers, const long long* sizes, long long row_begin, long long row_end, void* stream) {
  return guarded([&] {
    check_device(dev, "launch");
    if (handle < 0 || handle >= n) raise(DYPE_ERR_BAD_VARIANT, "launch: " + std::to_string(handle) + " is not an op handle of this library");
    check_stream(dev, stream, "launch");
    const Op& o = ops[handle];
    const std::string name = std::string(o.kernel) + " " + o.op;
    if (o.buffers > 0 && !buffers) raise(DYPE_ERR_BAD_SIZE, "launch " + name + ": buffers is NULL");
    if (!sizes) raise(DYPE_ERR_BAD_SIZE, "launch " + name + ": sizes is NULL");
    if (!o.splittable && (row_begin != 0 || row_end >= 0))
      raise(DYPE_ERR_UNSUPPORTED, "launch " + name + ": the op is not splittable, so it runs only over the whole range (0, -1), not [" + std::to_string(row_begin) + ", " + std::to_string(row_end) + ")");
    if (row_begin < 0) raise(DYPE_ERR_RANGE, "launch " + name + ": row_begin " + std::to_string(row_begin) + " is negative");
    Call c{dev, buffers, {}, LaunchAt{dev, row_begin, row_end}, nullptr};
    c.op = name.c_str();
    for (int i = 0; i < o.sizes + DYPE_PATTERN_FIGURES; i++) {
      if (sizes[i] < 0) raise(DYPE_ERR_BAD_SIZE, "launch " + name + ": size " + std::to_string(i) + " is negative (" + std::to_string(sizes[i]) + ")");
      if (sizes[i] > INT32_MAX) raise(DYPE_ERR_TOO_LARGE, "launch " + name + ": size " + std::to_string(i) + " is " + std::to_string(sizes[i]) + "; the FPGA designs count in 32 bits");
      c.sizes.push_back(int32_t(sizes[i]));
    }
    // What each buffer holds now, for a launch function that keeps what it derives from it (dype_xrt.h).
    std::vector<uint64_t> versions(size_t(o.buffers), 0);
    for (int i = 0; i < o.buffers; i++) versions[size_t(i)] = version_of(buffers[i]);
    c.at.versions = versions.data();
    c.at.leave = leave_at;
    c.at.held_by = held_by_at;
    c.at.settle = settle_at;
    c.at.settle_holder = settle_holder_at;
    o.run(c);
    return 0;
  });
}

static inline const char* error_text(int code) {
  if (code == 0) return "success";
  const LastError& e = last_error();
  if (e.code == code && !e.text.empty()) return e.text.c_str();
  switch (code) {
    case DYPE_ERR_BAD_SIZE: return "a size, count or pointer argument is invalid";
    case DYPE_ERR_TOO_LARGE: return "a size is larger than the FPGA designs handle";
    case DYPE_ERR_BAD_VARIANT: return "no such op or implementation in this library";
    case DYPE_ERR_BAD_DEVICE: return "the device does not exist, or the memory or stream belongs to another device";
    case DYPE_ERR_ALLOC: return "out of memory";
    case DYPE_ERR_RANGE: return "out of range: past the end of an allocation, or a negative row";
    case DYPE_ERR_UNSUPPORTED: return "not supported by this op or library";
    case DYPE_ERR_BACKEND: return "the kernel or the device runtime failed";
  }
  thread_local std::string other;
  other = code > 0 ? "device runtime error " + std::to_string(code) : "unknown error code " + std::to_string(code);
  return other.c_str();
}

}  // namespace abi
}  // namespace dype

#endif
