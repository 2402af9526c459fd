// Byte counts for people: "+64.0 MiB", "-512 B", in binary units, exact under 1 KiB. The one spelling that
// the CLI's tables and reports and the HTML pages share. Pure function; thread-safe.
#ifndef XLADB_SERVICE_HUMAN_BYTES_H_
#define XLADB_SERVICE_HUMAN_BYTES_H_

#include <cstdint>
#include <string>

namespace xladb::service {

// `sign` writes a '+' before positive counts (for deltas).
std::string HumanBytes(int64_t bytes, bool sign = false);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_HUMAN_BYTES_H_
