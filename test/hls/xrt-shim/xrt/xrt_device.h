// A stand-in for XRT's C++ API (xrt/xrt_device.h, xrt_bo.h, xrt_kernel.h), only as much as the generated
// host code and ABI library use, so that their -DDYPE_XRT build compiles and runs here without XRT
// (test/hls/xrt.test.ts). Signatures follow XRT's public headers; behaviour follows XRT's buffer model:
// a buffer object has a host copy and a card copy, write/read touch the host copy, sync moves between
// them, and a kernel sees only the card copies. The card's kernels are the C-simulation functions, called
// through xrt_shim_call, which the test's own source defines (by kernel name). Not part of dype.
#ifndef XRT_SHIM_DEVICE_H
#define XRT_SHIM_DEVICE_H
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace xrt_shim {
// Cards 0 .. XRT_SHIM_CARDS - 1 open (default 1).
inline unsigned cards() {
  const char* n = std::getenv("XRT_SHIM_CARDS");
  return n ? unsigned(std::atoi(n)) : 1u;
}
}  // namespace xrt_shim

namespace xrt {
struct uuid {
  std::string xclbin;
};

namespace info {
namespace device {
struct name {};
}  // namespace device
}  // namespace info

class device {
 public:
  device() = default;
  explicit device(unsigned int index) : index_(index) {
    if (index >= xrt_shim::cards()) throw std::runtime_error("xrt shim: no card " + std::to_string(index));
  }
  uuid load_xclbin(const std::string& path) {
    if (path.empty()) throw std::runtime_error("xrt shim: empty xclbin path");
    return uuid{path};
  }
  template <typename Param>
  std::string get_info() const {
    return "xrt-shim card";
  }
  unsigned index() const { return index_; }

 private:
  unsigned index_ = 0;
};
}  // namespace xrt
#endif
