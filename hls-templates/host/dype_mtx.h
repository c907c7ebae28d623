// Matrix Market and edge-list reading and writing for dype's generated host
// programs, following the rules of dype's runtime (runtime/io): coordinate
// and array files; real, double, integer and pattern fields (pattern reads as
// ones); general, symmetric and skew-symmetric storage (expanded); explicit
// zeros stay stored entries; duplicate positions are an error. An edge list
// (.cites, .txt: two integers per line) is a pattern matrix whose ids are
// mapped to 0..n-1 in sorted numeric order, rows from the first column,
// repeated edges dropped. Every error names the file and line (a dype::Error).
#ifndef DYPE_MTX_H
#define DYPE_MTX_H
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dype_util.h"

namespace dype {

struct Matrix {
  int64_t rows = 0, cols = 0;
  bool dense = false;
  // dense: row-major values; coordinate: entries in file order (symmetric storage expanded)
  std::vector<double> data;
  std::vector<int32_t> ri, ci;
  std::vector<double> v;
};

static inline std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}

static inline bool parse_number(const std::string& tok, double& out) {
  const std::string t = lower(tok);
  const char* s = t.c_str();
  const char* body = (*s == '+' || *s == '-') ? s + 1 : s;
  if (std::strcmp(body, "inf") == 0 || std::strcmp(body, "infinity") == 0) {
    out = *s == '-' ? -INFINITY : INFINITY;
    return true;
  }
  if (std::strcmp(body, "nan") == 0) {
    out = NAN;
    return true;
  }
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s, &end);
  return end != s && *end == '\0';
}

static inline bool parse_index(const std::string& tok, int64_t& out) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(tok.c_str(), &end, 10);
  if (end == tok.c_str() || *end != '\0' || errno != 0) return false;
  out = x;
  return true;
}

static inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> w;
  std::istringstream is(line);
  std::string x;
  while (is >> x) w.push_back(x);
  return w;
}

static inline bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

static inline Matrix read_edge_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path + ": cannot open the file");
  std::vector<int64_t> a, b;
  std::string line;
  int64_t ln = 0;
  while (std::getline(in, line)) {
    ln++;
    const std::vector<std::string> w = words(line);
    if (w.empty() || w[0][0] == '#' || w[0][0] == '%') continue;
    int64_t x, y;
    if (w.size() != 2 || !parse_index(w[0], x) || !parse_index(w[1], y))
      fail(path + ":" + std::to_string(ln) + ": expected two integer vertex ids");
    a.push_back(x);
    b.push_back(y);
  }
  std::vector<int64_t> ids(a);
  ids.insert(ids.end(), b.begin(), b.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  Matrix m;
  m.rows = m.cols = int64_t(ids.size());
  std::vector<std::pair<int32_t, int32_t>> e;
  for (size_t k = 0; k < a.size(); k++) {
    const int32_t r = int32_t(std::lower_bound(ids.begin(), ids.end(), a[k]) - ids.begin());
    const int32_t c = int32_t(std::lower_bound(ids.begin(), ids.end(), b[k]) - ids.begin());
    e.push_back({r, c});
  }
  std::vector<std::pair<int32_t, int32_t>> seen(e);
  std::sort(seen.begin(), seen.end());
  std::map<std::pair<int32_t, int32_t>, bool> used;
  for (const auto& x : e) {
    if (used[x]) continue;
    used[x] = true;
    m.ri.push_back(x.first);
    m.ci.push_back(x.second);
    m.v.push_back(1.0);
  }
  return m;
}

// What follows the values a file's size line announces may only be blank lines and comments, as dype's runtime
// reads it (a value more is the size line's mistake, not data to drop).
static inline void no_more_lines(std::ifstream& in, const std::string& path, int64_t ln, const std::string& expected) {
  std::string line;
  while (std::getline(in, line)) {
    ln++;
    const std::vector<std::string> w = words(line);
    if (!w.empty() && w[0][0] != '%') fail(path + ":" + std::to_string(ln) + ": expected " + expected + ", found more");
  }
}

// Why value v is not one of dtype d, or nullptr: the rule of dype's runtime (runtime/dtype.ts dtypeMisfit), since
// the kernels store each value in its dtype and one out of range would wrap there.
static inline const char* dtype_misfit(const std::string& d, double v) {
  if (d == "f32")
    return std::isfinite(v) && std::fabs(v) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103) ? "beyond f32's range" : nullptr;
  if (d == "i32" || d == "i64") {
    if (!(v == std::floor(v)) || !std::isfinite(v)) return "not a whole number";
    if (d == "i32") return v < -2147483648.0 || v > 2147483647.0 ? "outside i32's range -2147483648..2147483647" : nullptr;
    return std::fabs(v) > 9007199254740991.0 ? "outside the i64 values a float64 holds exactly, +-(2^53 - 1)" : nullptr;
  }
  if (d == "bool") return v == 0.0 || v == 1.0 ? nullptr : "not 0 or 1";
  return nullptr;
}

// The fewest significant digits that read back as v (as a message shows a value the user wrote).
static inline std::string shortest(double v) {
  char buf[40];
  // A whole number as its digits (3000000000, not 3e+09), as the file most likely wrote it.
  if (v == std::floor(v) && std::fabs(v) < 1e21) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int p = 1; p <= 17; p++) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

static inline Matrix read_matrix(const std::string& path) {
  if (ends_with(path, ".cites") || ends_with(path, ".txt")) return read_edge_list(path);
  std::ifstream in(path);
  if (!in) fail(path + ": cannot open the file");
  std::string line;
  int64_t ln = 0;
  auto where = [&]() { return path + ":" + std::to_string(ln) + ": "; };
  if (!std::getline(in, line)) fail(path + ":1: empty file; expected a Matrix Market header");
  ln = 1;
  const std::vector<std::string> h = words(lower(line));
  if (h.size() != 5 || h[0] != "%%matrixmarket" || h[1] != "matrix")
    fail(where() + "expected \"%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric|skew-symmetric>\"");
  const bool coord = h[2] == "coordinate";
  if (!coord && h[2] != "array") fail(where() + "unknown format '" + h[2] + "'; expected coordinate or array");
  const std::string field = h[3];
  if (field != "real" && field != "double" && field != "integer" && field != "pattern") fail(where() + "unknown field '" + field + "'; expected real, integer or pattern");
  if (field == "pattern" && !coord) fail(where() + "an array file cannot have the pattern field");
  const std::string sym = h[4];
  if (sym != "general" && sym != "symmetric" && sym != "skew-symmetric") fail(where() + "unsupported symmetry '" + sym + "'; expected general, symmetric or skew-symmetric");
  std::vector<std::string> size;
  while (std::getline(in, line)) {
    ln++;
    size = words(line);
    if (!size.empty() && size[0][0] != '%') break;
    size.clear();
  }
  Matrix m;
  int64_t nnz = 0;
  if (size.size() != (coord ? 3u : 2u) || !parse_index(size[0], m.rows) || !parse_index(size[1], m.cols) || (coord && !parse_index(size[2], nnz)) || m.rows < 0 || m.cols < 0 || nnz < 0)
    fail(where() + (coord ? "expected the size line 'rows cols entries'" : "expected the size line 'rows cols'"));
  if (sym != "general" && m.rows != m.cols) fail(where() + "a " + sym + " matrix must be square");
  const bool skew = sym == "skew-symmetric";
  if (!coord) {
    m.dense = true;
    m.data.assign(size_t(m.rows * m.cols), 0.0);
    int64_t stored = 0;  // the values the file holds: a symmetric one only its lower triangle
    for (int64_t j = 0; j < m.cols; j++) {
      for (int64_t i = (sym == "general" ? 0 : (skew ? j + 1 : j)); i < m.rows; i++) {
        std::string tok;
        do {
          if (!std::getline(in, line)) fail(path + ":" + std::to_string(ln + 1) + ": missing array values");
          ln++;
          const std::vector<std::string> w = words(line);
          tok = w.empty() ? "" : w[0];
        } while (tok.empty() || tok[0] == '%');
        double x;
        if (!parse_number(tok, x)) fail(where() + "expected a number, found '" + tok + "'");
        if (x != x) fail(where() + "NaN is not allowed as a matrix value");
        stored++;
        m.data[size_t(i * m.cols + j)] = x;
        if (sym != "general" && i != j) m.data[size_t(j * m.cols + i)] = skew ? -x : x;
      }
    }
    no_more_lines(in, path, ln, std::to_string(stored) + " array values");
    return m;
  }
  for (int64_t k = 0; k < nnz; k++) {
    std::vector<std::string> w;
    do {
      if (!std::getline(in, line)) fail(path + ":" + std::to_string(ln + 1) + ": expected " + std::to_string(nnz) + " entries, found " + std::to_string(k));
      ln++;
      w = words(line);
    } while (w.empty() || w[0][0] == '%');
    int64_t r, c;
    double x = 1.0;
    if (w.size() != (field == "pattern" ? 2u : 3u) || !parse_index(w[0], r) || !parse_index(w[1], c) || (field != "pattern" && !parse_number(w[2], x)))
      fail(where() + (field == "pattern" ? "expected 'row col'" : "expected 'row col value'"));
    if (r < 1 || r > m.rows || c < 1 || c > m.cols) fail(where() + "index (" + std::to_string(r) + "," + std::to_string(c) + ") out of range 1.." + std::to_string(m.rows) + " x 1.." + std::to_string(m.cols));
    if (x != x) fail(where() + "NaN is not allowed as a matrix value");
    m.ri.push_back(int32_t(r - 1));
    m.ci.push_back(int32_t(c - 1));
    m.v.push_back(x);
    if (sym != "general" && r != c) {
      m.ri.push_back(int32_t(c - 1));
      m.ci.push_back(int32_t(r - 1));
      m.v.push_back(skew ? -x : x);
    } else if (skew && r == c) {
      fail(where() + "skew-symmetric matrices have a zero diagonal, so the entry may not be stored");
    }
  }
  no_more_lines(in, path, ln, std::to_string(nnz) + " entries, as the size line says");
  return m;
}

// Significant digits that write a value of each dtype so that reading the
// text back gives the same value: 17 for f64, 9 for f32 (the value is held
// as a double here, but only a float's worth of it is the kernel's), 0 for
// the integer dtypes, written without a fraction.
static inline int digits_of(const std::string& dtype) {
  if (dtype == "f64") return 17;
  if (dtype == "f32") return 9;
  return 0;
}

static inline std::string fmt(double x, int digits) {
  if (x == INFINITY) return "inf";
  if (x == -INFINITY) return "-inf";
  if (x != x) return "nan";
  char buf[64];
  // No i64 holds 2^63: a double of 2^63 is INT64_MAX rounded up (as dype run writes it).
  if (digits == 0 && x == 9223372036854775808.0) return "9223372036854775807";
  if (digits == 0) std::snprintf(buf, sizeof buf, "%.0f", x);
  else std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// Writes to a temporary name, then renames: never a partial output file.
static inline void write_text_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-dype";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path + ": cannot write the file");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    fail(path + ": cannot write the file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail(path + ": cannot write the file");
  }
}

// Dense rank 0..2 (a vector is n x 1), column-major as Matrix Market arrays are.
// `digits`: digits_of(dtype) (0: an integer field).
static inline std::string format_array(const std::vector<double>& data, int64_t rows, int64_t cols, int digits) {
  std::string s = std::string("%%MatrixMarket matrix array ") + (digits == 0 ? "integer" : "real") + " general\n";
  s += std::to_string(rows) + " " + std::to_string(cols) + "\n";
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) s += fmt(data[size_t(i * cols + j)], digits) + "\n";
  return s;
}

static inline std::string format_coordinate(int64_t rows, int64_t cols, const std::vector<int32_t>& ri, const std::vector<int32_t>& ci, const std::vector<double>& v, int digits) {
  std::string s = std::string("%%MatrixMarket matrix coordinate ") + (digits == 0 ? "integer" : "real") + " general\n";
  s += std::to_string(rows) + " " + std::to_string(cols) + " " + std::to_string(v.size()) + "\n";
  for (size_t k = 0; k < v.size(); k++) s += std::to_string(ri[k] + 1) + " " + std::to_string(ci[k] + 1) + " " + fmt(v[k], digits) + "\n";
  return s;
}

}  // namespace dype

#endif
