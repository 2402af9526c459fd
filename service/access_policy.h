// AccessPolicy: who may call the service and which server paths IngestPath may read.
//
// Contract
//   * Two rights, two tokens (xladbd --token-file, --admin-token-file). Authorize(header, right): a call
//     carries `authorization: Bearer <token>` (the scheme in any case, then spaces). kRead (queries, pages, SQL,
//     watching a job) needs the read or the admin token; kWrite (upload, ingest a server path, label, delete,
//     prune) needs the admin token. With the read token alone configured it keeps every right (one token does
//     everything, as before roles); with the admin token alone, reads are open and writes need it; with
//     neither, everything is open. kPermissionDenied otherwise, saying which token the call needs. Tokens
//     are compared in a time that depends on neither their bytes nor a common prefix (no timing oracle).
//     CheckToken(header) is Authorize(header, kRead).
//   * ResolveAllowedPath: accepts an absolute path only when it lies beneath one of the allowed roots
//     (themselves resolved with realpath at start): lexically (`..` cannot climb out), then opened beneath the
//     root with openat2(RESOLVE_BENEATH), so a symlink may be followed only while it stays inside. Returns the
//     resolved path. Outside the roots and "does not exist" outside them are one answer (kPermissionDenied,
//     no resolved path echoed), so callers cannot probe the server's disk; kNotFound only for a path beneath
//     a root. No roots configured: nothing is allowed.
//   * FindRoot: the lexical half: which root a path is beneath, and the rest of it. The ingest queue uses it
//     to open the path beneath that root again when the job runs (ingest/source/dump_source.h OpenBeneath).
//   * Immutable after construction; thread-safe.
#ifndef XLADB_SERVICE_ACCESS_POLICY_H_
#define XLADB_SERVICE_ACCESS_POLICY_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace xladb::service {

struct AllowedPath {
  std::string root;      // an allowed root, resolved, without trailing '/'
  std::string relative;  // the path beneath it, '/'-separated, no `..`; "" = the root itself
};

class AccessPolicy {
 public:
  enum class Right { kRead, kWrite };

  // A token empty: not configured. Roots that do not exist, or one token given for both rights, are an
  // error (kInvalidArgument) naming the cause.
  [[nodiscard]] static StatusOr<AccessPolicy> Create(std::string read_token, std::string admin_token,
                                                     const std::vector<std::string>& allowed_roots);
  // One token (or none) for every right.
  [[nodiscard]] static StatusOr<AccessPolicy> Create(std::string token, const std::vector<std::string>& allowed_roots) {
    return Create(std::move(token), "", allowed_roots);
  }

  [[nodiscard]] Status Authorize(const std::string& authorization_header, Right right) const;
  [[nodiscard]] Status CheckToken(const std::string& authorization_header) const {
    return Authorize(authorization_header, Right::kRead);
  }
  StatusOr<std::string> ResolveAllowedPath(const std::string& path) const;
  StatusOr<AllowedPath> FindRoot(const std::string& path) const;
  // True when reads need a token (the read token is configured).
  bool token_required() const { return !read_token_.empty(); }
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  std::string read_token_, admin_token_;
  std::vector<std::string> roots_;  // resolved, without trailing '/'
};

// Reads a token file: its first line, trimmed. An empty token is an error.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_ACCESS_POLICY_H_
