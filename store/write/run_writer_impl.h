// RunWriter's state, private to store/write/: run_writer.cc writes runs and files with it, run_writer_group.cc
// keeps the group transaction many files share (open, held rows, commit, roll back).
//
// Contract: the RunWriter's own; one thread at a time. The group's methods return a Status and leave the group
// rolled back when they fail (group_failure then says why, and every later call fails with it); the others
// throw SqlError where the RunWriter's methods catch it.
#ifndef XLADB_STORE_WRITE_RUN_WRITER_IMPL_H_
#define XLADB_STORE_WRITE_RUN_WRITER_IMPL_H_

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/backend/bulk_batch.h"
#include "store/backend/held_bulk_rows.h"
#include "store/backend/statement_cache.h"
#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "store/write/created_modules.h"
#include "store/write/file_replacement.h"
#include "store/write/file_rows.h"
#include "store/write/file_writer.h"
#include "store/write/run_writer.h"

namespace xladb::store {

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
  void NoteModuleWritten(const FileWriter& f);
  // Computes the derived facts of the modules the group wrote (inside its transaction, before COMMIT).
  void UpdatePendingModules();
  void ForgetPendingModules();
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
  Status WriteHeldRows();

  // Rolls the open file's savepoint back (its rows go) and drops its writer; the issues it saw are returned.
  FileIssues RollBackFile();
  // Drops a file begun and neither committed nor aborted (its caller threw in the middle of it: a bug,
  // std::bad_alloc): its rows and its dump_files row go, nothing is recorded, so a rerun reads it again.
  void DropUnfinishedFile();

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
  Status HoldLoneFileRow(const FileSpec& s, const FileOutcome& outcome, int64_t issue_count);
  // Writes the lone rows held; on failure rolls the group back and remembers why.
  Status WriteLoneFileRows();
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

  // Opens the group's transaction unless it is open (throws SqlError).
  void OpenGroup();
  // Commits the open group; on failure rolls it back and remembers why (group_failure).
  Status CloseGroup();
  // Rolls the open group back after `doing` its files failed, and remembers why: every later call fails
  // with it (the run ends; nothing half-stored).
  Status FailGroup(std::string_view doing, const std::exception& e);
  // Abandons the open group: its files are gone, and with them the run summaries and interned ids it held.
  void RollBackGroup();
  // Counts a file into the open group and commits the group once it is due.
  Status CloseGroupIfDue(int64_t file_bytes);

  // The connection interned texts are written on: the writer's own on SQLite; on PostgreSQL a second one
  // (run_writer.cc says why it commits on its own).
  Status OpenInternedTexts();
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_RUN_WRITER_IMPL_H_
