#include "store/run_writer.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ingest/run_name.h"
#include "store/file_replacement.h"
#include "store/file_rows.h"
#include "store/file_writer.h"
#include "store/interned_texts.h"
#include "store/module_facts.h"
#include "store/run_summary.h"
#include "store/statement_cache.h"
#include "store/unix_time.h"

namespace xladb::store {

namespace {

const char* SeverityName(IssueRecord::Severity s) {
  switch (s) {
    case IssueRecord::Severity::kUnknownLine: return "unknown_line";
    case IssueRecord::Severity::kInvariant: return "invariant";
    case IssueRecord::Severity::kWarning: return "warning";
    case IssueRecord::Severity::kError: return "error";
  }
  return "warning";
}

}  // namespace

struct RunWriter::Impl {
  explicit Impl(Database* database)
      : db(database), sql(database->sql()), statements(database->sql()), derived_facts(database->connection()) {}

  Database* db;
  SQLite::Database& sql;
  StatementCache statements;         // outlives files: statements are prepared once per writer
  InternedTextCaches interned;       // outlives files; entries added inside a rolled-back file or group go
  DerivedModuleFacts derived_facts;  // recomputed when a file changed what they are computed from
  FileReplacement replacement{&statements};  // a changed file's old rows, and the modules they shared

  SQLite::Statement& Cached(const char* text) { return statements.Get(text); }

  // The open file: its writer lives from BeginFile to CommitFile or AbortFile, inside SAVEPOINT file.
  std::unique_ptr<FileWriter> file;
  FileSpec spec;  // of the file begun last (AbortFile records it, also after a failed BeginFile)

  // Rolls the open file's savepoint back (its rows go) and drops its writer; the issues it saw are returned.
  FileIssues RollBackFile() {
    FileIssues issues;
    if (file) {
      issues = std::move(file->issues());
      file.reset();
      try {
        sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
    }
    return issues;
  }

  // Group commit: files share one transaction until kGroupSeconds or kGroupBytes of files have gone by, each
  // file inside a savepoint of its own (rolled back alone when it fails). A crash loses the open group only,
  // whole files all of them, and a rerun ingests them again.
  GroupCommit group;
  bool in_group = false;
  std::chrono::steady_clock::time_point group_started;
  int64_t group_bytes = 0, group_files = 0;
  std::string group_failure;  // set when a group's COMMIT failed: its files are gone; the run must stop
  std::set<int64_t> group_runs;  // runs with files in the open group: their summaries are recounted at COMMIT

  void OpenGroup() {
    if (in_group) return;
    sql.exec("BEGIN IMMEDIATE");
    in_group = true;
    group_started = std::chrono::steady_clock::now();
    group_bytes = group_files = 0;
  }
  // Commits the open group; on failure rolls it back and remembers why (group_failure).
  Status CloseGroup() {
    if (!in_group) return Status::Ok();
    in_group = false;
    try {
      for (int64_t run_id : group_runs) UpdateRunSummary(sql, run_id);
      group_runs.clear();
      sql.exec("COMMIT");
      interned.ForEach(&InternedTexts::GroupCommitted);
      return Status::Ok();
    } catch (const std::exception& e) {
      RollBackGroup();
      group_failure = "committing the last " + std::to_string(group_files) +
                      " files failed, so they are not stored (a rerun ingests them): " + e.what();
      return Status::IoError(group_failure);
    }
  }
  // Abandons the open group: its files are gone, and with them the run summaries and interned ids it held.
  void RollBackGroup() {
    try {
      sql.exec("ROLLBACK");
    } catch (...) {
    }
    in_group = false;
    group_runs.clear();
    interned.ForEach(&InternedTexts::GroupAborted);
  }
  Status CloseGroupIfDue(int64_t file_bytes) {
    group_bytes += file_bytes;
    ++group_files;
    const double open_for =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - group_started).count();
    return open_for >= group.max_seconds || group_bytes >= group.max_bytes ? CloseGroup() : Status::Ok();
  }

  // The module of `s`, created (with its empty summary row) when it is new: (module_id, created).
  std::pair<int64_t, bool> FindOrCreateModule(const FileSpec& s) {
    const ModuleKey& key = s.module;
    SQLite::Statement& find =
        Cached("SELECT module_id, backend FROM modules WHERE run_id = ? AND name = ? AND stage = ? "
               "AND xla_module_id IS ? AND folder = ?");
    find.bind(1, s.run_id);
    find.bind(2, key.name);
    find.bind(3, key.stage);
    if (key.xla_module_id >= 0) find.bind(4, key.xla_module_id); else find.bind(4);
    find.bind(5, key.folder);
    if (find.executeStep()) {
      const int64_t module_id = find.getColumn(0).getInt64();
      const bool backend_unknown = find.getColumn(1).getString().empty();
      find.reset();
      if (backend_unknown && !key.backend.empty()) {
        SQLite::Statement& up = Cached("UPDATE modules SET backend = ? WHERE module_id = ?");
        up.bind(1, key.backend);
        up.bind(2, module_id);
        up.exec();
      }
      return {module_id, false};
    }
    find.reset();
    SQLite::Statement& ins =
        Cached("INSERT INTO modules(run_id, xla_module_id, name, stage, backend, folder) VALUES (?, ?, ?, ?, ?, ?)");
    ins.bind(1, s.run_id);
    if (key.xla_module_id >= 0) ins.bind(2, key.xla_module_id); else ins.bind(2);
    ins.bind(3, key.name);
    ins.bind(4, key.stage);
    ins.bind(5, key.backend);
    ins.bind(6, key.folder);
    ins.exec();
    const int64_t module_id = sql.getLastInsertRowid();
    SQLite::Statement& summary = Cached("INSERT INTO module_summary(module_id) VALUES (?)");
    summary.bind(1, module_id);
    summary.exec();
    return {module_id, true};
  }


  int64_t InsertFileRow(const FileSpec& s, const FileOutcome& outcome, std::optional<int64_t> module,
                        int64_t issue_count) {
    SQLite::Statement& ins =
        Cached("INSERT INTO dump_files(run_id, path, kind, verdict, reason, size_bytes, content_hash, "
               "mtime_us, module_id, line_count, unknown_lines, issue_count, rows_written, "
               "ingested_at_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, s.run_id);
    ins.bind(2, s.path);
    ins.bind(3, s.kind);
    ins.bind(4, outcome.verdict);
    if (outcome.reason.empty()) ins.bind(5); else ins.bind(5, outcome.reason);
    ins.bind(6, s.size_bytes);
    ins.bind(7, s.content_hash);
    if (s.mtime_us >= 0) ins.bind(8, s.mtime_us); else ins.bind(8);
    if (module) ins.bind(9, *module); else ins.bind(9);
    ins.bind(10, outcome.line_count);
    ins.bind(11, outcome.unknown_lines);
    ins.bind(12, issue_count);
    ins.bind(13, 0);
    ins.bind(14, UnixMicrosNow());
    ins.exec();
    return sql.getLastInsertRowid();
  }

  void WriteIssues(int64_t fid, const FileIssues& issues) {
    auto& st = Cached("INSERT INTO ingest_issues(file_id, line, severity, reason) VALUES (?,?,?,?)");
    for (const auto& issue : issues.stored) {
      st.bind(1, fid);
      st.bind(2, issue.line);
      st.bind(3, SeverityName(issue.severity));
      st.bind(4, issue.reason);
      st.exec();
      st.reset();
    }
  }
};

RunWriter::RunWriter(Database* db, GroupCommit group) : impl_(std::make_unique<Impl>(db)) {
  impl_->group = group;
  // The WAL is checkpointed when a run is finished (FinishRun), not in the middle of one.
  try {
    impl_->sql.exec("PRAGMA wal_autocheckpoint = 0");
  } catch (...) {
  }
}
RunWriter::~RunWriter() {
  Impl& d = *impl_;
  try {
    (void)d.RollBackFile();
    (void)d.CloseGroup();  // the group's whole files were acknowledged: keep them
    d.sql.exec("PRAGMA wal_autocheckpoint = 1000");
  } catch (...) {
  }
}

namespace {

// Why `spec` may not add to the existing run whose source and content digest are given, or "" when it may:
// runs do not merge by accident. The same source again (a re-ingest, a watched folder that grew) is fine;
// another source path, or an upload of other content, needs RunSpec::append.
// Whether two recorded sources are the same one: equal, the same folder spelled another way (a run recorded
// before sources were made canonical: `./x`, a symlink), or an upload into a run that a version before 3
// recorded as plain "upload" (its content decides then, and it recorded none).
bool SameSource(const std::string& recorded, const std::string& incoming) {
  if (recorded == incoming) return true;
  if (recorded == "upload") return incoming.rfind("upload:", 0) == 0;
  if (recorded.empty() || recorded.front() != '/' || incoming.empty() || incoming.front() != '/') return false;
  return ingest::CanonicalSourcePath(recorded) == ingest::CanonicalSourcePath(incoming);
}

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

StatusOr<int64_t> RunWriter::BeginRun(const RunSpec& spec) {
  auto& sql = impl_->sql;
  if (Status closed = impl_->CloseGroup(); !closed.ok()) return closed;
  impl_->group_failure.clear();  // a failed group ended its own run; this one starts afresh
  impl_->replacement.Forget();
  try {
    sql.exec("BEGIN IMMEDIATE");
    int64_t run_id = 0;
    int64_t now = UnixMicrosNow();
    // A time label (time=, date=, commit_time=…) sets the run time when --time was not given.
    int64_t time_us = spec.time_us;
    std::string time_source = time_us >= 0 ? "flag" : "";
    {
      SQLite::Statement find(sql, "SELECT run_id, IFNULL(source_path, ''), IFNULL(content_digest, ''), "
                                  "detail_pruned_at_us FROM runs WHERE name = ?");
      find.bind(1, spec.name);
      if (find.executeStep()) {
        run_id = find.getColumn(0).getInt64();
        if (!find.getColumn(3).isNull()) {  // its modules lack the rows new files would merge with
          find.reset();
          sql.exec("ROLLBACK");
          return Status::FailedPrecondition("run '" + spec.name + "' was pruned (xladb prune kept only its "
                                            "summaries); `xladb delete` it to ingest it again");
        }
        std::string refused = RefuseMerge(spec, find.getColumn(1).getString(), find.getColumn(2).getString());
        if (!refused.empty()) {
          find.reset();
          sql.exec("ROLLBACK");
          return Status::FailedPrecondition(refused);
        }
      }
    }
    if (run_id == 0) {
      SQLite::Statement ins(sql,
                            "INSERT INTO runs(name, source_path, run_time_us, run_time_source, created_at_us, "
                            "updated_at_us, content_digest) VALUES (?, ?, ?, ?, ?, ?, ?)");
      ins.bind(1, spec.name);
      ins.bind(2, spec.source_path);
      ins.bind(3, time_us >= 0 ? time_us : now);
      ins.bind(4, time_us >= 0 ? time_source : std::string("ingest_time"));
      ins.bind(5, now);
      ins.bind(6, now);
      if (spec.content_digest.empty()) ins.bind(7); else ins.bind(7, spec.content_digest);
      ins.exec();
      run_id = sql.getLastInsertRowid();
    } else if (time_us >= 0) {
      SQLite::Statement up(sql, "UPDATE runs SET run_time_us = ?, run_time_source = 'flag' WHERE run_id = ?");
      up.bind(1, time_us);
      up.bind(2, run_id);
      up.exec();
    }
    for (const auto& [key, value] : spec.labels) {
      SQLite::Statement lab(sql,
                            "INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                            "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
      lab.bind(1, run_id);
      lab.bind(2, key);
      lab.bind(3, value);
      lab.exec();
    }
    sql.exec("COMMIT");
    return run_id;
  } catch (const std::exception& e) {
    try {
      sql.exec("ROLLBACK");
    } catch (...) {
    }
    return Status::IoError(std::string("recording run: ") + e.what());
  }
}

StatusOr<RunWriter::FileState> RunWriter::CheckFile(int64_t run_id, const std::string& path,
                                                    const std::string& content_hash) {
  try {
    SQLite::Statement& q =
        impl_->Cached("SELECT content_hash, verdict FROM dump_files WHERE run_id = ? AND path = ?");
    q.bind(1, run_id);
    q.bind(2, path);
    FileState state = FileState::kNew;
    if (q.executeStep()) {
      const std::string stored = q.getColumn(0).getString();
      state = stored == content_hash                         ? FileState::kUnchanged
              : stored == kRereadHashPrefix + content_hash ? FileState::kReread
                                                             : FileState::kChanged;
    }
    q.reset();  // no snapshot held between files
    return state;
  } catch (const std::exception& e) {
    return Status::IoError(std::string("checking file: ") + e.what());
  }
}

StatusOr<ingest::RecordSink*> RunWriter::BeginFile(const FileSpec& spec) {
  Impl& d = *impl_;
  if (d.file) return Status::Internal("BeginFile called twice without CommitFile/AbortFile");
  d.spec = spec;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  bool in_savepoint = false;
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    d.sql.exec("SAVEPOINT file");
    in_savepoint = true;
    // The new version writes into the module again, so a module the old one wrote alone stays.
    const FileFacts replaced =
        d.replacement.RemoveStoredVersion(spec, /*drop_lone_module=*/false).value_or(FileFacts{});
    int64_t module_id = 0;
    bool module_is_new = false;
    if (spec.has_module) std::tie(module_id, module_is_new) = d.FindOrCreateModule(spec);
    // Reserve the file id now so rows can reference it; the row is completed at commit.
    const int64_t file_id =
        d.InsertFileRow(spec, FileOutcome{"ingesting", "", 0, 0},
                        spec.has_module ? std::optional<int64_t>(module_id) : std::nullopt, 0);
    d.file = std::make_unique<FileWriter>(&d.statements, &d.interned, spec.run_id, file_id, module_id,
                                          module_is_new, replaced);
    return d.file.get();
  } catch (const std::exception& e) {
    if (in_savepoint) {
      try {
        d.sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
    }
    return Status::IoError(std::string("starting file ") + spec.path + ": " + e.what());
  }
}

StatusOr<FileWriteStats> RunWriter::CommitFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  if (!d.file) return Status::Internal("CommitFile without BeginFile");
  FileWriter& file = *d.file;
  Status written = file.Finish(&d.derived_facts);
  if (written.ok()) {
    try {
      d.WriteIssues(file.file_id(), file.issues());
      SQLite::Statement& up =
          d.Cached("UPDATE dump_files SET verdict = ?, reason = ?, line_count = ?, unknown_lines = ?, "
                   "issue_count = ?, rows_written = ? WHERE file_id = ?");
      up.bind(1, outcome.verdict);
      if (outcome.reason.empty()) up.bind(2); else up.bind(2, outcome.reason);
      up.bind(3, outcome.line_count);
      up.bind(4, outcome.unknown_lines);
      up.bind(5, file.issues().total);
      up.bind(6, file.rows());
      up.bind(7, file.file_id());
      up.exec();
      SQLite::Statement& run = d.Cached("UPDATE runs SET updated_at_us = ? WHERE run_id = ?");
      run.bind(1, UnixMicrosNow());
      run.bind(2, d.spec.run_id);
      run.exec();
      d.sql.exec("RELEASE file");
    } catch (const std::exception& e) {
      written = Status::IoError(std::string("database write failed: ") + e.what());
    }
  }
  if (!written.ok()) {
    // Roll back this file's rows only, keeping the writer (and the issues it saw) for AbortFile, which
    // records the error verdict.
    try {
      d.sql.exec("ROLLBACK TO file");
    } catch (...) {
    }
    return written;
  }
  FileWriteStats stats{file.rows(), file.issues().total};
  d.file.reset();
  d.interned.ForEach(&InternedTexts::FileDone);
  if (Status closed = d.CloseGroupIfDue(d.spec.size_bytes); !closed.ok()) return closed;
  return stats;
}

Status RunWriter::AbortFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  // Keep the issues seen (they explain the error), drop the rows.
  FileIssues issues = d.RollBackFile();
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);  // nothing can be recorded now
  d.interned.ForEach(&InternedTexts::FileAborted);
  return RecordFile(d.spec, outcome, issues);
}

Status RunWriter::RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) {
  return RecordFile(spec, outcome, FileIssues{});
}

Status RunWriter::RecordFile(const FileSpec& spec, const FileOutcome& outcome, const FileIssues& issues) {
  Impl& d = *impl_;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  bool in_savepoint = false;
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    d.sql.exec("SAVEPOINT file");
    in_savepoint = true;
    // When the stored version was its module's only file (a dump replaced by an unreadable one), the module
    // goes too, so no summary outlives its rows.
    (void)d.replacement.RemoveStoredVersion(spec, /*drop_lone_module=*/true);
    const int64_t fid = d.InsertFileRow(spec, outcome, std::nullopt, issues.total);
    d.WriteIssues(fid, issues);
    d.sql.exec("RELEASE file");
    in_savepoint = false;
  } catch (const std::exception& e) {
    if (in_savepoint) {
      try {
        d.sql.exec("ROLLBACK TO file; RELEASE file");
      } catch (...) {
      }
    }
    return Status::IoError(std::string("recording file ") + spec.path + ": " + e.what());
  }
  d.interned.ForEach(&InternedTexts::FileDone);
  return d.CloseGroupIfDue(0);
}

Status RunWriter::FinishRun(int64_t run_id, int64_t newest_mtime_us) {
  if (Status closed = impl_->CloseGroup(); !closed.ok()) return closed;
  if (!impl_->group_failure.empty()) return Status::IoError(impl_->group_failure);
  try {
    SQLite::Statement up(impl_->sql,
                         "UPDATE runs SET run_time_us = ?, run_time_source = 'newest_file_mtime' "
                         "WHERE run_id = ? AND run_time_source IN ('ingest_time', 'newest_file_mtime')");
    up.bind(1, newest_mtime_us);
    up.bind(2, run_id);
    if (newest_mtime_us >= 0) up.exec();
    // The WAL's pages go to the database now, once per run (wal_autocheckpoint is off while writing).
    // PASSIVE: readers are not waited for; what they still use is copied at the next run's end.
    impl_->sql.exec("PRAGMA wal_checkpoint(PASSIVE)");
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("finishing run: ") + e.what());
  }
}

bool RunWriter::TakeRereadRequest() {
  Impl& d = *impl_;
  if (!d.replacement.any_rebuilt() || !d.group_failure.empty()) return false;
  try {
    d.OpenGroup();
    return d.replacement.ScheduleSecondPass();
  } catch (const std::exception& e) {
    // Like a failed group commit: the open group is rolled back, and the run ends saying why (FinishRun).
    d.RollBackGroup();
    d.group_failure = std::string("rebuilding a module whose file was replaced failed, so the last ") +
                      std::to_string(d.group_files) + " files are not stored (a rerun ingests them): " + e.what();
    return false;
  }
}

Status RunWriter::ApplyRunMetadata(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels,
                                   int64_t time_us) {
  Impl& d = *impl_;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  bool in_savepoint = false;
  try {
    d.OpenGroup();
    d.sql.exec("SAVEPOINT meta");
    in_savepoint = true;
    SQLite::Statement put(d.sql,
                          "INSERT INTO run_labels(run_id, key, value) VALUES (?, ?, ?) "
                          "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value");
    for (const auto& [key, value] : labels) {
      put.bind(1, run_id);
      put.bind(2, key);
      put.bind(3, value);
      put.exec();
      put.reset();
    }
    if (time_us >= 0) {
      SQLite::Statement up(d.sql,
                           "UPDATE runs SET run_time_us = ?, run_time_source = 'run_file' "
                           "WHERE run_id = ? AND run_time_source <> 'flag'");
      up.bind(1, time_us);
      up.bind(2, run_id);
      up.exec();
    }
    d.sql.exec("RELEASE meta");
    return Status::Ok();
  } catch (const std::exception& e) {
    if (in_savepoint) {
      try {
        d.sql.exec("ROLLBACK TO meta; RELEASE meta");
      } catch (...) {
      }
    }
    return Status::IoError(std::string("applying the run metadata file: ") + e.what());
  }
}

}  // namespace xladb::store
