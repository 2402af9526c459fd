#include "store/write/run_rows.h"

#include <string>

#include "base/unix_time.h"
#include "ingest/source/run_name.h"
#include "store/backend/row_binding.h"

namespace xladb::store {

using ingest::RunSpec;

namespace {

// Whether two recorded sources are the same one: equal, the same folder spelled another way (a run recorded
// before sources were made canonical: `./x`, a symlink), or an upload into a run that a version before 3
// recorded as plain "upload" (its content decides then, and it recorded none).
bool SameSource(const std::string& recorded, const std::string& incoming) {
  if (recorded == incoming) return true;
  if (recorded == "upload") return incoming.rfind("upload:", 0) == 0;
  if (recorded.empty() || recorded.front() != '/' || incoming.empty() || incoming.front() != '/') return false;
  return ingest::CanonicalSourcePath(recorded) == ingest::CanonicalSourcePath(incoming);
}

// Why `spec` may not add to the existing run whose source and content digest are given, or "" when it may:
// runs do not merge by accident. The same source again (a re-ingest, a watched folder that grew) is fine;
// another source path, or an upload of other content, needs RunSpec::append.
std::string RefuseMerge(const RunSpec& spec, const std::string& source, const std::string& digest) {
  if (spec.append) return "";
  if (!SameSource(source, spec.source_path)) {
    return "run '" + spec.name + "' already holds " + source + "; adding " + spec.source_path +
           " to it needs --append (or name another run with --run)";
  }
  if (!digest.empty() && !spec.content_digest.empty() && digest != spec.content_digest) {
    return "run '" + spec.name + "' was uploaded from " + source +
           " before, with other content; adding this upload to it needs --append (or name another run with --run)";
  }
  return "";
}

}  // namespace

StatusOr<int64_t> FindRunToAddTo(SqlConnection& sql, const RunSpec& spec) {
  auto find = sql.Prepare("SELECT run_id, COALESCE(source_path, ''), COALESCE(content_digest, ''), "
                          "detail_pruned_at_us FROM runs WHERE name = ?");
  find->Bind(1, spec.name);
  if (!find->Step()) return int64_t{0};
  if (!find->IsNull(3)) {  // its modules lack the rows new files would merge with
    return Status::FailedPrecondition("run '" + spec.name + "' was pruned (xladb prune kept only its "
                                      "summaries); `xladb delete` it to ingest it again");
  }
  std::string refused = RefuseMerge(spec, find->Text(1), find->Text(2));
  if (!refused.empty()) return Status::FailedPrecondition(refused);
  return find->Int(0);
}

std::optional<int64_t> CreateRun(SqlConnection& sql, const RunSpec& spec) {
  auto ins = sql.Prepare("INSERT INTO runs(name, source_path, run_time_us, run_time_source, created_at_us, "
                         "updated_at_us, content_digest) VALUES (?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT(name) DO NOTHING RETURNING run_id");
  const int64_t now = UnixMicrosNow();
  const bool flagged = spec.time_us >= 0;
  BindRow(*ins, spec.name, spec.source_path, flagged ? spec.time_us : now, flagged ? "flag" : "ingest_time", now,
          now, NonEmpty(spec.content_digest));
  if (!ins->Step()) return std::nullopt;
  return ins->Int(0);
}

}  // namespace xladb::store
