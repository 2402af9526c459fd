// What this build is: the project's version (CMakeLists.txt's project()), and the git commit it was built from
// (read when CMake configures; a new commit configures again; "unknown" outside a git checkout). `xladb
// --version` and `xladbd --version` print VersionLine with the store's schema version.
//
// Contract: constants of the build; thread-safe. Only the two executables link this library, so a new commit
// relinks them and nothing else.
#ifndef XLADB_BASE_BUILD_VERSION_H_
#define XLADB_BASE_BUILD_VERSION_H_

#include <string>
#include <string_view>

namespace xladb {

std::string_view BuildVersion();  // "0.1.0"
std::string_view BuildCommit();   // 12 hex digits, or "unknown"

// "xladb 0.1.0 (commit 1a2b3c4d5e6f, schema version 8)"
std::string VersionLine(std::string_view program, int schema_version);

}  // namespace xladb

#endif  // XLADB_BASE_BUILD_VERSION_H_
