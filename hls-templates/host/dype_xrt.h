// XRT side of the generated host (built only with -DDYPE_XRT by the sw_emu,
// hw_emu and hw targets and by the ABI library's xrt-lib; C simulation never
// includes XRT). One xclbin, named by DYPE_XCLBIN (the Makefile sets it), is
// loaded on each card the first time a launch runs there. The host program
// uses one card, DYPE_DEVICE (default 0); the ABI library passes the device
// of each launch. With DYPE_P2P=1 every buffer is allocated with
// xrt::bo::flags::p2p, so that a GPU (or another FPGA) can read and write it
// directly over PCIe peer-to-peer instead of staging through host memory.
#ifndef DYPE_XRT_H
#define DYPE_XRT_H
#ifdef DYPE_XRT
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <algorithm>
#include <initializer_list>
#include <vector>
#include <xrt/xrt_bo.h>
#include "dype_pack.h"
#include "dype_util.h"
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

namespace dype {
struct XrtContext {
  xrt::device device;
  xrt::uuid uuid;
};

// Launches on different cards may start at once (ABI library threads), so the
// table of opened cards is locked; a card whose xclbin failed to load is
// tried again at its next launch.
static inline XrtContext& xrt_context(int device) {
  static std::mutex lock;
  static std::map<int, std::unique_ptr<XrtContext>> cards;
  std::lock_guard<std::mutex> g(lock);
  if (device < 0) {
    const char* dev = std::getenv("DYPE_DEVICE");
    device = dev ? std::atoi(dev) : 0;
  }
  std::unique_ptr<XrtContext>& c = cards[device];
  if (!c) {
    const char* path = std::getenv("DYPE_XCLBIN");
    if (!path) fail("DYPE_XCLBIN is not set: name the .xclbin to load");
    std::unique_ptr<XrtContext> x(new XrtContext());
    x->device = xrt::device(unsigned(device));
    x->uuid = x->device.load_xclbin(std::string(path));
    c = std::move(x);
  }
  return *c;
}

static inline xrt::bo::flags bo_flags() {
  const char* p2p = std::getenv("DYPE_P2P");
  return p2p && std::string(p2p) == "1" ? xrt::bo::flags::p2p : xrt::bo::flags::normal;
}

// What one launch function keeps on a card: its kernel handle and buffers, its dense inputs, each with
// the version of the memory it came from (an input whose ABI allocation was not written since moves
// nothing), and the packed sparse operand it last left there (per channel its nonzero stream, and the
// step table) with a host copy of what the card holds. Two ways to find that pack still right. Where the
// ABI library says the operand's buffers are unchanged (LaunchAt::versions: the same versions of rowPtr,
// colIdx and values over the same rows), the launch does no host work on it at all: no pattern lookup,
// no value refill, nothing moved. Otherwise it packs (the pack cache finds a known pattern), refills the
// values and compares the packed words with what the card holds: a channel whose words are unchanged
// stays (every repeat trip of the host program, whose buffers have no versions), a changed one is
// written and synced alone. Launches of the function on one card take turns with its buffers (the
// caller holds the entry's lock until its run is done).
struct PackKey {
  std::vector<uint64_t> versions;  // of the operand's buffers; a 0 among them: not known
  int32_t r_lo = 0, r_hi = 0, cols = 0;
  bool known() const {
    return !versions.empty() && std::find(versions.begin(), versions.end(), uint64_t(0)) == versions.end();
  }
  bool operator==(const PackKey& o) const { return versions == o.versions && r_lo == o.r_lo && r_hi == o.r_hi && cols == o.cols; }
};

// What a launch reads of its pack besides the words: its step counts and the figures it notes.
struct PackHead {
  int n_tiles = 0, n_wins = 0;
  long long cycles = 0, fold_cycles = 0, nnz = 0;
};

// A buffer on the card, its bytes (0: none yet; a default xrt::bo has no handle to ask) and its kernel
// argument's memory group.
struct CardBuffer {
  xrt::bo bo;
  size_t cap = 0;
  int group = -1;
};

// A dense input kept on the card, with the memory and version it was synced from.
struct CardInput {
  CardBuffer buf;
  size_t bytes = 0;
  const void* src = nullptr;
  uint64_t version = 0;
};

// A part of the packed operand on the card, with a host copy of what it holds.
template <class T>
struct CardCopy {
  CardBuffer buf;
  std::vector<T> held;
};

struct CardState {
  std::mutex lock;
  // The kernel's handle on this card, opened at its first launch there (XRT opens a context on its
  // compute unit per handle: not a per-call cost), and the output buffers by argument index.
  std::unique_ptr<xrt::kernel> kernel;
  // The output buffers by argument index and the host memory they stand for, least recently used first: a
  // launch's output left on the card (through the ABI library) stays there while other memory is written.
  std::map<int, std::vector<std::pair<const void*, std::unique_ptr<CardBuffer>>>> outputs;
  // The launch function's dense inputs by argument index.
  std::map<int, CardInput> inputs;
  // The packed operand: per channel its nonzero stream, and the step table.
  std::vector<CardCopy<uint64_t>> words;
  CardCopy<int32_t> meta;
  // The buffers' versions the held pack was made from (known only through the ABI library), its head, its bytes.
  PackKey key;
  PackHead head;
  long long bytes = 0;
};
struct CardStates {
  std::mutex lock;
  std::map<const XrtContext*, std::unique_ptr<CardState>> cards;
};

// The key of a launch's packed operand: the versions of its buffers `from` (launch order) and its rows and columns.
static inline PackKey pack_key(const LaunchAt& at, std::initializer_list<int> from, int32_t r_lo, int32_t r_hi, int32_t cols) {
  PackKey k;
  for (int i : from) k.versions.push_back(version_of(at, i));
  k.r_lo = r_lo;
  k.r_hi = r_hi;
  k.cols = cols;
  return k;
}

// The entry of card X, locked in `hold` for the caller's run.
static inline CardState& card_of(CardStates& c, XrtContext& X, std::unique_lock<std::mutex>& hold) {
  CardState* cp;
  {
    std::lock_guard<std::mutex> g(c.lock);
    std::unique_ptr<CardState>& e = c.cards[&X];
    if (!e) e.reset(new CardState());
    cp = e.get();
  }
  hold = std::unique_lock<std::mutex>(cp->lock);
  return *cp;
}

// The kernel `name` on the card of cs (opened once).
static inline xrt::kernel& kernel_of(CardState& cs, XrtContext& X, const char* name) {
  if (!cs.kernel) cs.kernel.reset(new xrt::kernel(X.device, X.uuid, name));
  return *cs.kernel;
}

// b with room for `bytes` (made anew, in argument group `group`, where too small).
static inline xrt::bo& room(CardBuffer& b, const xrt::device& dev, int group, size_t bytes) {
  if (b.cap < std::max<size_t>(1, bytes)) {
    b.cap = std::max<size_t>(1, bytes);
    b.bo = xrt::bo(dev, b.cap, bo_flags(), group);
    b.group = group;
  }
  return b.bo;
}

// Output buffers kept per argument (each for other host memory): a loop's two swapped values both stay.
static const size_t OUTPUTS_KEPT = 4;

// The buffer of output `arg` for the host memory `host`, moved to the most recently used end; a new one
// where there is none, the least recently used given up (what it held of an output comes back first).
static inline CardBuffer& output_buffer(CardState& cs, int arg, const void* host, const LaunchAt& at) {
  auto& list = cs.outputs[arg];
  auto it = std::find_if(list.begin(), list.end(), [host](const auto& e) { return e.first == host; });
  std::pair<const void*, std::unique_ptr<CardBuffer>> e;
  if (it != list.end()) {
    e = std::move(*it);
    list.erase(it);
  } else {
    if (list.size() >= OUTPUTS_KEPT) {
      if (at.settle_holder) at.settle_holder(list.front().second.get(), nullptr, nullptr);
      list.erase(list.begin());
    }
    e = {host, std::unique_ptr<CardBuffer>(new CardBuffer())};
  }
  list.push_back(std::move(e));
  return *list.back().second;
}

// Output `arg`'s buffer for `host` of at least `bytes` on the card, which the launch writes in [w_lo, w_hi)
// (bytes from the start). What it still holds of earlier launches (left there through the ABI library)
// outside those bytes comes back to the host first.
static inline xrt::bo& output_on_card(CardState& cs, int arg, XrtContext& X, const xrt::kernel& krn, const void* host, size_t bytes, size_t w_lo, size_t w_hi, const LaunchAt& at) {
  CardBuffer& b = output_buffer(cs, arg, host, at);
  if (at.settle_holder) at.settle_holder(&b, static_cast<const char*>(host) + w_lo, static_cast<const char*>(host) + w_hi);
  return room(b, X.device, krn.group_id(arg), bytes);
}

// After the kernel: the output's rows [lo, lo + bytes) (bytes from the buffer's start) at `host` (its start).
// Through the ABI library they stay on the card until the host side reads them (LaunchAt::leave); in the
// host program they come back now. Notes the bytes.
static inline void output_back(CardState& cs, int arg, XrtContext& X, void* host, size_t lo, size_t bytes, const LaunchAt& at, const char* kernel) {
  if (bytes == 0) return;
  CardBuffer& b = output_buffer(cs, arg, host, at);
  xrt::bo bo = b.bo;
  const std::string name(kernel);
  auto fetch = [bo, lo, bytes, name](void* dst) mutable {
    bo.sync(XCL_BO_SYNC_BO_FROM_DEVICE, bytes, lo);
    bo.read(dst, bytes, lo);
    note_output(name.c_str(), (long long)bytes, 0);
  };
  if (!at.leave) {
    fetch(static_cast<char*>(host) + lo);
    return;
  }
  at.leave(host, lo, bytes, &b, &X, fetch);
  note_output(kernel, 0, (long long)bytes);
}

// Whether the card holds the pack of exactly these buffers' contents (noted as kept for `kernel` if so).
static inline bool holds(CardState& cp, const PackKey& key, const char* kernel) {
  if (!key.known() || !(cp.key == key)) return false;
  note_card(kernel, 0, cp.bytes, true);
  return true;
}

// Writes and syncs `bytes` of `src` into b (grown where too small).
static inline void to_card(CardBuffer& b, const xrt::device& dev, int group, const void* src, size_t bytes) {
  xrt::bo& bo = room(b, dev, group, bytes);
  if (bytes == 0) return;
  bo.write(src, bytes, 0);
  bo.sync(XCL_BO_SYNC_BO_TO_DEVICE, bytes, 0);
}

// Brings `now` (its first `bytes`) into c unless c holds it already; returns the bytes moved.
template <class T>
static inline long long refresh(CardCopy<T>& c, const std::vector<T>& now, size_t bytes, const xrt::device& dev, int group) {
  if (c.buf.cap > 0 && c.held == now) return 0;
  to_card(c.buf, dev, group, now.data(), bytes);
  c.held = now;
  return (long long)bytes;
}

// Dense input `arg` (its `bytes` at src) on the card: synced unless the card already holds this memory at
// this version (the ABI library's, LaunchAt::versions; 0, not known, always syncs). Notes the bytes.
static inline xrt::bo& input_on_card(CardState& cp, int arg, XrtContext& X, const xrt::kernel& krn, const void* src, size_t bytes, uint64_t version, const char* kernel, const LaunchAt& at = LaunchAt()) {
  CardInput& in = cp.inputs[arg];
  if (version != 0 && in.buf.cap > 0 && in.version == version && in.src == src && in.bytes == bytes) {
    note_input(kernel, 0, (long long)bytes);
    return in.buf.bo;
  }
  // An earlier launch's output left on this card: read there if it is in this argument's memory, else copied
  // across on the card (nothing crosses the link either way).
  if (at.held_by && bytes > 0) {
    const CardBuffer* h = static_cast<const CardBuffer*>(at.held_by(src, bytes, &X));
    if (h) {
      note_input(kernel, 0, (long long)bytes);
      if (h->group == krn.group_id(arg)) return const_cast<CardBuffer*>(h)->bo;
      xrt::bo& bo = room(in.buf, X.device, krn.group_id(arg), bytes);
      bo.copy(h->bo, bytes, 0, 0);
      in.src = src;
      in.bytes = bytes;
      in.version = version;
      return bo;
    }
  }
  host_fresh(at, src);
  to_card(in.buf, X.device, krn.group_id(arg), src, bytes);
  in.src = src;
  in.bytes = bytes;
  in.version = version;
  note_input(kernel, (long long)bytes, 0);
  return in.buf.bo;
}

// Brings pk, made from the buffers of `key`, onto the card: channel c into argument group words_group + c
// (its words of `pe` entries, `word_bytes` each), the step table into meta_group; moves only what differs
// from what the card holds, and notes the bytes moved and kept for `kernel`.
static inline void keep_on_card(CardState& cp, const char* kernel, XrtContext& X, const xrt::kernel& krn, const RowPack& pk, const PackKey& key, int words_group, int meta_group, size_t word_bytes, int pe) {
  if (cp.words.size() != size_t(pk.ch)) cp.words.assign(size_t(pk.ch), CardCopy<uint64_t>());
  long long moved = 0, total = 0;
  for (int ch = 0; ch < pk.ch; ch++) {
    const std::vector<uint64_t>& w = pk.words[size_t(ch)];
    const size_t bytes = w.size() / size_t(pe) * word_bytes;
    moved += refresh(cp.words[size_t(ch)], w, bytes, X.device, krn.group_id(words_group + ch));
    total += (long long)bytes;
  }
  const size_t meta_bytes = pk.meta.size() * sizeof(int32_t);
  moved += refresh(cp.meta, pk.meta, meta_bytes, X.device, krn.group_id(meta_group));
  total += (long long)meta_bytes;
  cp.key = key;
  cp.head = PackHead{pk.n_tiles, pk.n_wins, pk.cycles, pk.fold_cycles, pk.nnz};
  cp.bytes = total;
  note_card(kernel, moved, total - moved);
}
}  // namespace dype
#endif
#endif
