// The host side of a generated dype FPGA project: binds the inputs given on
// the command line to the kernel's parameters, lays out every buffer the
// kernels read and write, runs the ops in program order (repeat regions
// included) through their launch functions, and writes the results as Matrix
// Market files. The same rules as dype's wasm executor (runtime/wasm):
//   - dense values row-major in their storage type (bool as int32 0/1);
//     `X.next` beside X for ops that read their own result, swapped after;
//   - per sparse input (pattern root) its CSR and, where an op asks, CSC
//     pointers and indices; sparse values per layout, aligned with it;
//   - a sparse result written in one layout is permuted into the others.
// The generated <kernel>_host.cpp supplies the tables (KernelSpec) and one
// launch wrapper per op.
#ifndef DYPE_HOST_H
#define DYPE_HOST_H
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>
#include "dype_mtx.h"
#include "dype_util.h"

namespace dype {

enum Elem { F32, F64, I32, I64, BOOL, INDEX };

static inline size_t elem_bytes(Elem e) { return e == F64 || e == I64 ? 8 : 4; }

struct ValueType {
  std::string format;  // dense | csr | csc | coo
  std::string dtype;   // f32 | f64 | i32 | i64 | bool
  std::vector<std::string> shape;  // dim names or decimal literals
};

struct BufSpec {
  std::string name;
  Elem elem;
  std::string role;  // dense values rowPtr colIdx colPtr rowIdx scalar
  std::string of;
  std::string layout;  // csr | csc | ""
};

// How the op may be cut by rows (the wasm manifest's splittable, splitRange,
// balanceBy and splitWrites): the ABI check runs slices of it on different
// devices and all-gathers what each slice writes.
struct SplitSpec {
  bool splittable;
  std::string range;           // trip count of the top loop: a dim name or a literal ("" unknown)
  std::string balance_root;    // pattern whose pointers balance the slices by nonzeros ("" none)
  std::string balance_layout;  // csr | csc
  std::string writes;          // rows | entries | "" (unknown: never split across devices)
};

struct Program;
struct OpSpec {
  std::string op, result, out;
  std::vector<BufSpec> buffers;
  std::vector<std::string> sizes;
  SplitSpec split;
  void (*launch)(Program&, const OpSpec&);  // the direct call of the C-simulation or XRT host; null in the ABI check
};

// Runs ops somewhere else than through OpSpec::launch (the ABI check): the
// launch, and after the host has permuted a sparse result into its other
// layout, the region it wrote.
struct OpRunner {
  virtual ~OpRunner() {}
  virtual void launch(const OpSpec& o) = 0;
  virtual void permuted(const OpSpec& o, const std::string& region) = 0;
  // Brings a region's current value into the host's copy (a convergence loop's stop test reads it).
  virtual void fetch(const std::string& region) = 0;
};

struct Step {
  bool repeat;
  std::string op;
  int64_t count;  // literal count, or -1 when count_param names a scalar
  std::string count_param;
  std::vector<Step> body;
  std::string until;    // the value a convergence loop watches; "" for a plain repeat
  double within = -1;   // `until v within T`: stop when sum |new - old| <= T; below 0: `until v stable`
};

struct KernelSpec {
  std::string name;
  std::vector<std::pair<std::string, ValueType>> params, results;
  std::map<std::string, ValueType> values;
  std::map<std::string, std::string> roots;
  std::vector<OpSpec> ops;
  std::vector<Step> program;
};

struct Pattern {
  int64_t rows = 0, cols = 0;
  // Entries in row-major order: CSR is the identity grouping.
  std::vector<int32_t> rowPtr, colIdx, ri;
  // CSC grouping: pointers, row indices, and the entry id at each CSC position.
  std::vector<int32_t> colPtr, rowIdx, cscIds;
};

struct Region {
  Elem elem;
  size_t length;
  std::vector<uint64_t> bytes;  // 8-byte aligned storage
  void* data() { return bytes.data(); }
};

// The most entries between consecutive pointers: a CSR's longest row, a CSC's longest column.
static inline int32_t longest_run(const std::vector<int32_t>& ptr) {
  int32_t most = 0;
  for (size_t i = 1; i < ptr.size(); i++) most = std::max(most, ptr[i] - ptr[i - 1]);
  return most;
}

static inline double get_as_double(const Region& r, size_t k) {
  const void* p = r.bytes.data();
  switch (r.elem) {
    case F32: return double(static_cast<const float*>(p)[k]);
    case F64: return static_cast<const double*>(p)[k];
    case I64: return double(static_cast<const int64_t*>(p)[k]);
    default: return double(static_cast<const int32_t*>(p)[k]);
  }
}
static inline void set_from_double(Region& r, size_t k, double x) {
  void* p = r.bytes.data();
  switch (r.elem) {
    case F32: static_cast<float*>(p)[k] = float(x); break;
    case F64: static_cast<double*>(p)[k] = x; break;
    case I64: static_cast<int64_t*>(p)[k] = int64_t(x); break;
    case BOOL: static_cast<int32_t*>(p)[k] = x != 0 ? 1 : 0; break;
    default: static_cast<int32_t*>(p)[k] = int32_t(x); break;
  }
}

struct Program {
  const KernelSpec& K;
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  std::map<std::string, Pattern> patterns;
  std::map<std::string, Region> regions;
  std::map<std::string, std::string> cur;
  std::set<std::string> defined;
  OpRunner* runner = nullptr;

  explicit Program(const KernelSpec& k) : K(k) {}

  std::string root_of(const std::string& v) const {
    auto it = K.roots.find(v);
    return it == K.roots.end() ? v : it->second;
  }

  std::string key(const BufSpec& b) const {
    const std::string next = b.name.size() > 5 && b.name.compare(b.name.size() - 5, 5, ".next") == 0 ? ".next" : "";
    if (b.role == "dense" || b.role == "scalar") return "D:" + b.of + next;
    if (b.role == "values") return "V:" + b.of + ":" + (b.layout.empty() ? "csr" : b.layout) + next;
    const bool ptr = b.role == "rowPtr" || b.role == "colPtr";
    const std::string layout = !b.layout.empty() ? b.layout : (b.role == "rowPtr" || b.role == "colIdx" ? "csr" : "csc");
    return "S:" + root_of(b.of) + ":" + layout + ":" + (ptr ? "ptr" : "idx");
  }

  int64_t dim(const std::string& d) const {
    if (!d.empty() && (std::isdigit((unsigned char)d[0]))) return std::stoll(d);
    auto it = dims.find(d);
    if (it == dims.end()) fail("kernel " + K.name + ": dimension '" + d + "' is not bound by any input; give it with PARAMS=\"" + d + "=N\"");
    return it->second;
  }

  size_t count(const std::string& v) const {
    auto it = K.values.find(v);
    if (it == K.values.end()) fail("internal: unknown value '" + v + "'");
    size_t n = 1;
    for (const std::string& d : it->second.shape) n *= size_t(dim(d));
    return n;
  }

  const Pattern& pattern(const std::string& v) const {
    auto it = patterns.find(root_of(v));
    if (it == patterns.end()) fail("internal: no pattern for '" + v + "'");
    return it->second;
  }

  size_t length(const BufSpec& b) const {
    if (b.role == "dense" || b.role == "scalar") return count(b.of);
    const Pattern& p = pattern(b.of);
    if (b.role == "rowPtr") return size_t(p.rows + 1);
    if (b.role == "colPtr") return size_t(p.cols + 1);
    return p.colIdx.size();
  }

  // The region a key stands for now (`X` and `X.next` swap after each trip).
  std::string physical(const std::string& k) const {
    auto c = cur.find(k);
    return c == cur.end() ? k : c->second;
  }

  Region& region(const std::string& k) {
    auto it = regions.find(physical(k));
    if (it == regions.end()) fail("internal: no region '" + k + "'");
    return it->second;
  }

  void make(const std::string& k, Elem e, size_t n) {
    if (regions.count(k)) return;
    Region r;
    r.elem = e;
    r.length = n;
    r.bytes.assign((n * elem_bytes(e) + 7) / 8 + 1, 0);
    regions[k] = r;
    cur[k] = k;
  }

  void bind(const std::map<std::string, std::string>& inputs, const std::map<std::string, std::string>& params) {
    // A parameter names a scalar of the kernel or a dim of its shapes, as dype run's --param does.
    std::map<std::string, std::string> scalar_dtype;
    std::set<std::string> dim_names;
    for (const auto& pr : K.params) {
      if (pr.second.shape.empty()) scalar_dtype[pr.first] = pr.second.dtype;
      for (const std::string& d : pr.second.shape)
        if (!d.empty() && !std::isdigit((unsigned char)d[0])) dim_names.insert(d);
    }
    for (const auto& kv : params) {
      double x;
      if (!parse_number(kv.second, x)) fail("PARAMS: " + kv.first + "=" + kv.second + " is not a number");
      auto sd = scalar_dtype.find(kv.first);
      if (sd == scalar_dtype.end() && !dim_names.count(kv.first)) {
        std::string known;
        for (const auto& q : scalar_dtype) known += (known.empty() ? "" : ", ") + q.first;
        for (const auto& q : dim_names) known += (known.empty() ? "" : ", ") + q;
        fail("PARAMS: kernel " + K.name + " has no scalar parameter or dim '" + kv.first + "'" + (known.empty() ? "" : "; its scalars and dims are " + known));
      }
      const char* why = dtype_misfit(sd != scalar_dtype.end() ? sd->second : "i32", x);
      if (why) fail("PARAMS: " + kv.first + "=" + kv.second + ": '" + kv.first + "' is " + (sd != scalar_dtype.end() ? sd->second : std::string("a dim (i32)")) + ": " + why);
      if (sd == scalar_dtype.end() && x < 0) fail("PARAMS: " + kv.first + "=" + kv.second + ": a dim is a count, not negative");
      scalars[kv.first] = x;
    }
    std::map<std::string, Matrix> mats;
    for (const auto& pr : K.params) {
      const std::string& name = pr.first;
      const ValueType& t = pr.second;
      if (t.shape.empty()) {
        if (!scalars.count(name)) fail("kernel " + K.name + ": missing scalar '" + name + "'; give it with PARAMS=\"" + name + "=VALUE\"");
        continue;
      }
      auto in = inputs.find(name);
      if (in == inputs.end()) fail("kernel " + K.name + ": missing input '" + name + "'; give it with INPUTS=\"" + name + "=PATH\"");
      Matrix m = read_matrix(in->second);
      // Every value in the parameter's dtype, as dype run checks a file (the kernels store them in it).
      const std::vector<double>& vals = m.dense ? m.data : m.v;
      for (size_t k = 0; k < vals.size(); k++) {
        const char* why = dtype_misfit(t.dtype, vals[k]);
        if (why) {
          // Where it is as (row, column), 1-based as the file writes positions (a symmetric file's mirror included).
          const int64_t r = m.dense ? int64_t(k) / std::max<int64_t>(1, m.cols) : m.ri[k];
          const int64_t c = m.dense ? int64_t(k) % std::max<int64_t>(1, m.cols) : m.ci[k];
          fail(in->second + ": '" + name + "' is " + t.dtype + ": the value " + shortest(vals[k]) + " at (" + std::to_string(r + 1) + ", " + std::to_string(c + 1) + ") is " + why);
        }
      }
      std::vector<int64_t> got = {m.rows, m.cols};
      if (t.shape.size() == 1) got = {m.rows * m.cols};
      if (t.shape.size() == 1 && m.rows != 1 && m.cols != 1) fail(in->second + ": '" + name + "' is a vector but the file holds " + std::to_string(m.rows) + " x " + std::to_string(m.cols));
      for (size_t i = 0; i < t.shape.size(); i++) {
        const std::string& d = t.shape[i];
        if (!d.empty() && std::isdigit((unsigned char)d[0])) {
          if (std::stoll(d) != got[i]) fail(in->second + ": dimension " + std::to_string(i + 1) + " of '" + name + "' must be " + d + ", found " + std::to_string(got[i]));
        } else if (dims.count(d)) {
          if (dims[d] != got[i]) fail(in->second + ": dim '" + d + "' is " + std::to_string(dims[d]) + " but " + std::to_string(got[i]) + " from dimension " + std::to_string(i + 1) + " of '" + name + "'");
        } else {
          dims[d] = got[i];
        }
      }
      mats[name] = std::move(m);
    }
    for (const auto& kv : scalars) {
      if (!dim_names.count(kv.first)) continue;
      if (!dims.count(kv.first)) dims[kv.first] = int64_t(kv.second);
      else if (double(dims[kv.first]) != kv.second)
        fail("PARAMS: " + kv.first + "=" + fmt(kv.second, 17) + ", but the inputs make dim '" + kv.first + "' " + std::to_string(dims[kv.first]));
    }
    for (const auto& pr : K.params) {
      const ValueType& t = pr.second;
      if (t.format == "dense" || t.shape.size() != 2) continue;
      const Matrix& m = mats[pr.first];
      if (m.dense) fail(inputs.at(pr.first) + ": '" + pr.first + "' is " + t.format + ": expected a sparse matrix, found a dense array");
      patterns[pr.first] = build_pattern(m, inputs.at(pr.first));
    }
    layout();
    for (const auto& pr : K.params) copy_input(pr.first, pr.second, mats);
    for (const auto& pr : K.params) defined.insert(pr.first);
  }

  static Pattern build_pattern(const Matrix& m, const std::string& file) {
    Pattern p;
    p.rows = m.rows;
    p.cols = m.cols;
    const size_t n = m.v.size();
    std::vector<int32_t> order(n);
    for (size_t k = 0; k < n; k++) order[k] = int32_t(k);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return m.ri[a] != m.ri[b] ? m.ri[a] < m.ri[b] : m.ci[a] < m.ci[b]; });
    p.rowPtr.assign(size_t(m.rows + 1), 0);
    for (size_t q = 0; q < n; q++) {
      const int32_t e = order[q];
      if (q > 0 && m.ri[e] == m.ri[order[q - 1]] && m.ci[e] == m.ci[order[q - 1]]) fail(file + ": the entry (" + std::to_string(m.ri[e] + 1) + "," + std::to_string(m.ci[e] + 1) + ") is stored twice");
      p.rowPtr[size_t(m.ri[e]) + 1]++;
      p.colIdx.push_back(m.ci[e]);
      p.ri.push_back(m.ri[e]);
    }
    for (int64_t r = 0; r < m.rows; r++) p.rowPtr[size_t(r + 1)] += p.rowPtr[size_t(r)];
    p.colPtr.assign(size_t(m.cols + 1), 0);
    for (int32_t c : p.colIdx) p.colPtr[size_t(c) + 1]++;
    for (int64_t c = 0; c < m.cols; c++) p.colPtr[size_t(c + 1)] += p.colPtr[size_t(c)];
    std::vector<int32_t> fillp(p.colPtr.begin(), p.colPtr.end() - 1);
    p.rowIdx.assign(n, 0);
    p.cscIds.assign(n, 0);
    for (size_t q = 0; q < n; q++) {
      const int32_t at = fillp[size_t(p.colIdx[q])]++;
      p.rowIdx[size_t(at)] = p.ri[q];
      p.cscIds[size_t(at)] = int32_t(q);
    }
    return p;
  }

  void layout() {
    for (const OpSpec& o : K.ops)
      for (const BufSpec& b : o.buffers) make(key(b), b.elem, length(b));
    for (const auto& r : K.results)
      if (r.second.format == "dense" || r.second.shape.size() < 2) make("D:" + r.first, elem_of(r.second.dtype), count(r.first));
    std::vector<std::string> ks;
    for (const auto& kv : regions) ks.push_back(kv.first);
    for (const std::string& k : ks)
      if (k.size() > 5 && k.compare(k.size() - 5, 5, ".next") == 0) {
        const std::string base = k.substr(0, k.size() - 5);
        if (!regions.count(base)) make(base, regions[k].elem, regions[k].length);
      }
  }

  static Elem elem_of(const std::string& d) {
    if (d == "f32") return F32;
    if (d == "f64") return F64;
    if (d == "i64") return I64;
    if (d == "bool") return BOOL;
    return I32;
  }

  void copy_input(const std::string& name, const ValueType& t, std::map<std::string, Matrix>& mats) {
    if (t.shape.empty()) {
      if (regions.count("D:" + name)) set_from_double(region("D:" + name), 0, scalars[name]);
      return;
    }
    const Matrix& m = mats[name];
    if (t.format == "dense" || t.shape.size() < 2) {
      if (!regions.count("D:" + name)) return;
      Region& r = region("D:" + name);
      if (m.dense) {
        for (size_t k = 0; k < r.length && k < m.data.size(); k++) set_from_double(r, k, m.data[k]);
      } else {
        for (size_t k = 0; k < m.v.size(); k++) set_from_double(r, size_t(m.ri[k]) * size_t(m.cols) + size_t(m.ci[k]), m.v[k]);
      }
      return;
    }
    const Pattern& p = patterns[name];
    // Values in row-major entry order.
    std::vector<double> vals(p.colIdx.size());
    {
      std::vector<int32_t> order(m.v.size());
      for (size_t k = 0; k < order.size(); k++) order[k] = int32_t(k);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return m.ri[a] != m.ri[b] ? m.ri[a] < m.ri[b] : m.ci[a] < m.ci[b]; });
      for (size_t q = 0; q < order.size(); q++) vals[q] = m.v[size_t(order[q])];
    }
    auto put_i32 = [&](const std::string& k, const std::vector<int32_t>& src) {
      if (!regions.count(k)) return;
      std::memcpy(region(k).data(), src.data(), src.size() * 4);
    };
    put_i32("S:" + name + ":csr:ptr", p.rowPtr);
    put_i32("S:" + name + ":csr:idx", p.colIdx);
    put_i32("S:" + name + ":csc:ptr", p.colPtr);
    put_i32("S:" + name + ":csc:idx", p.rowIdx);
    if (regions.count("V:" + name + ":csr")) {
      Region& r = region("V:" + name + ":csr");
      for (size_t q = 0; q < vals.size(); q++) set_from_double(r, q, vals[q]);
    }
    if (regions.count("V:" + name + ":csc")) {
      Region& r = region("V:" + name + ":csc");
      for (size_t q = 0; q < vals.size(); q++) set_from_double(r, q, vals[size_t(p.cscIds[q])]);
    }
  }

  // ---- what the launch wrappers ask for ----
  template <class T>
  T* ptr(const OpSpec& o, size_t i) {
    return static_cast<T*>(region(key(o.buffers[i])).data());
  }
  int32_t size(const OpSpec& o, size_t i) {
    const std::string& s = o.sizes[i];
    if (s.compare(0, 4, "nnz(") == 0) return int32_t(pattern(s.substr(4, s.size() - 5)).colIdx.size());
    return int32_t(dim(s));
  }
  const Pattern* driving(const OpSpec& o) const {
    for (const BufSpec& b : o.buffers)
      if (b.role != "dense" && b.role != "scalar") return &pattern(b.of);
    return nullptr;
  }
  int32_t sp_rows(const OpSpec& o) const { const Pattern* p = driving(o); return p ? int32_t(p->rows) : 0; }
  int32_t sp_cols(const OpSpec& o) const { const Pattern* p = driving(o); return p ? int32_t(p->cols) : 0; }
  int32_t sp_nnz(const OpSpec& o) const { const Pattern* p = driving(o); return p ? int32_t(p->colIdx.size()) : 0; }
  // The ABI's longest-row and longest-column figures (dype_abi.h); 0 where the grouping was not built.
  int32_t sp_longest_row(const OpSpec& o) const { const Pattern* p = driving(o); return p ? longest_run(p->rowPtr) : 0; }
  int32_t sp_longest_col(const OpSpec& o) const { const Pattern* p = driving(o); return p ? longest_run(p->colPtr) : 0; }

  // ---- running ----
  void run_op(const OpSpec& o) {
    for (const BufSpec& b : o.buffers)
      if (b.name != o.out && !defined.count(b.of)) fail("kernel " + K.name + ": '" + b.of + "' was never computed: the repeat that assigns it ran zero times");
    if (runner) runner->launch(o);
    else o.launch(*this, o);
    const std::string permuted = after_op(o);
    if (runner && !permuted.empty()) runner->permuted(o, permuted);
  }

  // Swaps a double buffer, marks the result defined, and copies a sparse
  // result into its other layout; returns that layout's region ("" if none).
  std::string after_op(const OpSpec& o) {
    const BufSpec* outb = nullptr;
    for (const BufSpec& b : o.buffers)
      if (b.name == o.out) outb = &b;
    const std::string ok = key(*outb);
    std::string k = ok;
    if (ok.size() > 5 && ok.compare(ok.size() - 5, 5, ".next") == 0) {
      k = ok.substr(0, ok.size() - 5);
      std::swap(cur[k], cur[ok]);
    }
    defined.insert(o.result);
    if (outb->role != "values") return "";
    const std::string from = outb->layout.empty() ? "csr" : outb->layout;
    const std::string to = from == "csr" ? "csc" : "csr";
    const std::string tk = "V:" + o.result + ":" + to;
    if (!regions.count(tk)) return "";
    const Pattern& p = pattern(o.result);
    Region& src = region(k);
    Region& dst = region(tk);
    for (size_t q = 0; q < dst.length; q++) {
      // csc position q holds entry cscIds[q]; csr position e holds entry e.
      const size_t s = to == "csc" ? size_t(p.cscIds[q]) : 0;
      if (to == "csc") set_from_double(dst, q, get_as_double(src, s));
    }
    if (to == "csr")
      for (size_t q = 0; q < src.length; q++) set_from_double(dst, size_t(p.cscIds[q]), get_as_double(src, q));
    return physical(tk);
  }

  void exec(const std::vector<Step>& steps) {
    for (const Step& s : steps) {
      if (!s.repeat) {
        for (const OpSpec& o : K.ops)
          if (o.op == s.op) run_op(o);
        continue;
      }
      int64_t n = s.count;
      if (n < 0) {
        auto it = scalars.find(s.count_param);
        if (it == scalars.end()) fail("kernel " + K.name + ": repeat count '" + s.count_param + "' is not given; give it with PARAMS");
        if (it->second < 0 || it->second != double(int64_t(it->second))) fail("kernel " + K.name + ": repeat count must be a non-negative integer");
        n = int64_t(it->second);
      }
      if (s.until.empty()) {
        for (int64_t t = 0; t < n; t++) exec(s.body);
        continue;
      }
      // The stop test of runtime/converge.ts: the watched value before and after each trip.
      std::vector<double> before = watched(s.until);
      int64_t t = 0;
      bool stopped = false;
      while (t < n && !stopped) {
        exec(s.body);
        t++;
        std::vector<double> after = watched(s.until);
        double l1 = 0;
        bool same = true;
        for (size_t q = 0; q < after.size(); q++) {
          const double a = before[q], b = after[q];
          if (a != b && !(a != a && b != b)) {
            same = false;
            l1 += std::fabs(b - a);
          }
        }
        stopped = s.within < 0 ? same : l1 <= s.within;
        before.swap(after);
      }
      trips.push_back(TripLog{s.until, n, t, stopped});
    }
  }

  // What each convergence loop did, in the order they ran.
  struct TripLog {
    std::string value;
    int64_t max, trips;
    bool converged;
  };
  std::vector<TripLog> trips;

  std::vector<double> watched(const std::string& name) {
    if (runner) runner->fetch("D:" + name);
    Region& g = region("D:" + name);
    std::vector<double> d(g.length);
    for (size_t q = 0; q < g.length; q++) d[q] = get_as_double(g, q);
    return d;
  }

  void write_outputs(const std::map<std::string, std::string>& outputs) {
    for (const auto& kv : outputs) {
      bool known = false;
      for (const auto& r : K.results) known = known || r.first == kv.first;
      if (!known) fail("OUTPUTS: '" + kv.first + "' is not a result of kernel " + K.name);
    }
    std::map<std::string, std::string> text;
    for (const auto& r : K.results) {
      auto o = outputs.find(r.first);
      if (o == outputs.end()) continue;
      if (!defined.count(r.first)) fail("kernel " + K.name + ": '" + r.first + "' was never computed");
      const ValueType& t = r.second;
      const int digits = digits_of(t.dtype);  // what the dtype holds: 17 for f64, 9 for f32, integers exact
      if (t.format == "dense" || t.shape.size() < 2) {
        Region& g = region("D:" + r.first);
        std::vector<double> d(g.length);
        for (size_t q = 0; q < g.length; q++) d[q] = get_as_double(g, q);
        const int64_t rows = t.shape.empty() ? 1 : dim(t.shape[0]);
        const int64_t cols = t.shape.size() == 2 ? dim(t.shape[1]) : 1;
        text[o->second] = format_array(d, rows, cols, digits);
        continue;
      }
      const Pattern& p = pattern(r.first);
      const bool csr = regions.count("V:" + r.first + ":csr") > 0;
      Region& g = region("V:" + r.first + (csr ? ":csr" : ":csc"));
      std::vector<double> byEntry(p.colIdx.size());
      for (size_t q = 0; q < byEntry.size(); q++) byEntry[csr ? q : size_t(p.cscIds[q])] = get_as_double(g, q);
      std::vector<int32_t> ri, ci;
      std::vector<double> v;
      if (t.format == "csc") {
        for (size_t q = 0; q < p.cscIds.size(); q++) {
          const size_t e = size_t(p.cscIds[q]);
          ri.push_back(p.ri[e]);
          ci.push_back(p.colIdx[e]);
          v.push_back(byEntry[e]);
        }
      } else {
        ri = p.ri;
        ci = p.colIdx;
        v = byEntry;
      }
      text[o->second] = format_coordinate(p.rows, p.cols, ri, ci, v, digits);
    }
    for (const auto& kv : text) write_text_atomic(kv.first, kv.second);
  }
};

struct Args {
  std::map<std::string, std::string> in, out, par;
  std::map<std::string, std::string> extra;  // the flags a driver adds (each with one value)
};

// Command line: --in NAME=PATH, --out NAME=PATH, --param NAME=VALUE (what the Makefile passes), and `extra` flags.
static inline Args parse_args(int argc, char** argv, const std::set<std::string>& extra = {}) {
  Args A;
  std::string usage = "usage: " + std::string(argv[0]);
  for (const std::string& f : extra) usage += " [" + f + " VALUE]";
  usage += " [--in NAME=PATH] ... [--out NAME=PATH] ... [--param NAME=VALUE] ...";
  for (int a = 1; a < argc; a++) {
    const std::string flag = argv[a];
    if ((flag != "--in" && flag != "--out" && flag != "--param" && !extra.count(flag)) || a + 1 >= argc) fail(usage);
    if (extra.count(flag)) {
      A.extra[flag] = argv[++a];
      continue;
    }
    const std::string kv = argv[++a];
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) fail(flag + " expects NAME=VALUE, got '" + kv + "'");
    (flag == "--in" ? A.in : flag == "--out" ? A.out : A.par)[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return A;
}

static inline void print_cycle_notes() {
  std::lock_guard<std::mutex> g(cycle_notes_lock());
  for (const auto& kv : cycle_notes()) {
    // Only sparse kernels note cycles; any kernel over XRT notes what it moved.
    if (kv.second.runs > 0)
      std::fprintf(stderr, "  %s: %lld runs, %lld scheduled stream cycles and %lld folding shared rows for %lld nonzeros\n", kv.first.c_str(), kv.second.runs, kv.second.cycles, kv.second.fold, kv.second.nnz);
    if (kv.second.card_moved + kv.second.card_kept > 0)
      std::fprintf(stderr, "  %s: packed matrix %lld bytes moved to the card, %lld bytes found there already (%lld launches without packing)\n", kv.first.c_str(), kv.second.card_moved, kv.second.card_kept, kv.second.card_reused);
    if (kv.second.in_moved + kv.second.in_kept > 0)
      std::fprintf(stderr, "  %s: dense inputs %lld bytes moved to the card, %lld bytes found there already\n", kv.first.c_str(), kv.second.in_moved, kv.second.in_kept);
    if (kv.second.out_moved + kv.second.out_left > 0)
      std::fprintf(stderr, "  %s: outputs %lld bytes brought back from the card, %lld bytes left there\n", kv.first.c_str(), kv.second.out_moved, kv.second.out_left);
  }
}

// Exit status of an error: 1 for a user error (dype::Error: bad input, a size
// the design cannot hold), 3 for anything else (a design error such as a read
// of an empty stream in C simulation, or a device runtime's exception).
static inline int report(const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return dynamic_cast<const Error*>(&e) ? 1 : 3;
}

static inline int host_main(const KernelSpec& K, int argc, char** argv) {
  try {
    const Args A = parse_args(argc, argv);
    Program P(K);
    P.bind(A.in, A.par);
    const auto t0 = std::chrono::steady_clock::now();
    P.exec(K.program);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    P.write_outputs(A.out);
    std::fprintf(stderr, "%s: ran in %.1f ms", K.name.c_str(), ms);
#ifdef DYPE_XRT
    std::fprintf(stderr, " on the FPGA\n");
#else
    std::fprintf(stderr, " (C simulation)\n");
#endif
    for (const Program::TripLog& l : P.trips)
      std::fprintf(stderr, "  until %s: %lld trip(s), %s\n", l.value.c_str(), (long long)l.trips,
                   l.converged ? "converged" : ("did not converge: hit the maximum of " + std::to_string(l.max) + " trips").c_str());
    print_cycle_notes();
    return 0;
  } catch (const std::exception& e) {
    return report(e);
  }
}

}  // namespace dype

#endif
