#include "store/write/file_rows.h"

#include <string>

#include "base/unix_time.h"
#include "store/backend/row_binding.h"

namespace xladb::store {

using ingest::FileOutcome;
using ingest::FileSpec;
using ingest::ModuleKey;

SqlStatement& ModuleFind(StatementCache& statements, const FileSpec& s) {
  const ModuleKey& key = s.module;
  SqlStatement& find =
      key.name_is_placeholder
          ? statements.Get("SELECT module_id, backend FROM modules WHERE run_id = ? AND stage = ? "
                           "AND xla_module_id IS NOT DISTINCT FROM ? AND folder = ? ORDER BY module_id LIMIT 1")
          : statements.Get("SELECT module_id, backend FROM modules WHERE run_id = ? AND stage = ? "
                           "AND xla_module_id IS NOT DISTINCT FROM ? AND folder = ? AND name = ?");
  BindRow(find, s.run_id, key.stage, NonNegative(key.xla_module_id), key.folder);
  if (!key.name_is_placeholder) find.Bind(5, key.name);  // the fifth placeholder, only in that statement
  return find;
}

SqlStatement& ModuleInsert(StatementCache& statements, const FileSpec& s) {
  const ModuleKey& key = s.module;
  // A placeholder takes the name another stage's HLO text gave the same module number, if any.
  SqlStatement& ins =
      key.name_is_placeholder
          ? statements.Get(
                "INSERT INTO modules(run_id, xla_module_id, name, stage, backend, folder) "
                "SELECT ?1, ?2, COALESCE((SELECT name FROM modules WHERE run_id = ?1 AND xla_module_id = ?2 "
                "  AND folder = ?6 AND name <> ?3 ORDER BY module_id LIMIT 1), ?3), ?4, ?5, ?6 "
                "WHERE 1 = 1 ON CONFLICT DO NOTHING RETURNING module_id")  // WHERE: SQLite's upsert parse
          : statements.Get(
                "INSERT INTO modules(run_id, xla_module_id, name, stage, backend, folder) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING module_id");
  BindRow(ins, s.run_id, NonNegative(key.xla_module_id), key.name, key.stage, key.backend, key.folder);
  return ins;
}

namespace {

// The id `ins` (ModuleInsert, sent) created; nullopt when the module exists.
std::optional<int64_t> CreatedModule(SqlStatement& ins) {
  if (!ins.Step()) {
    ins.Reset();
    return std::nullopt;
  }
  const int64_t module_id = ins.Int(0);
  ins.Reset();
  return module_id;
}

}  // namespace

std::pair<int64_t, bool> FindOrCreateModule(StatementCache& statements, const FileSpec& s, SqlStatement& sent) {
  const ModuleKey& key = s.module;
  for (int attempt = 0; attempt < 2; ++attempt) {
    SqlStatement& find = attempt == 0 ? sent : ModuleFind(statements, s);
    if (find.Step()) {
      const int64_t module_id = find.Int(0);
      const bool backend_unknown = find.Text(1).empty();
      find.Reset();
      if (backend_unknown) SetModuleBackend(statements, module_id, key.backend);
      return {module_id, false};
    }
    find.Reset();
    // Another writer's module, created since the lookup: found the second time.
    if (const std::optional<int64_t> created = CreatedModule(ModuleInsert(statements, s))) {
      return {*created, true};
    }
  }
  throw SqlError("module " + key.name + " was neither found nor created");
}

std::pair<int64_t, bool> CreateOrFindModule(StatementCache& statements, const FileSpec& s, SqlStatement& sent) {
  if (const std::optional<int64_t> created = CreatedModule(sent)) return {*created, true};
  return FindOrCreateModule(statements, s, ModuleFind(statements, s));
}

void SetModuleBackend(StatementCache& statements, int64_t module_id, const std::string& backend) {
  if (backend.empty()) return;
  SqlStatement& up = statements.Get("UPDATE modules SET backend = ? WHERE module_id = ?");
  BindRow(up, backend, module_id);
  up.Execute();
}

// dump_files' columns a file's row is inserted with, in the order both inserts bind them.
#define XLADB_FILE_ROW_COLUMNS                                                                        \
  "run_id, path, kind, verdict, reason, size_bytes, content_hash, mtime_us, line_count, unknown_lines, " \
  "issue_count, rows_written, ingested_at_us"

SqlStatement& FileRowInsert(StatementCache& statements, const FileSpec& s, std::string_view verdict,
                            const FileOutcome& outcome, int64_t issue_count, std::optional<int64_t> rows_written) {
  SqlStatement& ins = statements.Get("INSERT INTO dump_files(" XLADB_FILE_ROW_COLUMNS ") "
                                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                                     "ON CONFLICT(run_id, path) DO NOTHING RETURNING file_id");
  BindRow(ins, s.run_id, s.path, s.kind, verdict, NonEmpty(outcome.reason), s.size_bytes, s.content_hash,
          NonNegative(s.mtime_us), outcome.line_count, outcome.unknown_lines, issue_count, rows_written,
          UnixMicrosNow());
  return ins;
}

const BulkInsert kLoneFileRowInsert{"dump_files", XLADB_FILE_ROW_COLUMNS, "ON CONFLICT(run_id, path) DO NOTHING",
                                    2};
#undef XLADB_FILE_ROW_COLUMNS

void AddLoneFileRow(BulkBatch& batch, SqlConnection& sql, const FileSpec& s, std::string_view verdict,
                    const FileOutcome& outcome, int64_t issue_count) {
  batch.Int(s.run_id);
  batch.Text(s.path);
  batch.Text(s.kind);
  batch.Text(verdict);
  if (outcome.reason.empty()) batch.Null(); else batch.Text(outcome.reason);
  batch.Int(s.size_bytes);
  batch.Text(s.content_hash);
  batch.Opt(NonNegative(s.mtime_us));  // as FileRowInsert binds it
  batch.Int(outcome.line_count);
  batch.Int(outcome.unknown_lines);
  batch.Int(issue_count);
  batch.Int(0);  // rows_written
  batch.Int(UnixMicrosNow());
  (void)batch.EndRow(sql);
}

std::optional<int64_t> StoredFileId(SqlStatement& insert) {
  std::optional<int64_t> file_id;
  if (insert.Step()) file_id = insert.Int(0);
  insert.Reset();
  return file_id;
}

void CheckOtherWritersFile(StatementCache& statements, const FileSpec& s) {
  SqlStatement& q = statements.Get("SELECT content_hash FROM dump_files WHERE run_id = ? AND path = ?");
  BindRow(q, s.run_id, s.path);
  const std::string stored = q.Step() ? q.Text(0) : std::string();
  q.Reset();
  if (stored != s.content_hash) {
    throw SqlError("another writer stored another version of " + s.path + " at the same time; ingest again");
  }
}

namespace {

const char* SeverityName(ingest::IssueRecord::Severity s) {
  switch (s) {
    case ingest::IssueRecord::Severity::kUnknownLine: return "unknown_line";
    case ingest::IssueRecord::Severity::kInvariant: return "invariant";
    case ingest::IssueRecord::Severity::kWarning: return "warning";
    case ingest::IssueRecord::Severity::kError: return "error";
  }
  return "warning";
}

}  // namespace

void WriteFileIssues(StatementCache& statements, int64_t file_id, const FileIssues& issues) {
  SqlStatement& st = statements.Get("INSERT INTO ingest_issues(file_id, line, severity, reason) VALUES (?,?,?,?)");
  for (const auto& issue : issues.stored) {
    BindRow(st, file_id, issue.line, SeverityName(issue.severity), issue.reason);
    st.ExecuteLater();
    st.Reset();
  }
}

}  // namespace xladb::store
