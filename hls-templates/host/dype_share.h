// Which long rows of a row tile the packer (dype_pack.h) shares over all
// lanes, and where their entries go.
//
// A row dealt to one lane costs that lane its entries and, since one
// accumulator slot takes an update only every `lat` cycles, a chain of
// (len - 1) * lat + 1 cycles: a 1,000-entry hub on a 128-lane design makes
// the whole tile's stream 8,000 cycles long where its entries alone would
// take 8. A shared row instead has a partial slot in every lane (slot
// row_slots + j for the tile's j-th shared row); its entries go to the
// lanes whose stream they lengthen least, and after the tile's stream every
// channel folds its PEs' partials and the write-back merges the channels'
// sums into the row (an adder tree) (fold_cycles, per dense tile).
//
// Per tile the k longest rows (k up to the design's capacity) are shared for
// the k whose estimated stream plus fold (fold_cycles) is shortest. The estimate per
// column window: the busiest lane's entries, the longest chain a lane keeps,
// the level the shared entries fill the lanes to, and a shared row's own
// chain in a lane; summed over the windows.
#ifndef DYPE_SHARE_H
#define DYPE_SHARE_H
#include <algorithm>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace dype {

// Per window, an entry count of one row's entries: (window, count), ascending windows.
static inline std::vector<std::pair<int32_t, int32_t>> window_counts(const int32_t* idx, int32_t lo, int32_t hi, int col_win) {
  std::vector<int32_t> w;
  w.reserve(size_t(hi - lo));
  for (int32_t p = lo; p < hi; p++) w.push_back(idx[p] / col_win);
  std::sort(w.begin(), w.end());
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const int32_t x : w) {
    if (out.empty() || out.back().first != x) out.push_back({x, 0});
    out.back().second++;
  }
  return out;
}

// The level `extra` entries fill lanes with loads `loads` to, one entry at a time on the least loaded.
static inline long long water_level(std::vector<long long> loads, long long extra) {
  if (extra <= 0 || loads.empty()) return 0;
  std::sort(loads.begin(), loads.end());
  long long level = loads[0], used = 0;
  for (size_t i = 1; i <= loads.size(); i++) {
    // Lanes [0, i) sit at `level`; raising them to the next lane's load costs i entries a step.
    const long long next = i < loads.size() ? loads[i] : level + (extra - used + (long long)i - 1) / (long long)i;
    const long long room = (next - level) * (long long)i;
    if (used + room >= extra) return level + (extra - used + (long long)i - 1) / (long long)i;
    used += room;
    level = next;
  }
  return level;
}

static inline long long chain_cycles(long long entries, int lat) { return entries > 0 ? (entries - 1) * lat + 1 : 0; }

// Cycles the kernel spends folding n shared rows of a tile, per dense tile
// (sparse_rows.cpp.hbs, L_share_init, L_fold, L_merge): clearing the partial
// slots (n); every channel at once folding its `pe` PEs' partials, FOLD_W of
// one row a cycle into the row's running sum, taken up again at least `lat`
// cycles later (pe / FOLD_W x max(n, lat)); the write-back merging the
// channels' sums of one row a cycle (n); and the pipelines' fill. The
// planner's copy of this formula is runtime/plan/fpga-designs.ts foldCycles.
static const long long FOLD_FILL_CYCLES = 48;
static const int FOLD_W = 2;
static inline long long fold_cycles(int pe, long long n, int lat) {
  return n > 0 ? 2 * n + (long long)(pe / FOLD_W) * std::max<long long>(n, lat) + FOLD_FILL_CYCLES : 0;
}

// Rows of the tile [r0, r1) to share (absolute row numbers, longest first), at most `capacity`.
static inline std::vector<int32_t> choose_shared(const int32_t* ptr, const int32_t* idx, long long r0, long long r1, int ch, int lanes, int col_win, int n_wins, int lat, int capacity) {
  std::vector<int32_t> cand;
  if (capacity <= 0 || r1 <= r0) return cand;
  for (long long r = r0; r < r1; r++)
    if (ptr[r + 1] - ptr[r] >= 2) cand.push_back(int32_t(r));
  const auto longer = [ptr](int32_t a, int32_t b) {
    const int32_t la = ptr[a + 1] - ptr[a], lb = ptr[b + 1] - ptr[b];
    return la != lb ? la > lb : a < b;
  };
  if (cand.size() > size_t(capacity)) {
    std::nth_element(cand.begin(), cand.begin() + capacity, cand.end(), longer);
    cand.resize(size_t(capacity));
  }
  std::sort(cand.begin(), cand.end(), longer);
  if (cand.empty()) return cand;
  const int K = int(cand.size());
  // Per (window, lane): entries, and the K + 1 longest rows (entries, row) so that the longest
  // left after removing any K of them is known.
  const size_t cells = size_t(n_wins) * size_t(lanes);
  std::vector<long long> load(cells, 0);
  std::vector<std::pair<int32_t, int32_t>> top(cells * size_t(K + 1), {0, -1});
  for (long long r = r0; r < r1; r++) {
    if (ptr[r + 1] == ptr[r]) continue;
    const int lane = int((r - r0) % lanes);
    for (const auto& wc : window_counts(idx, ptr[r], ptr[r + 1], col_win)) {
      const size_t cell = size_t(wc.first) * size_t(lanes) + size_t(lane);
      load[cell] += wc.second;
      std::pair<int32_t, int32_t>* t = &top[cell * size_t(K + 1)];
      if (wc.second <= t[K].first) continue;
      int i = K;
      while (i > 0 && t[i - 1].first < wc.second) {
        t[i] = t[i - 1];
        i--;
      }
      t[i] = {wc.second, int32_t(r)};
    }
  }
  // The candidates' entries per window, dense: inner loops look them up by window.
  std::vector<int32_t> cw(size_t(K) * size_t(n_wins), 0);
  for (int j = 0; j < K; j++)
    for (const auto& wc : window_counts(idx, ptr[cand[size_t(j)]], ptr[cand[size_t(j)] + 1], col_win)) cw[size_t(j) * size_t(n_wins) + size_t(wc.first)] = wc.second;
  int best_k = 0;
  long long best = -1;
  std::vector<long long> a(static_cast<size_t>(lanes));
  // Rank of a row among the candidates (K: not one): removing the first k is rank < k.
  const auto rank = [&cand](int32_t r) { return int(std::find(cand.begin(), cand.end(), r) - cand.begin()); };
  std::vector<int32_t> topRank(top.size());
  for (size_t i = 0; i < top.size(); i++) topRank[i] = top[i].second < 0 ? K : rank(top[i].second);
  for (int k = 0; k <= K; k++) {
    long long total = fold_cycles(lanes / ch, k, lat);
    for (int w = 0; w < n_wins; w++) {
      long long shared = 0, own_chain = 0;
      for (int l = 0; l < lanes; l++) a[size_t(l)] = load[size_t(w) * size_t(lanes) + size_t(l)];
      for (int j = 0; j < k; j++) {
        const int32_t n = cw[size_t(j) * size_t(n_wins) + size_t(w)];
        if (n == 0) continue;
        a[size_t((cand[size_t(j)] - r0) % lanes)] -= n;
        shared += n;
        own_chain = std::max(own_chain, chain_cycles((n + lanes - 1) / lanes, lat));
      }
      long long busiest = 0, chain = 0;
      for (int l = 0; l < lanes; l++) {
        busiest = std::max(busiest, a[size_t(l)]);
        const size_t at = (size_t(w) * size_t(lanes) + size_t(l)) * size_t(K + 1);
        const std::pair<int32_t, int32_t>* t = &top[at];
        for (int i = 0; i <= K; i++) {
          if (topRank[at + size_t(i)] < k) continue;
          chain = std::max(chain, chain_cycles(t[i].first, lat));
          break;
        }
      }
      total += std::max(std::max(busiest, chain), std::max(water_level(a, shared), own_chain));
    }
    if (best < 0 || total < best) {
      best = total;
      best_k = k;
    }
  }
  cand.resize(size_t(best_k));
  return cand;
}

// Deals one window's entries of a shared row over the lanes: each entry to the lane whose
// stream bound max(entries, chain of this row's partial slot) it raises least.
// `lane_load` (entries per lane) is updated; returns the lane of each entry in order.
static inline std::vector<int32_t> deal_shared(int32_t entries, std::vector<long long>& lane_load, int lat) {
  const int lanes = int(lane_load.size());
  std::vector<int32_t> mine(size_t(lanes), 0), out;
  out.reserve(size_t(entries));
  using Key = std::pair<long long, int32_t>;
  const auto bound = [&](int l) { return std::max(lane_load[size_t(l)] + 1, chain_cycles(mine[size_t(l)] + 1, lat)); };
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> heap;
  for (int l = 0; l < lanes; l++) heap.push({bound(l), l});
  while (int32_t(out.size()) < entries) {
    const int l = heap.top().second;
    heap.pop();
    out.push_back(l);
    lane_load[size_t(l)]++;
    mine[size_t(l)]++;
    heap.push({bound(l), l});
  }
  return out;
}

}  // namespace dype

#endif
