// Minimal stand-in for Vitis HLS's hls_stream.h, for C simulation with g++
// only (written for dype; no vendor code). A stream is an unbounded FIFO; in
// C simulation the dataflow processes run one after another in call order,
// so every producer finishes before its consumer starts. Reading an empty
// stream is a design error: it throws std::logic_error (the host program
// reports it and exits 3; the ABI library returns DYPE_ERR_BACKEND).
#ifndef DYPE_CSIM_HLS_STREAM_H
#define DYPE_CSIM_HLS_STREAM_H
#include <deque>
#include <stdexcept>
#include <string>

namespace hls {
template <class T>
class stream {
  std::deque<T> q_;
  const char* name_;

 public:
  stream() : name_("stream") {}
  explicit stream(const char* name) : name_(name) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  void write(const T& x) { q_.push_back(x); }
  T read() {
    if (q_.empty()) throw std::logic_error(std::string("csim: read from empty hls::stream '") + name_ + "'");
    T x = q_.front();
    q_.pop_front();
    return x;
  }
  bool empty() const { return q_.empty(); }
  bool full() const { return false; }
  std::size_t size() const { return q_.size(); }
  void operator<<(const T& x) { write(x); }
  void operator>>(T& x) { x = read(); }
};
}  // namespace hls

#endif
