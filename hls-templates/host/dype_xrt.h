// XRT side of the generated host (built only with -DDYPE_XRT by the sw_emu,
// hw_emu and hw targets; C simulation never includes XRT). One device and
// one xclbin per process: DYPE_XCLBIN names the file (the Makefile sets it),
// DYPE_DEVICE the device index (default 0). With DYPE_P2P=1 every buffer is
// allocated with xrt::bo::flags::p2p, so that a GPU (or another FPGA) can
// read and write it directly over PCIe peer-to-peer instead of staging
// through host memory.
#ifndef DYPE_XRT_H
#define DYPE_XRT_H
#ifdef DYPE_XRT
#include <cstdlib>
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

static inline XrtContext& xrt_context() {
  static XrtContext* ctx = nullptr;
  if (!ctx) {
    const char* path = std::getenv("DYPE_XCLBIN");
    const char* dev = std::getenv("DYPE_DEVICE");
    if (!path) fail("DYPE_XCLBIN is not set: name the .xclbin to load");
    ctx = new XrtContext();
    ctx->device = xrt::device(dev ? std::atoi(dev) : 0);
    ctx->uuid = ctx->device.load_xclbin(std::string(path));
  }
  return *ctx;
}

static inline xrt::bo::flags bo_flags() {
  const char* p2p = std::getenv("DYPE_P2P");
  return p2p && std::string(p2p) == "1" ? xrt::bo::flags::p2p : xrt::bo::flags::normal;
}
}  // namespace dype
#endif
#endif
