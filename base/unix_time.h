// The current time as the schema stores it: Unix microseconds (UTC). Thread-safe.
#ifndef XLADB_BASE_UNIX_TIME_H_
#define XLADB_BASE_UNIX_TIME_H_

#include <chrono>
#include <cstdint>

namespace xladb {

inline int64_t UnixMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace xladb

#endif  // XLADB_BASE_UNIX_TIME_H_
