// Prints the packed stream length (dype::RowPack::cycles) of the host packer
// for CSR patterns given as binary files (int32 rows, cols, row pointers,
// column indices): test/hls/cycle-model.test.ts holds the planner's cycle
// model against it. Usage: pack-cycles CH PE ROW_SLOTS COL_WIN LAT SHARE FILE...
// (SHARE: rows a tile may share over the lanes); prints per file the stream's cycles,
// nnz, rows shared and the cycles folding them.
// With --cache first, checks the launch functions' pattern cache on each
// file instead: a repeat call is a hit equal to a fresh pack, a pattern
// changed in place (same buffers) a miss equal to a fresh pack of it.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "dype_pack.h"

static bool same(const dype::RowPack& a, const dype::RowPack& b) {
  return a.meta == b.meta && a.words == b.words && a.pos == b.pos && a.cycles == b.cycles;
}

int main(int argc, char** argv) {
  const bool cache = argc > 1 && std::string(argv[1]) == "--cache";
  if (cache) {
    argv++;
    argc--;
  }
  if (argc < 8) {
    std::fprintf(stderr, "usage: pack-cycles CH PE ROW_SLOTS COL_WIN LAT SHARE FILE...\n");
    return 2;
  }
  const int ch = std::atoi(argv[1]), pe = std::atoi(argv[2]), slots = std::atoi(argv[3]);
  const int win = std::atoi(argv[4]), lat = std::atoi(argv[5]), share = std::atoi(argv[6]);
  for (int a = 7; a < argc; a++) {
    FILE* f = std::fopen(argv[a], "rb");
    if (!f) {
      std::fprintf(stderr, "%s: cannot open\n", argv[a]);
      return 1;
    }
    int32_t dims[2];
    if (std::fread(dims, 4, 2, f) != 2) return 1;
    std::vector<int32_t> ptr(size_t(dims[0]) + 1);
    if (std::fread(ptr.data(), 4, ptr.size(), f) != ptr.size()) return 1;
    std::vector<int32_t> idx(size_t(ptr.back()));
    if (!idx.empty() && std::fread(idx.data(), 4, idx.size(), f) != idx.size()) return 1;
    std::fclose(f);
    const dype::RowPack P = dype::pack_rows(ptr.data(), idx.data(), dims[0], dims[1], ch, pe, slots, win, lat, share);
    if (!cache) {
      std::printf("%lld %lld %lld %lld\n", P.cycles, P.nnz, P.shared, P.fold_cycles);
      continue;
    }
    dype::PackCache C;
    const auto get = [&]() { return dype::cached_pack(C, ptr.data(), idx.data(), dims[0], dims[1], ch, pe, slots, win, lat, share); };
    const bool first = same(get(), P), again = same(get(), P);
    // Move the first entry of the longest row to another column: same sizes, another pattern.
    int r = 0;
    for (int i = 0; i < dims[0]; i++)
      if (ptr[i + 1] - ptr[i] > ptr[r + 1] - ptr[r]) r = i;
    if (ptr[r + 1] == ptr[r]) return 1;
    idx[ptr[r]] = (idx[ptr[r]] + 1) % dims[1];
    const dype::RowPack Q = dype::pack_rows(ptr.data(), idx.data(), dims[0], dims[1], ch, pe, slots, win, lat, share);
    const bool changed = same(get(), Q);
    std::printf("%d %d %d %lld %lld\n", int(first), int(again), int(changed), C.hits, C.misses);
  }
  return 0;
}
