// RunWriter: the RecordSink that stores parsed records in the database, each dump file atomically, files
// committed in groups (up to 100 ms or 64 MiB of files per transaction, each file in a savepoint).
//
// Usage (the ingest driver does this):
//   RunWriter w(db);
//   auto run = w.BeginRun(spec);                        // find or create the run, apply labels
//   switch (w.CheckFile(run, path, hash)) { … }         // unchanged files are skipped
//   w.BeginFile(file_spec);                              // SAVEPOINT (in the group's transaction); replaces an
//                                                        // older version of the file
//   parser(&w) … ;                                       // records arrive through the RecordSink methods
//   w.CommitFile(outcome) or w.AbortFile(outcome)        // RELEASE all rows + verdict, or ROLLBACK TO + error verdict
//   w.FinishRun(run, newest_mtime_us)                    // COMMIT the group, checkpoint the WAL
//
// Contract
//   * Atomicity: a file's rows and its dump_files row are committed together, with the other files of its
//     group. A crash before the group's COMMIT leaves nothing of those files (SQLite rolls the WAL back) and a
//     rerun stores them; AbortFile() rolls the file back to its savepoint and records the error verdict. A
//     group whose COMMIT fails makes every later call fail with why (the run ends; nothing half-stored).
//   * The WAL is checkpointed by FinishRun (PASSIVE), not during a run: wal_autocheckpoint is 0 while the
//     writer lives on the connection.
//   * Idempotence: CheckFile() compares the content hash with the stored one; the same content again is
//     kUnchanged and writes nothing. A changed file (same path, new hash) replaces the rows of the old one.
//   * Merging: values, instructions and live ranges of one module may arrive in several files (the 2026
//     split format, HLO text next to its buffer assignment); rows are merged by key, never duplicated. A
//     merged row has one file_id, so replacing one of such a module's files cannot remove just that file's
//     part: the module's rows are removed whole, its other files marked to be read again
//     (TakeRereadRequest), and the driver's second pass rebuilds the module from all of them.
//   * Errors are returned as Status; a database error inside a record callback is remembered and returned
//     by CommitFile(). The writer owns no thread; use it from one thread. Not copyable.
#ifndef XLADB_STORE_RUN_WRITER_H_
#define XLADB_STORE_RUN_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingest/ingest_target.h"
#include "ingest/status.h"
#include "store/database.h"

namespace xladb::store {

using ingest::FileOutcome;
using ingest::FileSpec;
using ingest::FileWriteStats;
using ingest::ModuleKey;
using ingest::RunSpec;

// When the files of a group are committed: after max_seconds since the group's first file, or once its files
// hold max_bytes (whichever comes first). {0, 0} commits every file on its own.
struct GroupCommit {
  double max_seconds = 0.1;
  int64_t max_bytes = int64_t{64} << 20;
};

class RunWriter : public ingest::IngestTarget {
 public:
  explicit RunWriter(Database* db, GroupCommit group = {});
  ~RunWriter() override;
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  // IngestTarget
  StatusOr<int64_t> BeginRun(const RunSpec& spec) override;
  StatusOr<FileState> CheckFile(int64_t run_id, const std::string& path, const std::string& content_hash) override;
  Status BeginFile(const FileSpec& spec) override;
  StatusOr<FileWriteStats> CommitFile(const FileOutcome& outcome) override;
  // Rolls back the file's rows and records the error verdict (with the issues seen) on its own.
  Status AbortFile(const FileOutcome& outcome) override;
  // Records a file that has no rows (not ingested) in a transaction of its own.
  Status RecordFileWithoutRows(const FileSpec& spec, const FileOutcome& outcome) override;
  // Sets the run's time from the newest file mtime when --time did not give one.
  Status FinishRun(int64_t run_id, int64_t newest_mtime_us) override;
  bool TakeRereadRequest() override;
  // Sets the labels, and the run time (run_time_source 'run_file') unless a flag set it, in one transaction.
  Status ApplyRunMetadata(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& labels,
                          int64_t time_us) override;

  // RecordSink
  void OnAllocation(ingest::AllocationRecord&&) override;
  void OnAllocatedValue(ingest::AllocatedValueRecord&&) override;
  void OnCrossColorReuse(ingest::CrossColorReuseRecord&&) override;
  void OnTotalBytes(ingest::TotalBytesRecord&&) override;
  void OnValueDetail(ingest::ValueDetailRecord&&) override;
  void OnInstruction(ingest::InstructionRecord&&) override;
  void OnComputation(ingest::ComputationRecord&&) override;
  void OnHloModule(ingest::HloModuleRecord&&) override;
  void OnLiveRangeHeader(ingest::LiveRangeHeaderRecord&&) override;
  void OnScheduleEntry(ingest::ScheduleEntryRecord&&) override;
  void OnLiveRange(ingest::LiveRangeRecord&&) override;
  void OnPeakMoment(ingest::PeakMomentRecord&&) override;
  void OnPeakBuffer(ingest::PeakBufferRecord&&) override;
  void OnStackTraceHeader(ingest::StackTraceHeaderRecord&&) override;
  void OnStackTraceNode(ingest::StackTraceNodeRecord&&) override;
  void OnMemoryReportTotal(ingest::MemoryReportTotalRecord&&) override;
  void OnMemoryReportRow(ingest::MemoryReportRowRecord&&) override;
  void OnMemoryReportOmitted(ingest::MemoryReportOmittedRecord&&) override;
  void OnUtilizationBlock(ingest::UtilizationBlockRecord&&) override;
  void OnUtilizationCounter(ingest::UtilizationCounterRecord&&) override;
  void OnOomStat(ingest::OomStatRecord&&) override;
  void OnOomBuffer(ingest::OomBufferRecord&&) override;
  void OnIssue(ingest::IssueRecord&&) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_RUN_WRITER_H_
