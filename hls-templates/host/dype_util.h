// What both the host program and the kernels' launch functions need: the
// one way to stop on a user error (message on stderr, exit status 1), and
// the scheduled stream lengths the sparse kernels report.
#ifndef DYPE_UTIL_H
#define DYPE_UTIL_H
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace dype {

[[noreturn]] static inline void fail(const std::string& msg) {
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::exit(1);
}

struct CycleNote {
  long long cycles = 0, nnz = 0, runs = 0;
};
static inline std::map<std::string, CycleNote>& cycle_notes() {
  static std::map<std::string, CycleNote> m;
  return m;
}
// Scheduled stream length of a sparse kernel run (cycles of its nonzero pipeline at II=1).
static inline void note_cycles(const char* kernel, long long cycles, long long nnz) {
  CycleNote& n = cycle_notes()[kernel];
  n.cycles += cycles;
  n.nnz += nnz;
  n.runs++;
}

}  // namespace dype

#endif
