// AccessPolicy: who may call the service and which server paths IngestPath may read.
//
// Contract
//   * CheckToken: when a token is configured, every call must carry `authorization: Bearer <token>`;
//     the comparison takes the same time whatever the bytes (no timing oracle). kPermissionDenied otherwise.
//   * ResolveAllowedPath: resolves symlinks and `..` (realpath) and accepts the path only when the result
//     lies inside one of the allowed roots (themselves resolved). No roots configured: nothing is allowed.
//   * Immutable after construction; thread-safe.
#ifndef XLADB_SERVICE_ACCESS_POLICY_H_
#define XLADB_SERVICE_ACCESS_POLICY_H_

#include <string>
#include <vector>

#include "ingest/status.h"

namespace xladb::service {

class AccessPolicy {
 public:
  // `token` empty: no authentication. Roots that do not exist are an error naming them.
  static StatusOr<AccessPolicy> Create(std::string token, const std::vector<std::string>& allowed_roots);

  Status CheckToken(const std::string& authorization_header) const;
  StatusOr<std::string> ResolveAllowedPath(const std::string& path) const;
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
