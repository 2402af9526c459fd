// The libFuzzer main of every fuzz target: built once per entry of AllFuzzTargets() with
// XLADB_FUZZ_TARGET_NAME set to the target's name (tests/fuzz/CMakeLists.txt). A broken contract reported by
// the entry point is printed and aborts, so libFuzzer saves the input like any crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_entry_points.h"

#ifndef XLADB_FUZZ_TARGET_NAME
#error "XLADB_FUZZ_TARGET_NAME must name an entry of AllFuzzTargets()"
#endif

namespace {
const xladb::fuzz::FuzzTarget* Target() {
  static const xladb::fuzz::FuzzTarget* target = [] {
    const xladb::fuzz::FuzzTarget* found = xladb::fuzz::FindFuzzTarget(XLADB_FUZZ_TARGET_NAME);
    if (found == nullptr) {
      std::fprintf(stderr, "no fuzz entry point named %s\n", XLADB_FUZZ_TARGET_NAME);
      std::abort();
    }
    return found;
  }();
  return target;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string broken = Target()->run(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!broken.empty()) {
    std::fprintf(stderr, "%s: contract broken: %s\n", XLADB_FUZZ_TARGET_NAME, broken.c_str());
    std::abort();
  }
  return 0;
}
