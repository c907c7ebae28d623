// XRT side of the generated host (built only with -DDYPE_XRT by the sw_emu,
// hw_emu and hw targets and by the ABI library's xrt-lib; C simulation never
// includes XRT). One xclbin, named by DYPE_XCLBIN (the Makefile sets it), is
// loaded on each card the first time a launch runs there. The host program
// uses one card, DYPE_DEVICE (default 0); the ABI library passes the device
// of each launch. With DYPE_P2P=1 every buffer is allocated with
// xrt::bo::flags::p2p, so that a GPU (or another FPGA) can read and write it
// directly over PCIe peer-to-peer instead of staging through host memory.
#ifndef DYPE_XRT_H
#define DYPE_XRT_H
#ifdef DYPE_XRT
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <xrt/xrt_bo.h>
#include "dype_util.h"
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

namespace dype {
struct XrtContext {
  xrt::device device;
  xrt::uuid uuid;
};

// Launches on different cards may start at once (ABI library threads), so the
// table of opened cards is locked; a card whose xclbin failed to load is
// tried again at its next launch.
static inline XrtContext& xrt_context(int device) {
  static std::mutex lock;
  static std::map<int, std::unique_ptr<XrtContext>> cards;
  std::lock_guard<std::mutex> g(lock);
  if (device < 0) {
    const char* dev = std::getenv("DYPE_DEVICE");
    device = dev ? std::atoi(dev) : 0;
  }
  std::unique_ptr<XrtContext>& c = cards[device];
  if (!c) {
    const char* path = std::getenv("DYPE_XCLBIN");
    if (!path) fail("DYPE_XCLBIN is not set: name the .xclbin to load");
    std::unique_ptr<XrtContext> x(new XrtContext());
    x->device = xrt::device(unsigned(device));
    x->uuid = x->device.load_xclbin(std::string(path));
    c = std::move(x);
  }
  return *c;
}

static inline xrt::bo::flags bo_flags() {
  const char* p2p = std::getenv("DYPE_P2P");
  return p2p && std::string(p2p) == "1" ? xrt::bo::flags::p2p : xrt::bo::flags::normal;
}
}  // namespace dype
#endif
#endif
