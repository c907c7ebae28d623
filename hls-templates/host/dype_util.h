// What both the host program and the kernels' launch functions need: the
// one way to report a user or design error, where a launch runs, and the
// scheduled stream lengths the sparse kernels report.
//
// Errors are exceptions (dype::Error), never exits: the host program prints
// the message and returns 1, the ABI library (dype_abi_lib.h) turns it into
// DYPE_ERR_BACKEND with the message in error_text, and the process it is
// loaded into carries on.
#ifndef DYPE_UTIL_H
#define DYPE_UTIL_H
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace dype {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] static inline void fail(const std::string& msg) { throw Error(msg); }

// Where a launch function runs: the device (XRT: the card's index; -1: the
// host program's one card, DYPE_DEVICE or 0) and the rows [row_begin,
// row_end) of the op's top-level parallel loop it computes (row_end < 0: to
// the end). The default is the whole op, which is what the host program and
// the testbenches ask for.
struct LaunchAt {
  int device = -1;
  long long row_begin = 0;
  long long row_end = -1;
  // Per buffer of the launch (manifest order): a number that changes whenever the memory behind it is
  // written (the ABI library's write count, unique across its allocations), 0 where not known; null for
  // none (the host program). Equal numbers mean equal contents: a launch may reuse what it derived from them.
  const uint64_t* versions = nullptr;
  // The ABI library's over XRT (null in the host program, whose outputs come back at once). A launch leaves
  // what it wrote on the card: `leave` says the host's bytes [base + lo, base + lo + bytes) are held newer by
  // the card buffer `holder` of card `card`, whose offset 0 stands for `base`, and `fetch` copies them to a
  // host address. The library fetches them before the host side reads or writes that memory, and before the
  // holder is written again (`settle_holder`). `held_by` names the holder on this card of all the bytes
  // [host, host + bytes), its offset 0 standing for `host`, if one holds them and nothing else holds any of
  // them; `settle` fetches whatever the cards hold of the allocation around `host`. `settle_holder` drops,
  // rather than fetches, what the holder holds inside [lo, hi): the bytes the launch about to run rewrites.
  void (*leave)(const void* base, size_t lo, size_t bytes, const void* holder, const void* card, std::function<void(void*)> fetch) = nullptr;
  const void* (*held_by)(const void* host, size_t bytes, const void* card) = nullptr;
  void (*settle)(const void* host) = nullptr;
  void (*settle_holder)(const void* holder, const void* lo, const void* hi) = nullptr;
};

// Before a launch reads a buffer on the host: what a card holds newer of it comes back first.
static inline void host_fresh(const LaunchAt& at, const void* host) {
  if (at.settle && host) at.settle(host);
}

// The version of buffer i of a launch (0: not known).
static inline uint64_t version_of(const LaunchAt& at, int i) { return at.versions ? at.versions[i] : 0; }

// The rows of the top loop [first, last) a launch computes: the requested
// range clamped to the loop's own, empty (begin == end) when they miss.
static inline int32_t range_begin(const LaunchAt& at, int32_t first, int32_t last) {
  return int32_t(std::min<long long>(std::max<long long>(at.row_begin, first), std::max(first, last)));
}
static inline int32_t range_end(const LaunchAt& at, int32_t first, int32_t last) {
  const long long hi = at.row_end < 0 ? (long long)last : std::min<long long>(at.row_end, last);
  return int32_t(std::max<long long>(hi, range_begin(at, first, last)));
}
// An op whose loop cannot be clamped (not one parallel top loop) runs whole only.
static inline void whole_only(const LaunchAt& at, const char* kernel) {
  if (at.row_begin != 0 || at.row_end >= 0) fail(std::string("kernel ") + kernel + ": the op has no parallel top loop, so it runs only over its whole range");
}

struct CycleNote {
  long long cycles = 0, fold = 0, nnz = 0, runs = 0;
  // Over XRT: bytes of the packed sparse operand synced to the card, and found there already (dype_xrt.h);
  // launches that found it without packing (their buffers' versions unchanged).
  long long card_moved = 0, card_kept = 0, card_reused = 0;
  // Over XRT: bytes of dense inputs synced to the card, and found there already (at their version, or
  // left there by an earlier launch's output).
  long long in_moved = 0, in_kept = 0;
  // Over XRT: bytes of outputs brought back to the host, and left on the card at the end of a launch.
  long long out_moved = 0, out_left = 0;
};
// Launches of different devices may run at once (the ABI library), so the table is locked.
static inline std::mutex& cycle_notes_lock() {
  static std::mutex m;
  return m;
}
static inline std::map<std::string, CycleNote>& cycle_notes() {
  static std::map<std::string, CycleNote> m;
  return m;
}
// Scheduled stream length of a sparse kernel run (cycles of its nonzero pipeline at II=1), and
// the cycles it folds rows shared over its lanes.
static inline void note_cycles(const char* kernel, long long cycles, long long fold, long long nnz) {
  std::lock_guard<std::mutex> g(cycle_notes_lock());
  CycleNote& n = cycle_notes()[kernel];
  n.cycles += cycles;
  n.fold += fold;
  n.nnz += nnz;
  n.runs++;
}

static inline void note_input(const char* kernel, long long moved, long long kept) {
  std::lock_guard<std::mutex> g(cycle_notes_lock());
  CycleNote& n = cycle_notes()[kernel];
  n.in_moved += moved;
  n.in_kept += kept;
}

static inline void note_output(const char* kernel, long long moved, long long left) {
  std::lock_guard<std::mutex> g(cycle_notes_lock());
  CycleNote& n = cycle_notes()[kernel];
  n.out_moved += moved;
  n.out_left += left;
}

static inline void note_card(const char* kernel, long long moved, long long kept, bool reused = false) {
  std::lock_guard<std::mutex> g(cycle_notes_lock());
  CycleNote& n = cycle_notes()[kernel];
  n.card_moved += moved;
  n.card_kept += kept;
  n.card_reused += reused ? 1 : 0;
}

}  // namespace dype

#endif
