#include "store/write/run_writer.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/backend/held_bulk_rows.h"
#include "store/backend/row_binding.h"
#include "store/write/created_modules.h"
#include "store/write/file_replacement.h"
#include "store/write/file_rows.h"
#include "store/write/run_rows.h"
#include "store/write/rows/file_context.h"
#include "store/write/file_writer.h"
#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "store/facts/run_labels.h"
#include "store/facts/run_summary.h"
#include "store/backend/statement_cache.h"
#include "base/unix_time.h"

namespace xladb::store {

namespace {

// The dump_files row of a file whose rows are being written (BeginFile) has the verdict CommitFile gives a
// file it keeps, and rows_written NULL until then: CommitFile's update then changes no indexed column
// (dump_files_by_run_verdict stays as it is; PostgreSQL updates the row in place, a HOT update, where it was a
// new entry in each of the table's three indexes). The row is released with the file, so no reader sees it
// unfinished (the tests look for a NULL rows_written left behind).
constexpr ingest::FileVerdict kVerdictOfAKeptFile = ingest::FileVerdict::kIngested;

}  // namespace

double NextGroupSeconds(const GroupCommit& group, double recount_seconds) {
  if (group.max_seconds <= 0) return group.max_seconds;
  const double stretched = std::min(recount_seconds * kGroupSecondsPerRecountSecond, group.max_stretched_seconds);
  return std::max(group.max_seconds, stretched);
}

struct RunWriter::Impl {
  explicit Impl(Database* database)
      : db(database), sql(database->connection()), statements(database->connection()),
        derived_facts(database->connection()) {}

  Database* db;
  SqlConnection& sql;
  std::unique_ptr<Database> texts_db;  // PostgreSQL: the interned texts' own connection (InternedTextCaches)
  StatementCache statements;         // outlives files: statements are prepared once per writer
  InternedTextCaches interned;       // outlives files; entries added inside a rolled-back file or group go
  DerivedModuleFacts derived_facts;  // recomputed when a file changed what they are computed from

  // The modules the open group's committed files wrote, in the order they were first written, each with
  // its files' facts merged (MergeLaterFile): their derived facts are computed once at the group's COMMIT,
  // not once a file (a module's buffer assignment, HLO text and memory report mostly share a group).
  std::vector<ModuleFiles> pending_modules;
  std::unordered_map<int64_t, size_t> pending_index;  // module_id -> its place in pending_modules
  void NoteModuleWritten(const FileWriter& f) {
    if (f.module_id() == 0) return;
    auto [it, added] = pending_index.try_emplace(f.module_id(), pending_modules.size());
    if (added) {
      pending_modules.push_back({f.run_id(), f.module_id(), f.module_is_new(), f.facts()});
      return;
    }
    ModuleFiles& m = pending_modules[it->second];
    m.module_is_new |= f.module_is_new();
    MergeLaterFile(m.facts, f.facts());
  }
  // Computes the derived facts of the modules the group wrote (inside its transaction, before COMMIT).
  void UpdatePendingModules() {
    derived_facts.UpdateAfterFiles(pending_modules);
    ForgetPendingModules();
  }
  void ForgetPendingModules() {
    pending_modules.clear();
    pending_index.clear();
  }
  FileReplacement replacement{&statements, &interned};  // a changed file's old rows, and the modules they shared

  SqlStatement& Cached(const char* text) { return statements.Get(text); }

  // The open file: its writer lives from BeginFile to CommitFile or AbortFile, inside its savepoint (ended
  // already when a CommitFile failed: AbortFile follows).
  std::unique_ptr<FileWriter> file;
  std::optional<Savepoint> file_savepoint;
  FileSpec spec;  // of the file begun last (AbortFile records it, also after a failed BeginFile)

  // On PostgreSQL, the rows of the group's small files (up to kHeldFileBytes) that nothing reads before the
  // group ends (store/backend/held_bulk_rows.h), written a statement a table: before a bigger file (its rows
  // go as it goes, and a later file's rows must land after earlier ones), before a replacement or the second
  // pass removes rows, once kMaxHeldRows are held, and at the COMMIT; always outside a file's savepoint. A
  // file rolled back drops its own (file_mark: where they stood when it began).
  static constexpr int64_t kHeldFileBytes = int64_t{1} << 20;
  static constexpr size_t kMaxHeldRows = size_t{1} << 14;
  // Whether files' rows are held: a PostgreSQL store that keeps UTF-8 as it is (server and client encoding
  // UTF8; BulkBatch tells the texts it would refuse by UTF-8's rules), asked once by the constructor.
  bool holds_rows = false;
  HeldBulkRows held_rows;
  HeldBulkRows::Mark file_mark;
  // Writes the rows held; on failure rolls the group back and remembers why.
  Status WriteHeldRows() {
    return held_rows.empty() ? Status::Ok() : WriteOrFailGroup([&] { held_rows.Write(sql); });
  }

  // Rolls the open file's savepoint back (its rows go) and drops its writer; the issues it saw are returned.
  FileIssues RollBackFile() {
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
  // Drops a file begun and neither committed nor aborted (its caller threw in the middle of it: a bug,
  // std::bad_alloc): its rows and its dump_files row go, nothing is recorded, so a rerun reads it again.
  void DropUnfinishedFile() {
    if (!file) return;
    (void)RollBackFile();
    interned.FileAborted();
  }

  // Group commit: files share one transaction until group_seconds or group.max_bytes of files have gone by, each
  // file inside a savepoint of its own (rolled back alone when it fails). A crash loses the open group only,
  // whole files all of them, and a rerun ingests them again.
  GroupCommit group;
  double group_seconds = 0;  // how long the open group may last: group.max_seconds at the start of a run (the
                             // constructor, BeginRun), NextGroupSeconds after each COMMIT
  bool in_group = false;
  std::chrono::steady_clock::time_point group_started;
  int64_t group_bytes = 0, group_files = 0;
  std::string group_failure;  // set when a group's COMMIT failed: its files are gone; the run must stop
  std::set<int64_t> group_runs;  // runs with files in the open group: their summaries are recounted at COMMIT
  std::set<int64_t> group_runs_with_rows;  // …and those whose files committed rows: updated_at_us, at COMMIT

  // The run BeginRun created (0: it found one): no file of it was stored before this ingest, so a path this
  // writer has not stored in it needs no lookup (CheckFile, the replacement's) to know it is new. A file
  // another writer stores there meanwhile still meets FileRowInsert's conflict (CheckOtherWritersFile).
  int64_t created_run = 0;
  // The paths this writer wrote to it (a file rolled back after stays: looked up again, as any other's).
  std::unordered_set<std::string> created_run_paths;
  bool Unstored(int64_t run_id, const std::string& path) const {
    return run_id == created_run && created_run != 0 && created_run_paths.count(path) == 0;
  }
  void NoteWritten(const FileSpec& s) {
    if (s.run_id == created_run) created_run_paths.insert(s.path);
  }
  // The modules this writer created in that run, by key (ids without a lookup); forgotten when a stored file
  // is replaced or modules are rebuilt, since either may remove a module.
  CreatedModules created_modules;
  bool InCreatedRun(int64_t run_id) const { return run_id == created_run && created_run != 0; }

  // The dump_files rows of the open group's files that write nothing else (RecordFile of an unstored path,
  // without issues: most of a run's files that are not memory data), written together (AddLoneFileRow)
  // before the next file that writes more begins (so file ids keep the walk's order), before a lookup of a
  // stored path, and at the COMMIT (the run summaries count them). They had a savepoint and an insert each
  // (on PostgreSQL a round trip a file). Only rows of the run this writer created, at paths not stored
  // before: no replacement, no lookup misses them. A batch that fails to be written fails its group, as its
  // COMMIT would: the files it held were acknowledged with the group's others, and are lost with them only
  // together (a rerun stores them).
  BulkBatch lone_file_rows{&kLoneFileRowInsert};
  bool lone_file_rows_held = false;
  // Adds a lone file's row to the batch (written once it is full), inside the open group.
  Status HoldLoneFileRow(const FileSpec& s, const FileOutcome& outcome, int64_t issue_count) {
    try {
      OpenGroup();
      group_runs.insert(s.run_id);
      lone_file_rows_held = true;
      AddLoneFileRow(lone_file_rows, sql, s, ingest::FileVerdictName(outcome.verdict), outcome, issue_count);
      NoteWritten(s);
      return Status::Ok();
    } catch (const std::exception& e) {
      return FailGroup("writing", e);
    }
  }
  // Writes the lone rows held; on failure rolls the group back and remembers why.
  Status WriteLoneFileRows() {
    if (!lone_file_rows_held) return Status::Ok();
    return WriteOrFailGroup([&] {
      (void)lone_file_rows.Flush(sql);
      lone_file_rows_held = false;
    });
  }
  // Runs `write`, which writes rows the open group holds; on failure rolls the group back and remembers why.
  template <typename Write>
  Status WriteOrFailGroup(Write&& write) {
    try {
      write();
      return Status::Ok();
    } catch (const std::exception& e) {
      return FailGroup("writing", e);
    }
  }

  void OpenGroup() {
    if (in_group) return;
    sql.BeginWrite();
    try {
      // Before the group looks up any interned text: ids kept from earlier groups whose rows another
      // connection removed meanwhile are forgotten, and none is removed until the group ends.
      interned.BeginTransaction(sql, statements);
    } catch (...) {
      RollBackGroup();  // the transaction too (a lock refused on PostgreSQL aborts it), not left open
      throw;
    }
    in_group = true;
    group_started = std::chrono::steady_clock::now();
    group_bytes = group_files = 0;
  }
  // Commits the open group; on failure rolls it back and remembers why (group_failure).
  Status CloseGroup() {
    if (!in_group) return Status::Ok();
    in_group = false;
    try {
      if (lone_file_rows_held) (void)lone_file_rows.Flush(sql);  // the run summaries count them
      lone_file_rows_held = false;
      held_rows.Write(sql);  // the derived facts read them
      UpdatePendingModules();  // before the runs' summaries, whose module count reads module_summary
      // Timed for the next group's length (on PostgreSQL with the answers still owed to statements sent
      // before it, which the recount's own answer waits for: an overestimate, bounded by the stretch's limit).
      const auto recount_started = std::chrono::steady_clock::now();
      for (int64_t run_id : group_runs) UpdateRunSummary(statements, run_id);
      group_seconds = NextGroupSeconds(
          group, std::chrono::duration<double>(std::chrono::steady_clock::now() - recount_started).count());
      group_runs.clear();
      // Once a group, not once a file (a statement per file was 1 in 25 of a small file's): readers see the
      // group's files and this time together, at the COMMIT.
      for (int64_t run_id : group_runs_with_rows) {
        SqlStatement& run = Cached("UPDATE runs SET updated_at_us = ? WHERE run_id = ?");
        BindRow(run, UnixMicrosNow(), run_id);
        run.Execute();
      }
      group_runs_with_rows.clear();
      sql.Exec("COMMIT");
      interned.GroupCommitted();
      created_modules.GroupCommitted();
      return Status::Ok();
    } catch (const std::exception& e) {
      return FailGroup("committing", e);
    }
  }
  // Rolls the open group back after `doing` its files failed, and remembers why: every later call fails
  // with it (the run ends; nothing half-stored).
  Status FailGroup(std::string_view doing, const std::exception& e) {
    RollBackGroup();
    group_failure = std::string(doing) + " the last " + std::to_string(group_files) +
                    " files failed, so they are not stored (a rerun ingests them): " + e.what();
    return Status::IoError(group_failure);
  }
  // Abandons the open group: its files are gone, and with them the run summaries and interned ids it held.
  void RollBackGroup() {
    try {
      sql.Exec("ROLLBACK");
    } catch (...) {
    }
    in_group = false;
    group_runs.clear();
    group_runs_with_rows.clear();
    lone_file_rows = BulkBatch(&kLoneFileRowInsert);
    lone_file_rows_held = false;
    held_rows.Clear();
    created_modules.GroupRolledBack();
    ForgetPendingModules();
    interned.GroupAborted();
  }
  Status CloseGroupIfDue(int64_t file_bytes) {
    group_bytes += file_bytes;
    ++group_files;
    const double open_for =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - group_started).count();
    return open_for >= group_seconds || group_bytes >= group.max_bytes ? CloseGroup() : Status::Ok();
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
  Status OpenInternedTexts() {
    if (interned.connection != nullptr) return Status::Ok();
    if (!db->is_sqlite()) {
      auto texts = Database::Open(db->path());
      if (!texts.ok()) return texts.status();
      texts_db = std::move(texts.value());
      try {
        texts_db->connection().Exec("SET synchronous_commit = off");
      } catch (const SqlError& e) {
        return Status::IoError(std::string("the interned texts' connection: ") + e.what());
      }
    }
    interned.connection = texts_db ? &texts_db->connection() : &sql;
    return Status::Ok();
  }
};

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
