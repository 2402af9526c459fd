// RunWriter: the IngestTarget that stores runs in the database, each dump file atomically, files committed in
// groups (up to 100 ms, longer on big runs: GroupCommit below; or 64 MiB of files per transaction, each file in
// a savepoint). It keeps what outlives a file (the transaction, prepared statements, interned texts, the
// rebuild of modules whose files were replaced); each file's records go to a FileWriter
// (store/write/file_writer.h) that lives from BeginFile to the file's commit or abort. The derived facts of
// the modules a group's files wrote (store/facts/module_facts.h) are computed once a module, from those files'
// facts merged, just before the group's COMMIT.
//
// Usage (the ingest driver does this):
//   RunWriter w(db);
//   auto run = w.BeginRun(spec);                        // find or create the run, apply labels
//   switch (w.CheckFile(run, path, hash)) { … }         // unchanged files are skipped
//   auto sink = w.BeginFile(file_spec);                  // SAVEPOINT (in the group's transaction); replaces an
//                                                        // older version of the file
//   parser(*sink) … ;                                    // records arrive through the file's RecordSink
//   w.CommitFile(outcome) or w.AbortFile(outcome)        // RELEASE all rows + verdict, or ROLLBACK TO + error verdict
//   w.FinishRun(run, newest_mtime_us)                    // COMMIT the group, checkpoint the WAL
//
// Contract
//   * Atomicity: a file's rows and its dump_files row are committed together, with the other files of its
//     group. A crash before the group's COMMIT leaves nothing of those files (SQLite rolls the WAL back) and a
//     rerun stores them; AbortFile() rolls the file back to its savepoint and records the error verdict. A
//     group whose COMMIT (or the derived facts before it) fails makes every later call fail with why (the
//     run ends; nothing half-stored).
//   * The WAL is checkpointed by FinishRun (PASSIVE), not during a run: wal_autocheckpoint is 0 while the
//     writer lives on the connection.
//   * Idempotence: CheckFile() compares the content hash with the stored one; the same content again is
//     kUnchanged and writes nothing. A changed file (same path, new hash) replaces the rows of the old one.
//   * Merging: values, instructions and live ranges of one module may arrive in several files (the 2026
//     split format, HLO text next to its buffer assignment); rows are merged by key, never duplicated. A
//     merged row has one file_id, so replacing one of such a module's files cannot remove just that file's
//     part: the module's rows are removed whole, its other files marked to be read again
//     (TakeRereadRequest), and the driver's second pass rebuilds the module from all of them.
//   * Modules named by number only: a file name without the module's name (`module_0000.<suffix>`, 2020-era
//     TensorFlow dumps) gives the placeholder name `module_0` (ModuleKey::name_is_placeholder). Such a file
//     finds its module by (run, stage, xla_module_id, folder) whatever the row's name, so the module's
//     buffer assignment, HLO text and reports land on one row in any order; a new row takes the name
//     another stage of the same number already has, else the placeholder; the HLO text renames a row that
//     still has the placeholder after its `HloModule` line (store/write/rows/hlo_module_rows.cc), and the identity
//     key follows.
//   * Errors are returned as Status; a database error inside a record callback is remembered and returned
//     by CommitFile(). The writer owns no thread; use it from one thread. Not copyable. The sink BeginFile
//     returns belongs to the writer and is valid until CommitFile or AbortFile.
#ifndef XLADB_STORE_WRITE_RUN_WRITER_H_
#define XLADB_STORE_WRITE_RUN_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingest/records/ingest_target.h"
#include "base/status.h"
#include "store/backend/database.h"

namespace xladb::store {

struct FileIssues;  // store/write/rows/file_context.h

using ingest::FileOutcome;
using ingest::FileSpec;
using ingest::FileWriteStats;
using ingest::ModuleKey;
using ingest::RunSpec;

// When the files of a group are committed: once it has been open for its length (max_seconds, stretched as
// below) since its first file, or once its files hold max_bytes (whichever comes first). {0, 0} commits every
// file on its own.
//
// A group's COMMIT recounts the summary of its runs (store/facts/run_summary.h), a read of every dump_files
// row of the run: its cost grows with the run, so a fixed group length made a big run's recounts grow with
// the square of its files (a 20,000-file run into PostgreSQL: 15-25 ms a group at its end, 13 s of its 127 s).
// A group therefore stays open at least kGroupSecondsPerRecountSecond times as long as the last recount took
// (about 2% of the time), up to max_stretched_seconds (past that the share grows again: a recount of 125 ms
// would be 6%); never shorter than max_seconds. Each run starts at max_seconds. On PostgreSQL the recount's
// time includes the wait for the answers to the group's derived facts, sent before it without waiting, so
// groups there stretch from runs of a few thousand files (the real run folder of docs/PERFORMANCE.md: 17
// groups instead of 49).
struct GroupCommit {
  double max_seconds = 0.1;
  int64_t max_bytes = int64_t{64} << 20;
  double max_stretched_seconds = 2.0;
};

inline constexpr double kGroupSecondsPerRecountSecond = 50;

// How long the next group may stay open when the last COMMIT's run summaries took `recount_seconds`:
// max_seconds, stretched as above. {0, 0, …} stays 0 (every file its own group).
[[nodiscard]] double NextGroupSeconds(const GroupCommit& group, double recount_seconds);

class RunWriter : public ingest::IngestTarget {
 public:
  explicit RunWriter(Database* db, GroupCommit group = {});
  ~RunWriter() override;
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  // IngestTarget
  StatusOr<int64_t> BeginRun(const RunSpec& spec) override;
  StatusOr<FileState> CheckFile(int64_t run_id, const std::string& path, const std::string& content_hash) override;
  StatusOr<ingest::RecordSink*> BeginFile(const FileSpec& spec) override;
  StatusOr<FileWriteStats> CommitFile(const FileOutcome& outcome) override;
  // Rolls back the file's rows and records the error verdict (with the issues seen) on its own.
  Status AbortFile(const FileOutcome& outcome) override;
  // Records a file that has no rows (not ingested) in a transaction of its own.
  Status RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) override;
  // Sets the run's time from the newest file mtime when --time did not give one. A file begun and neither
  // committed nor aborted (its caller threw) is dropped first, as BeginRun also does: not stored, not recorded.
  Status FinishRun(int64_t run_id, int64_t newest_mtime_us) override;
  bool TakeRereadRequest() override;
  // How long the open group (or the next) may stay open, in seconds: GroupCommit::max_seconds when a run
  // begins, NextGroupSeconds after each COMMIT. For diagnostics and tests; changes nothing.
  [[nodiscard]] double group_seconds() const;
  // Sets the labels, and the run time (run_time_source 'run_file') unless a flag set it, in one transaction.
  Status ApplyRunMetadata(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels,
                          int64_t time_us) override;

 private:
  // Records a file's verdict without rows (replacing a stored version), with the issues seen.
  Status RecordFile(const FileSpec& spec, const FileOutcome& outcome, const FileIssues& issues);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_RUN_WRITER_H_
