// The buffer objects of the XRT stand-in (see xrt_device.h): a host copy and a card copy per buffer, and
// per process the bytes synced each way (what a test reads to see what crossed the link).
#ifndef XRT_SHIM_BO_H
#define XRT_SHIM_BO_H
#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>
#include "xrt_device.h"

enum xclBOSyncDirection { XCL_BO_SYNC_BO_TO_DEVICE = 0, XCL_BO_SYNC_BO_FROM_DEVICE = 1 };
using xrtMemoryGroup = int;

namespace xrt_shim {
struct Traffic {
  unsigned long long to_card = 0, from_card = 0, buffers = 0, on_card = 0;
};
inline Traffic& traffic() {
  static Traffic t;
  return t;
}
}  // namespace xrt_shim

namespace xrt {
class bo {
 public:
  enum class flags : unsigned { normal = 0, p2p = 1 };
  bo() = default;
  bo(const device&, size_t size, flags, xrtMemoryGroup group) : s_(std::make_shared<Store>()) {
    if (group < 0) throw std::runtime_error("xrt shim: a buffer in no memory group");
    s_->host.assign(size, 0xCD);
    s_->card.assign(size, 0xEF);
    xrt_shim::traffic().buffers++;
  }
  // As in XRT, a default-constructed buffer has no handle: asking it anything is an error.
  size_t size() const {
    if (!s_) throw std::runtime_error("xrt shim: a buffer object without a handle");
    return s_->host.size();
  }
  void write(const void* src, size_t n, size_t off) {
    check(n, off);
    std::memcpy(s_->host.data() + off, src, n);
  }
  void read(void* dst, size_t n, size_t off) {
    check(n, off);
    std::memcpy(dst, s_->host.data() + off, n);
  }
  void sync(xclBOSyncDirection dir, size_t n, size_t off) {
    check(n, off);
    if (dir == XCL_BO_SYNC_BO_TO_DEVICE) {
      std::memcpy(s_->card.data() + off, s_->host.data() + off, n);
      xrt_shim::traffic().to_card += n;
    } else {
      std::memcpy(s_->host.data() + off, s_->card.data() + off, n);
      xrt_shim::traffic().from_card += n;
    }
  }
  void sync(xclBOSyncDirection dir) { sync(dir, size(), 0); }
  // A copy on the card between two buffers (XRT's bo::copy): nothing crosses the link.
  void copy(const bo& src, size_t n, size_t src_off = 0, size_t dst_off = 0) {
    check(n, dst_off);
    src.check(n, src_off);
    std::memcpy(s_->card.data() + dst_off, src.s_->card.data() + src_off, n);
    xrt_shim::traffic().on_card += n;
  }
  // What a kernel on the card sees.
  unsigned char* card_data() const {
    if (!s_) throw std::runtime_error("xrt shim: a buffer object without a handle passed to a kernel");
    return s_->card.data();
  }

 private:
  struct Store {
    std::vector<unsigned char> host, card;
  };
  void check(size_t n, size_t off) const {
    if (!s_ || off > s_->host.size() || n > s_->host.size() - off) throw std::runtime_error("xrt shim: outside the buffer");
  }
  std::shared_ptr<Store> s_;
};
}  // namespace xrt
#endif
