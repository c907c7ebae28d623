// Kernels and runs of the XRT stand-in (see xrt_device.h): a run calls xrt_shim_call(name, args...) at
// once, each buffer argument as its card copy and each scalar as itself; the test's source defines
// xrt_shim_call, dispatching by kernel name to the C-simulation functions.
#ifndef XRT_SHIM_KERNEL_H
#define XRT_SHIM_KERNEL_H
#include <string>
#include <utility>
#include "xrt_bo.h"
#include "xrt_device.h"

namespace xrt_shim {
// A buffer argument as the kernel function's pointer type, whatever it is.
struct CardPtr {
  unsigned char* p;
  template <typename T>
  operator T*() const {
    return reinterpret_cast<T*>(p);
  }
};
inline CardPtr arg(const xrt::bo& b) { return CardPtr{b.card_data()}; }
template <typename T>
T arg(T v) {
  return v;
}
}  // namespace xrt_shim

template <typename... A>
void xrt_shim_call(const std::string& kernel, A... args);

namespace xrt {
class run {
 public:
  void wait() {}
};

class kernel {
 public:
  kernel(const device&, const uuid&, const std::string& name) : name_(name) {}
  xrtMemoryGroup group_id(int argno) const { return argno; }
  template <typename... Args>
  run operator()(Args&&... args) {
    xrt_shim_call(name_, xrt_shim::arg(args)...);
    return run();
  }

 private:
  std::string name_;
};
}  // namespace xrt
#endif
