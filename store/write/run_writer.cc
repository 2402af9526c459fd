#include "store/write/run_writer.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/backend/row_binding.h"
#include "store/facts/run_labels.h"
#include "store/write/run_rows.h"
#include "store/write/run_writer_impl.h"

namespace xladb::store {

namespace {

// The dump_files row of a file whose rows are being written (BeginFile) has the verdict CommitFile gives a
// file it keeps, and rows_written NULL until then: CommitFile's update then changes no indexed column
// (dump_files_by_run_verdict stays as it is; PostgreSQL updates the row in place, a HOT update, where it was a
// new entry in each of the table's three indexes). The row is released with the file, so no reader sees it
// unfinished (the tests look for a NULL rows_written left behind).
constexpr ingest::FileVerdict kVerdictOfAKeptFile = ingest::FileVerdict::kIngested;

}  // namespace

FileIssues RunWriter::Impl::RollBackFile() {
  FileIssues issues;
  if (file) {
    held_rows.TruncateTo(file_mark);
    issues = std::move(file->issues());
    file.reset();
    file_savepoint.reset();
    created_modules.FileRolledBack();
  }
  return issues;
}

void RunWriter::Impl::DropUnfinishedFile() {
  if (!file) return;
  (void)RollBackFile();
  interned.FileAborted();
}

// The connection interned texts are written on: the writer's own on SQLite; on PostgreSQL a second one, so
// a text stays stored when the file that brought it rolls back (store/facts/interned_texts.h).
// That connection commits each batch of texts on its own, without waiting for the server to flush it
// (synchronous_commit off): a text is only of use to the rows that refer to it, which the writer commits
// later on its own connection, and that commit's flush takes every earlier commit's WAL with it. A crash
// before it loses the texts and their rows together, as if neither had been written; the database is never
// left inconsistent (PostgreSQL, "Asynchronous Commit"). A batch cost one flush of the WAL before. The sweep
// of replaced texts (SweepReplacedTexts) commits there too: a crash may lose it, leaving texts no row refers
// to, which only take space.
Status RunWriter::Impl::OpenInternedTexts() {
  if (interned.connection != nullptr) return Status::Ok();
  if (!db->is_sqlite()) {
    auto texts = Database::Open(db->path());
    if (!texts.ok()) return texts.status();
    texts_db = std::move(texts.value());
    try {
      texts_db->connection().Exec("SET synchronous_commit = off");
      // Its reads are lookups of a batch of hashes (thousands at a time) in tables the ingest is filling.
      // Planned with no statistics yet and the tables' size of the moment, a batch looked cheaper as one pass
      // over the whole table than as index probes, so each batch read all of long_texts or names again, in two
      // parallel workers that took the other core (auto_explain: Gather, Parallel Seq Scan). A 212 MB generated
      // buffer assignment's lookups took 491 ms of the server's execute time for long_texts (up to 85 ms a
      // batch) and 232 ms for names; read by key, 127 and 141 ms (tests/postgres/interned_lookups_postgres_test.cc).
      texts_db->connection().Exec("SET enable_seqscan = off");
      texts_db->connection().Exec("SET max_parallel_workers_per_gather = 0");
    } catch (const SqlError& e) {
      return Status::IoError(std::string("the interned texts' connection: ") + e.what());
    }
  }
  interned.connection = texts_db ? &texts_db->connection() : &sql;
  return Status::Ok();
}

RunWriter::RunWriter(Database* db, GroupCommit group) : impl_(std::make_unique<Impl>(db)) {
  impl_->group = group;
  impl_->group_seconds = group.max_seconds;
  // The WAL is checkpointed when a run is finished (FinishRun), not in the middle of one.
  if (db->is_sqlite()) {
    try {
      impl_->sql.Exec("PRAGMA wal_autocheckpoint = 0");
    } catch (...) {
    }
  } else {
    try {
      auto encodings =
          impl_->sql.Prepare("SELECT current_setting('server_encoding'), current_setting('client_encoding')");
      impl_->holds_rows = encodings->Step() && encodings->Text(0) == "UTF8" && encodings->Text(1) == "UTF8";
    } catch (const std::exception&) {
      impl_->holds_rows = false;  // written as they go, as on any store
    }
  }
}
RunWriter::~RunWriter() {
  Impl& d = *impl_;
  try {
    (void)d.RollBackFile();
    (void)d.CloseGroup();  // the group's whole files were acknowledged: keep them
    if (d.db->is_sqlite()) d.sql.Exec("PRAGMA wal_autocheckpoint = 1000");
  } catch (...) {
  }
}

double RunWriter::group_seconds() const { return impl_->group_seconds; }

StatusOr<int64_t> RunWriter::BeginRun(const RunSpec& spec) {
  Impl& d = *impl_;
  d.DropUnfinishedFile();  // the last run's caller threw and did not finish it
  if (Status closed = d.CloseGroup(); !closed.ok()) return closed;
  d.group_seconds = d.group.max_seconds;  // a small run after a big one does not keep its long groups
  d.group_failure.clear();  // a failed group ended its own run; this one starts afresh
  d.replacement.Forget();
  if (Status texts = d.OpenInternedTexts(); !texts.ok()) return texts;
  // Twice at most: a run another writer creates between the find and the insert is found the second time.
  for (int attempt = 0;; ++attempt) try {
    d.sql.BeginWrite();
    StatusOr<int64_t> run_id = FindRunToAddTo(d.sql, spec);
    if (!run_id.ok()) {
      d.sql.Exec("ROLLBACK");
      return run_id.status();
    }
    d.created_run = 0;
    d.created_run_paths.clear();
    d.created_modules.Forget();
    if (*run_id == 0) {
      std::optional<int64_t> created = CreateRun(d.sql, spec);
      if (!created) {
        if (attempt > 0) throw SqlError("run '" + spec.name + "' was neither found nor created");
        d.sql.Exec("ROLLBACK");
        continue;
      }
      run_id = *created;
      d.created_run = *created;
    } else if (spec.time_us >= 0) {
      auto up = d.sql.Prepare("UPDATE runs SET run_time_us = ?, run_time_source = 'flag' WHERE run_id = ?");
      BindRow(*up, spec.time_us, *run_id);
      up->Execute();
    }
    PutRunLabels(d.sql, *run_id, spec.labels);
    d.sql.Exec("COMMIT");
    return *run_id;
  } catch (const std::exception& e) {
    try {
      d.sql.Exec("ROLLBACK");
    } catch (...) {
    }
    return Status::IoError(std::string("recording run: ") + e.what());
  }
}

StatusOr<RunWriter::FileState> RunWriter::CheckFile(int64_t run_id, const std::string& path,
                                                    const std::string& content_hash) {
  try {
    if (impl_->Unstored(run_id, path)) return FileState::kNew;
    if (Status written = impl_->WriteLoneFileRows(); !written.ok()) return written;  // it may be one of them
    SqlStatement& q =
        impl_->Cached("SELECT content_hash, verdict FROM dump_files WHERE run_id = ? AND path = ?");
    const ResetWhenDone reset(q);  // no snapshot held between files
    BindRow(q, run_id, path);
    FileState state = FileState::kNew;
    if (q.Step()) {
      const std::string stored = q.Text(0);
      state = stored == content_hash                         ? FileState::kUnchanged
              : stored == kRereadHashPrefix + content_hash ? FileState::kReread
                                                             : FileState::kChanged;
    }
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
  if (Status written = d.WriteLoneFileRows(); !written.ok()) return written;
  const bool unstored = d.Unstored(spec.run_id, spec.path);
  // The file's rows may wait for the group (on PostgreSQL: on SQLite a statement costs no round trip and
  // little else, and holding the real run folder's rows there changed its time by nothing measurable).
  const bool held = d.holds_rows && spec.size_bytes <= Impl::kHeldFileBytes;
  if (!unstored || !held || d.held_rows.rows() >= Impl::kMaxHeldRows) {
    if (Status written = d.WriteHeldRows(); !written.ok()) return written;
  }
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    Savepoint savepoint(d.sql, "file");
    d.file_mark = d.held_rows.mark();
    // The new version writes into the module again, so a module the old one wrote alone stays.
    FileFacts replaced;
    if (!unstored) {
      replaced = d.replacement.RemoveStoredVersion(spec, /*drop_lone_module=*/false).value_or(FileFacts{});
      d.created_modules.Forget();
    }
    // Reserve the file id now so rows can reference it; the row is completed at commit, its module too. The
    // insert and the module's lookup or insert do not depend on each other: on PostgreSQL they are one round
    // trip. A module this writer created in its new run needs neither; another module of that run is most
    // likely new, so it is inserted first. The file's row goes before the module's: two writers adding files
    // to one run then take its keys in the same order (the walk's, file row before module), so neither waits
    // for a file row while it holds a module the other waits for (PostgreSQL found that deadlock between two
    // daemons ingesting one run when the module's insert went first).
    SqlStatement& file_row = FileRowInsert(d.statements, spec, ingest::FileVerdictName(kVerdictOfAKeptFile),
                                           FileOutcome{}, 0, std::nullopt);
    // Not a module named by number only: its insert takes a name another stage gave the number, where its
    // lookup finds the row by number.
    const bool most_likely_new = d.InCreatedRun(spec.run_id) && !spec.module.name_is_placeholder;
    CreatedModules::Module* known =
        spec.has_module && most_likely_new ? d.created_modules.Find(spec.module) : nullptr;
    SqlStatement* module_first = nullptr;  // the module's insert or lookup, sent with the file's row
    if (spec.has_module && known == nullptr) {
      module_first = most_likely_new ? &ModuleInsert(d.statements, spec) : &ModuleFind(d.statements, spec);
      SqlStatement* together[] = {&file_row, module_first};
      d.sql.RunTogether(together);
    }
    const std::optional<int64_t> file_id = StoredFileId(file_row);
    if (!file_id) {  // another writer stored the file since CheckFile
      CheckOtherWritersFile(d.statements, spec);
      savepoint.RollBack();  // with the module's insert, when PostgreSQL ran it
      return static_cast<ingest::RecordSink*>(nullptr);
    }
    int64_t module_id = 0;
    bool module_is_new = false;
    if (known != nullptr) {
      module_id = known->module_id;
      // Not noted in the entry: this file may roll back, and the next file sets it again.
      if (known->backend.empty()) SetModuleBackend(d.statements, module_id, spec.module.backend);
    } else if (module_first != nullptr) {
      std::tie(module_id, module_is_new) = most_likely_new ? CreateOrFindModule(d.statements, spec, *module_first)
                                                           : FindOrCreateModule(d.statements, spec, *module_first);
      if (module_is_new && most_likely_new) d.created_modules.Created(spec.module, module_id);
    }
    d.NoteWritten(spec);
    // A key named `module_<ID>`, a placeholder's or a module's own name: its HloModule line may rename the row.
    const bool named_by_number = spec.module.name_is_placeholder ||
                                 (spec.module.xla_module_id >= 0 &&
                                  spec.module.name == ingest::PlaceholderModuleName(spec.module.xla_module_id));
    d.file = std::make_unique<FileWriter>(&d.statements, &d.interned, held ? &d.held_rows : nullptr, spec.run_id,
                                          *file_id, module_id, module_is_new, named_by_number, replaced);
    d.file_savepoint.emplace(std::move(savepoint));
    return d.file.get();
  } catch (const std::exception& e) {
    d.created_modules.FileRolledBack();  // the savepoint rolled back
    return Status::IoError(std::string("starting file ") + spec.path + ": " + e.what());
  }
}

StatusOr<FileWriteStats> RunWriter::CommitFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  if (!d.file) return Status::Internal("CommitFile without BeginFile");
  FileWriter& file = *d.file;
  Status written = file.Finish();
  if (written.ok()) {
    try {
      WriteFileIssues(d.statements, file.file_id(), file.issues());
      // The verdict only when it is not the one the row has (kVerdictOfAKeptFile).
      const bool kept = outcome.verdict == kVerdictOfAKeptFile;
      SqlStatement& up =
          kept ? d.Cached("UPDATE dump_files SET reason = ?, line_count = ?, unknown_lines = ?, issue_count = ?, "
                          "rows_written = ?, module_id = ? WHERE file_id = ?")
               : d.Cached("UPDATE dump_files SET reason = ?, line_count = ?, unknown_lines = ?, issue_count = ?, "
                          "rows_written = ?, module_id = ?, verdict = ? WHERE file_id = ?");
      BindRow(up, NonEmpty(outcome.reason), outcome.line_count, outcome.unknown_lines, file.issues().total,
              file.rows(), OnlyIf(file.module_id() != 0, file.module_id()));
      int next = 7;
      if (!kept) up.Bind(next++, ingest::FileVerdictName(outcome.verdict));
      up.Bind(next, file.file_id());
      up.ExecuteLater();
      d.file_savepoint->Release();  // PostgreSQL: waits for the answers of every statement sent before
    } catch (const std::exception& e) {
      written = Status::IoError(std::string("database write failed: ") + e.what());
    }
  }
  if (!written.ok()) {
    // Roll back this file's rows only, keeping the writer (and the issues it saw) for AbortFile, which
    // records the error verdict.
    d.file_savepoint.reset();
    d.held_rows.TruncateTo(d.file_mark);
    d.created_modules.FileRolledBack();
    return written;
  }
  FileWriteStats stats{file.rows(), file.issues().total};
  d.NoteModuleWritten(file);
  d.group_runs_with_rows.insert(d.spec.run_id);
  d.file.reset();
  d.file_savepoint.reset();
  d.interned.FileDone();
  d.created_modules.FileKept();
  if (Status closed = d.CloseGroupIfDue(d.spec.size_bytes); !closed.ok()) return closed;
  return stats;
}

Status RunWriter::AbortFile(const FileOutcome& outcome) {
  Impl& d = *impl_;
  // Keep the issues seen (they explain the error), drop the rows.
  FileIssues issues = d.RollBackFile();
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);  // nothing can be recorded now
  d.interned.FileAborted();
  return RecordFile(d.spec, outcome, issues);
}

Status RunWriter::RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) {
  return RecordFile(spec, outcome, FileIssues{});
}

Status RunWriter::RecordFile(const FileSpec& spec, const FileOutcome& outcome, const FileIssues& issues) {
  Impl& d = *impl_;
  if (!d.group_failure.empty()) return Status::IoError(d.group_failure);
  // A path of a run this writer created, not written yet, has no stored version (as in BeginFile): not
  // asked, and a row another writer stored for it meanwhile stands.
  const bool unstored = d.Unstored(spec.run_id, spec.path);
  if (unstored && issues.stored.empty()) {
    // The row is all there is to write, and nothing to undo when another writer recorded the path meanwhile:
    // it goes with the group's other such rows.
    if (Status held = d.HoldLoneFileRow(spec, outcome, issues.total); !held.ok()) return held;
    d.interned.FileDone();
    return d.CloseGroupIfDue(0);
  }
  if (Status written = d.WriteLoneFileRows(); !written.ok()) return written;
  if (!unstored) {  // the replacement removes rows
    if (Status written = d.WriteHeldRows(); !written.ok()) return written;
  }
  try {
    d.OpenGroup();
    d.group_runs.insert(spec.run_id);
    Savepoint savepoint(d.sql, "file");
    // When the stored version was its module's only file (a dump replaced by an unreadable one), the module
    // goes too, so no summary outlives its rows.
    if (!unstored) {
      (void)d.replacement.RemoveStoredVersion(spec, /*drop_lone_module=*/true);
      d.created_modules.Forget();
    }
    SqlStatement& row =
        FileRowInsert(d.statements, spec, ingest::FileVerdictName(outcome.verdict), outcome, issues.total, 0);
    if (const std::optional<int64_t> fid = StoredFileId(row)) {
      WriteFileIssues(d.statements, *fid, issues);
      savepoint.Release();
      d.NoteWritten(spec);
    } else {  // another writer recorded this file meanwhile: its verdict stands
      savepoint.RollBack();
    }
  } catch (const std::exception& e) {
    return Status::IoError(std::string("recording file ") + spec.path + ": " + e.what());
  }
  d.interned.FileDone();
  return d.CloseGroupIfDue(0);
}

Status RunWriter::FinishRun(int64_t run_id, int64_t newest_mtime_us) {
  impl_->DropUnfinishedFile();  // not whole: not stored, not committed with the group
  Status closed = impl_->CloseGroup();
  if (closed.ok() && !impl_->group_failure.empty()) closed = Status::IoError(impl_->group_failure);
  try {
    // Also after a group that failed: the files stored before it are the run, which keeps the time it would
    // have had, not its ingest time until a rerun. A statement of its own, outside the rolled-back group
    // (on a full disk the space that group took is free again).
    auto up = impl_->sql.Prepare("UPDATE runs SET run_time_us = ?, run_time_source = 'newest_file_mtime' "
                                 "WHERE run_id = ? AND run_time_source IN ('ingest_time', 'newest_file_mtime')");
    BindRow(*up, newest_mtime_us, run_id);
    if (newest_mtime_us >= 0) up->Execute();
    // The texts the run's merges and replaced files left unreferenced (what its committed groups noted).
    impl_->interned.SweepReplacedTexts();
    if (!closed.ok()) return closed;
    // The WAL's pages go to the database now, once per run (wal_autocheckpoint is off while writing).
    // PASSIVE: readers are not waited for; what they still use is copied at the next run's end.
    if (impl_->db->is_sqlite()) impl_->sql.Exec("PRAGMA wal_checkpoint(PASSIVE)");
    return Status::Ok();
  } catch (const std::exception& e) {
    return closed.ok() ? Status::IoError(std::string("finishing run: ") + e.what()) : closed;
  }
}

bool RunWriter::TakeRereadRequest() {
  Impl& d = *impl_;
  if (!d.replacement.any_rebuilt() || !d.group_failure.empty()) return false;
  // The second pass reads dump_files and removes the rebuilt modules' rows; FinishRun says why it failed.
  if (!d.WriteLoneFileRows().ok() || !d.WriteHeldRows().ok()) return false;
  d.created_modules.Forget();
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
  // The lone rows held go first: with the run's row locked and theirs not yet inserted, another writer could
  // take their paths and then wait for the run's row (a deadlock on PostgreSQL).
  if (Status written = d.WriteLoneFileRows(); !written.ok()) return written;
  try {
    d.OpenGroup();
    Savepoint savepoint(d.sql, "meta");
    PutRunLabels(d.sql, run_id, labels);
    if (time_us >= 0) {
      auto up = d.sql.Prepare("UPDATE runs SET run_time_us = ?, run_time_source = 'run_file' "
                           "WHERE run_id = ? AND run_time_source <> 'flag'");
      BindRow(*up, time_us, run_id);
      up->Execute();
    }
    savepoint.Release();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("applying the run metadata file: ") + e.what());
  }
}

}  // namespace xladb::store
