#include "base/content_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace xladb {

ContentHasher::ContentHasher() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

ContentHasher::~ContentHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void ContentHasher::Update(const char* data, size_t n) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, n);
}

std::string ContentHasher::HexDigest() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string SetDigest(std::vector<std::pair<std::string, std::string>> path_and_hash) {
  std::sort(path_and_hash.begin(), path_and_hash.end());
  ContentHasher h;
  for (const auto& [path, hash] : path_and_hash) {
    // Length-prefixed, so ("ab", "c…") and ("a", "bc…") cannot collide.
    const std::string len = std::to_string(path.size()) + ":";
    h.Update(len);
    h.Update(path);
    h.Update(hash);
  }
  return h.HexDigest();
}

}  // namespace xladb
