// Scalar helpers of dype's HLS kernels: the reference interpreter's rules
// for relu, min, max (NaN propagates; -0 < +0), abs and integer division (a
// zero divisor gives 0, MIN / -1 wraps to MIN), and reinterpreting 32-bit
// values as stream bits.
#ifndef DYPE_OPS_H
#define DYPE_OPS_H
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

template <class T>
static inline T dype_relu(T x) {
  if (x != x) return x;
  return x > T(0) ? x : T(0);
}
template <class T>
static inline T dype_min(T a, T b) {
  if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(double(a)) ? a : b;
  return a < b ? a : b;
}
template <class T>
static inline T dype_max(T a, T b) {
  if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(double(a)) ? b : a;
  return a > b ? a : b;
}
// Integers wrap in their width, as the other backends' do: -x of the most negative value is itself (a signed
// overflow would be undefined in C++, and MIN / -1 traps on x86).
template <class T>
static inline T dype_wrap_neg(T x) {
  typedef typename std::make_unsigned<T>::type U;
  return T(U(0) - U(x));
}
template <class T>
static inline T dype_abs(T x) {
  return x < T(0) ? dype_wrap_neg(x) : x;
}
template <>
inline float dype_abs<float>(float x) {
  return std::fabs(x);
}
template <>
inline double dype_abs<double>(double x) {
  return std::fabs(x);
}
// pow as the reference (JavaScript's Math.pow): NaN for a NaN exponent and for (+-1)^(+-inf), where C gives 1.
static inline double dype_pow(double x, double y) {
  return y != y || ((x == 1.0 || x == -1.0) && std::isinf(y)) ? std::numeric_limits<double>::quiet_NaN() : std::pow(x, y);
}
template <class T>
static inline T dype_idiv(T a, T b) {
  return b == T(0) ? T(0) : b == T(-1) ? dype_wrap_neg(a) : T(a / b);
}
template <class T>
static inline uint32_t dype_bits(T x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
template <class T>
static inline T dype_from_bits(uint32_t u) {
  T x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

#endif
