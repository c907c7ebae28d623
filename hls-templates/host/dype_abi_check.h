// Runs a kernel program through the native ABI only (the functions of
// dype_abi.h; the includer defines DYPE_ABI_PREFIX and links the library),
// the way the runtime will drive a split pipeline stage, so that C simulation
// proves the library computes the program and moves data where it must:
//
//   - inputs are bound and laid out as the host program does (dype_host.h);
//     every region is allocated and uploaded on each device used;
//   - an op whose manifest entry says what a row range writes (splitWrites)
//     is cut into K row ranges balanced by the nonzeros of its balancing
//     pattern (or by rows) and launched on K devices at once, one thread
//     each; then every slice is copied from its device into the others
//     (all-gather). Other ops run whole on the first device and their result
//     is broadcast;
//   - a sparse result the host permutes into its other layout is downloaded
//     first and the permuted region uploaded to every device after;
//   - results are downloaded from the first device and written as Matrix
//     Market files, and every allocation is freed.
//
// Usage: <kernel>_abi_check [--split K] [--devices D0,D1,...] --in ... --out ... --param ...
// (K defaults to 1; the devices to 0..K-1.) Exit status 0, 1 for a user
// error, 3 when an ABI call fails (its code and error_text on stderr).
#ifndef DYPE_ABI_CHECK_H
#define DYPE_ABI_CHECK_H
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "dype_host.h"

namespace dype {

struct AbiCheck : OpRunner {
  Program& P;
  std::vector<int> devs;
  std::map<std::string, std::vector<void*>> mem;  // physical region -> its allocation on each device
  long long launches = 0, copies = 0, copied = 0;

  AbiCheck(Program& p, std::vector<int> d) : P(p), devs(std::move(d)) {}

  static void check(int rc, const std::string& what) {
    if (rc != 0) throw std::runtime_error(what + ": " + DYPE_ABI(error_text)(rc) + " (code " + std::to_string(rc) + ")");
  }

  static size_t bytes_of(const Region& r) { return r.bytes.size() * sizeof(uint64_t); }

  void upload_all() {
    for (auto& kv : P.regions)
      for (int d : devs) {
        void* p = nullptr;
        check(DYPE_ABI(alloc)(d, bytes_of(kv.second), &p), "alloc of " + kv.first + " on device " + std::to_string(d));
        mem[kv.first].push_back(p);
        check(DYPE_ABI(upload)(d, p, 0, kv.second.data(), bytes_of(kv.second), nullptr), "upload of " + kv.first + " to device " + std::to_string(d));
      }
  }

  void download_all() {
    for (auto& kv : P.regions) check(DYPE_ABI(download)(devs[0], kv.second.data(), mem[kv.first][0], 0, bytes_of(kv.second), nullptr), "download of " + kv.first + " from device " + std::to_string(devs[0]));
  }

  void free_all() {
    for (auto& kv : mem)
      for (size_t s = 0; s < devs.size(); s++) check(DYPE_ABI(free)(devs[s], kv.second[s]), "free of " + kv.first + " on device " + std::to_string(devs[s]));
    mem.clear();
  }

  // Copies elements [lo, hi) of a region from slice `from`'s device into every other device.
  void spread(const std::string& region, size_t from, size_t lo, size_t hi) {
    const size_t eb = elem_bytes(P.regions.at(region).elem);
    if (hi <= lo) return;
    for (size_t t = 0; t < devs.size(); t++) {
      if (t == from) continue;
      check(DYPE_ABI(copy)(devs[t], mem[region][t], lo * eb, devs[from], mem[region][from], lo * eb, (hi - lo) * eb, nullptr),
            "copy of " + region + "[" + std::to_string(lo) + ", " + std::to_string(hi) + ") from device " + std::to_string(devs[from]) + " to " + std::to_string(devs[t]));
      copies++;
      copied += (long long)((hi - lo) * eb);
    }
  }

  const std::vector<int32_t>& balance_ptr(const OpSpec& o) const {
    const Pattern& p = P.pattern(o.split.balance_root);
    return o.split.balance_layout == "csc" ? p.colPtr : p.rowPtr;
  }

  // K row ranges of [0, R), cut where the balancing pointers pass k/K of the entries (or evenly by rows).
  std::vector<std::pair<long long, long long>> cut(const OpSpec& o, long long R) const {
    const size_t K = devs.size();
    std::vector<long long> at(K + 1, 0);
    at[K] = R;
    for (size_t t = 1; t < K; t++) {
      if (o.split.balance_root.empty()) {
        at[t] = R * (long long)t / (long long)K;
        continue;
      }
      const std::vector<int32_t>& ptr = balance_ptr(o);
      const long long rows = std::min<long long>(R, (long long)ptr.size() - 1);
      const long long total = ptr[size_t(rows)] - ptr[0];
      const long long want = ptr[0] + (total * (long long)t + (long long)K - 1) / (long long)K;
      at[t] = std::lower_bound(ptr.begin(), ptr.begin() + rows + 1, want) - ptr.begin();
    }
    for (size_t t = 1; t <= K; t++) at[t] = std::max(at[t], at[t - 1]);
    std::vector<std::pair<long long, long long>> out;
    for (size_t t = 0; t < K; t++) out.push_back({at[t], at[t + 1]});
    return out;
  }

  // Elements of the out region rows [lo, hi) write (SplitSpec::writes).
  std::pair<size_t, size_t> written(const OpSpec& o, const Region& r, long long R, long long lo, long long hi) const {
    if (o.split.writes == "rows") {
      const size_t w = R > 0 ? r.length / size_t(R) : 0;
      return {size_t(lo) * w, size_t(hi) * w};
    }
    const std::vector<int32_t>& ptr = balance_ptr(o);
    return {size_t(ptr[size_t(lo)]), size_t(ptr[size_t(hi)])};
  }

  void launch(const OpSpec& o) override {
    const char* impls = DYPE_ABI(op_impls)(P.K.name.c_str(), o.op.c_str());
    if (!impls) throw std::runtime_error("op_impls: the library has no op " + o.op + " of kernel " + P.K.name);
    const int h = DYPE_ABI(op_lookup)(P.K.name.c_str(), o.op.c_str(), impls);
    if (h < 0) check(h, "op_lookup of " + o.op + " as " + impls);
    if (DYPE_ABI(op_buffer_count)(h) != int(o.buffers.size()) || DYPE_ABI(op_size_count)(h) != int(o.sizes.size()) + DYPE_PATTERN_FIGURES)
      throw std::runtime_error("op " + o.op + ": the library's buffer and size counts are not the program's");
    std::vector<long long> sizes;
    for (size_t i = 0; i < o.sizes.size(); i++) sizes.push_back(P.size(o, i));
    sizes.push_back(P.sp_rows(o));
    sizes.push_back(P.sp_cols(o));
    sizes.push_back(P.sp_nnz(o));
    sizes.push_back(P.sp_longest_row(o));
    sizes.push_back(P.sp_longest_col(o));

    const std::string out = P.physical(P.key(*std::find_if(o.buffers.begin(), o.buffers.end(), [&](const BufSpec& b) { return b.name == o.out; })));
    const bool split = devs.size() > 1 && o.split.splittable && !o.split.writes.empty() && !o.split.range.empty();
    const long long R = split ? P.dim(o.split.range) : 0;
    const std::vector<std::pair<long long, long long>> ranges = split ? cut(o, R) : std::vector<std::pair<long long, long long>>{{0, -1}};

    std::vector<std::vector<void*>> bufs(ranges.size());
    for (size_t s = 0; s < ranges.size(); s++)
      for (const BufSpec& b : o.buffers) bufs[s].push_back(mem.at(P.physical(P.key(b)))[s]);
    // error_text is kept per thread, so each slice reads its own.
    std::vector<int> rc(ranges.size(), 0);
    std::vector<std::string> why(ranges.size());
    auto run = [&](size_t s) {
      void* stream = nullptr;
      rc[s] = DYPE_ABI(stream_create)(devs[s], &stream);
      if (rc[s] == 0) rc[s] = DYPE_ABI(launch)(devs[s], h, bufs[s].data(), sizes.data(), ranges[s].first, ranges[s].second, stream);
      if (rc[s] == 0) rc[s] = DYPE_ABI(sync)(devs[s], stream);
      const int d = DYPE_ABI(stream_destroy)(devs[s], stream);
      if (rc[s] == 0) rc[s] = d;
      if (rc[s] != 0) why[s] = DYPE_ABI(error_text)(rc[s]);
    };
    if (ranges.size() == 1) {
      run(0);
    } else {
      std::vector<std::thread> threads;
      for (size_t s = 0; s < ranges.size(); s++) threads.emplace_back(run, s);
      for (std::thread& t : threads) t.join();
    }
    for (size_t s = 0; s < ranges.size(); s++)
      if (rc[s] != 0)
        throw std::runtime_error("launch of " + o.op + " rows [" + std::to_string(ranges[s].first) + ", " + std::to_string(ranges[s].second) + ") on device " + std::to_string(devs[s]) + ": " + why[s] + " (code " + std::to_string(rc[s]) + ")");
    launches += (long long)ranges.size();

    const Region& r = P.regions.at(out);
    if (split) {
      for (size_t s = 0; s < ranges.size(); s++) {
        const std::pair<size_t, size_t> w = written(o, r, R, ranges[s].first, ranges[s].second);
        spread(out, s, w.first, w.second);
      }
    } else {
      spread(out, 0, 0, r.length);
    }
    if (needs_host(o)) check(DYPE_ABI(download)(devs[0], P.regions.at(out).data(), mem[out][0], 0, bytes_of(r), nullptr), "download of " + out);
  }

  // The host permutes a sparse result into its other layout (Program::after_op) only where that region exists.
  bool needs_host(const OpSpec& o) const {
    for (const BufSpec& b : o.buffers)
      if (b.name == o.out && b.role == "values") return P.regions.count("V:" + o.result + ":" + (b.layout == "csc" ? "csr" : "csc")) > 0;
    return false;
  }

  void fetch(const std::string& region) override {
    const std::string k = P.physical(region);
    Region& r = P.regions.at(k);
    check(DYPE_ABI(download)(devs[0], r.data(), mem[k][0], 0, bytes_of(r), nullptr), "download of " + k);
  }

  void permuted(const OpSpec&, const std::string& region) override {
    Region& r = P.regions.at(region);
    for (size_t s = 0; s < devs.size(); s++) check(DYPE_ABI(upload)(devs[s], mem[region][s], 0, r.data(), bytes_of(r), nullptr), "upload of " + region);
  }
};

static inline std::vector<int> parse_devices(const std::string& list, size_t k) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string tok = list.substr(at, comma - at);
    int64_t d;
    if (!parse_index(tok, d) || d < 0) fail("--devices: '" + tok + "' is not a device number");
    out.push_back(int(d));
    at = comma + 1;
  }
  if (out.size() != k) fail("--devices names " + std::to_string(out.size()) + " devices for --split " + std::to_string(k));
  return out;
}

static inline int abi_check_main(const KernelSpec& K, const char* program, int argc, char** argv) {
  try {
    const Args A = parse_args(argc, argv, {"--split", "--devices"});
    int64_t k = 1;
    if (A.extra.count("--split") && (!parse_index(A.extra.at("--split"), k) || k < 1 || k > 64)) fail("--split expects a count in 1..64");
    std::vector<int> devs;
    if (A.extra.count("--devices")) devs = parse_devices(A.extra.at("--devices"), size_t(k));
    else
      for (int d = 0; d < k; d++) devs.push_back(d);
    if (DYPE_ABI(abi_version)() != DYPE_ABI_VERSION) throw std::runtime_error("the library speaks ABI version " + std::to_string(DYPE_ABI(abi_version)()));
    if (std::string(DYPE_ABI(program)()) != program) throw std::runtime_error(std::string("the library is of program ") + DYPE_ABI(program)() + ", not " + program);
    Program P(K);
    P.bind(A.in, A.par);
    AbiCheck C(P, devs);
    P.runner = &C;
    C.upload_all();
    const auto t0 = std::chrono::steady_clock::now();
    P.exec(K.program);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    C.download_all();
    C.free_all();
    P.write_outputs(A.out);
    std::string on;
    for (int d : devs) on += (on.empty() ? "" : ",") + std::to_string(d);
    std::fprintf(stderr, "%s: ran through the ABI of %s (%s) on device(s) %s in %.1f ms: %lld launches, %lld copies of %lld bytes\n", K.name.c_str(), DYPE_ABI(program)(), DYPE_ABI(backend)(), on.c_str(), ms, C.launches, C.copies, C.copied);
    return 0;
  } catch (const std::exception& e) {
    return report(e);
  }
}

}  // namespace dype

#endif
