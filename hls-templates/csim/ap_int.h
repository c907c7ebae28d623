// Minimal stand-in for the parts of Vitis HLS's ap_int.h that dype's kernels
// use, for C simulation with g++ only (written for dype; no vendor code).
// Covered: ap_uint<W> for W <= 64 stored in a uint64_t (same size and layout
// as the hardware word for W == 64), construction from and conversion to
// integers, bit-range reads range(hi, lo) / (hi, lo), and comparison.
#ifndef DYPE_CSIM_AP_INT_H
#define DYPE_CSIM_AP_INT_H
#include <cstdint>

template <int W>
struct ap_uint {
  static_assert(W >= 1 && W <= 64, "the C-simulation ap_uint covers widths 1..64 only");
  uint64_t v;
  static constexpr uint64_t mask() { return W == 64 ? ~uint64_t(0) : ((uint64_t(1) << W) - 1); }
  ap_uint() : v(0) {}
  ap_uint(uint64_t x) : v(x & mask()) {}
  operator uint64_t() const { return v; }
  uint64_t range(int hi, int lo) const {
    const int w = hi - lo + 1;
    const uint64_t m = w >= 64 ? ~uint64_t(0) : ((uint64_t(1) << w) - 1);
    return (v >> lo) & m;
  }
  uint64_t operator()(int hi, int lo) const { return range(hi, lo); }
};

#endif
