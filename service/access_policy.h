// AccessPolicy: who may call the service and which server paths IngestPath may read.
//
// Contract
//   * CheckToken: when a token is configured, every call must carry `authorization: Bearer <token>`;
//     the comparison takes the same time whatever the bytes (no timing oracle). kPermissionDenied otherwise.
//   * ResolveAllowedPath: accepts an absolute path only when it lies beneath one of the allowed roots
//     (themselves resolved with realpath at start): lexically (`..` cannot climb out), then opened beneath the
//     root with openat2(RESOLVE_BENEATH), so a symlink may be followed only while it stays inside. Returns the
//     resolved path. Outside the roots and "does not exist" outside them are one answer (kPermissionDenied,
//     no resolved path echoed), so callers cannot probe the server's disk; kNotFound only for a path beneath
//     a root. No roots configured: nothing is allowed.
//   * FindRoot: the lexical half: which root a path is beneath, and the rest of it. The ingest queue uses it
//     to open the path beneath that root again when the job runs (ingest/dump_source.h OpenBeneath).
//   * Immutable after construction; thread-safe.
#ifndef XLADB_SERVICE_ACCESS_POLICY_H_
#define XLADB_SERVICE_ACCESS_POLICY_H_

#include <string>
#include <vector>

#include "ingest/status.h"

namespace xladb::service {

struct AllowedPath {
  std::string root;      // an allowed root, resolved, without trailing '/'
  std::string relative;  // the path beneath it, '/'-separated, no `..`; "" = the root itself
};

class AccessPolicy {
 public:
  // `token` empty: no authentication. Roots that do not exist are an error naming them.
  static StatusOr<AccessPolicy> Create(std::string token, const std::vector<std::string>& allowed_roots);

  Status CheckToken(const std::string& authorization_header) const;
  StatusOr<std::string> ResolveAllowedPath(const std::string& path) const;
  StatusOr<AllowedPath> FindRoot(const std::string& path) const;
  bool token_required() const { return !token_.empty(); }
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  std::string token_;
  std::vector<std::string> roots_;  // resolved, without trailing '/'
};

// Reads a token file: its first line, trimmed. An empty token is an error.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_ACCESS_POLICY_H_
