// ContentHasher: the streaming XXH3-128 digest xladb keys file contents by (dump_files.content_hash), and
// the digest of a whole upload built from those (runs.content_digest).
//
// Contract: HexDigest() is 32 lowercase hex digits and may be called at any point (it does not end the
// stream). Not thread-safe; owns its XXH3 state. Not copyable.
#ifndef XLADB_BASE_CONTENT_HASH_H_
#define XLADB_BASE_CONTENT_HASH_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb {

class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  void Update(const char* data, size_t n);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  std::string HexDigest() const;

 private:
  void* state_;  // XXH3_state_t
};

// The digest of a set of files given as (relative path, content HexDigest) pairs, in any order: equal sets
// give equal digests.
std::string SetDigest(std::vector<std::pair<std::string, std::string>> path_and_hash);

}  // namespace xladb

#endif  // XLADB_BASE_CONTENT_HASH_H_
