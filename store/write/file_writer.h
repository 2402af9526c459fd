// FileWriter: the RecordSink that stores one dump file's records. RunWriter::BeginFile creates it inside the
// file's savepoint, with the file's dump_files row and module already found; it dies at the file's commit or
// abort, and with it everything the file held (values waiting for their block, batched rows, issues).
//
// Each record goes to the row mapper of its family (chosen at compile time; a record type no mapper takes
// does not compile):
//   store/write/rows/buffer_assignment_rows.h  Allocation, AllocatedValue, CrossColorReuse, TotalBytes, ValueDetail
//   store/write/rows/live_range_rows.h         LiveRangeHeader, ScheduleEntry, LiveRange, PeakMoment, PeakBuffer,
//                                   StackTraceHeader, StackTraceNode
//   store/write/rows/hlo_module_rows.h         Instruction, Computation, HloModule
//   store/write/rows/report_rows.h             MemoryReport*, Utilization*, Oom*
//   Issue                           this file's ingest_issues (FileIssues)
//
// Contract: records may arrive in any order the parsers produce; Finish() then writes what waited for the
// file's end; facts() is what the module's derived facts (store/facts/module_facts.h) are then computed from,
// by the caller (RunWriter: once a module a group). Database errors do not escape a record
// callback: the first is remembered and returned by Finish(), and the caller rolls the file back. Uses the
// caller's connection and transaction, and borrows the statement cache and interned texts, which must outlive
// it. Not thread-safe: one file, one thread.
#ifndef XLADB_STORE_WRITE_FILE_WRITER_H_
#define XLADB_STORE_WRITE_FILE_WRITER_H_

#include <cstdint>

#include "ingest/records/record_list.h"
#include "ingest/records/record_sink.h"
#include "base/status.h"
#include "store/write/rows/buffer_assignment_rows.h"
#include "store/write/rows/file_context.h"
#include "store/write/rows/hlo_module_rows.h"
#include "store/facts/interned_texts.h"
#include "store/write/rows/live_range_rows.h"
#include "store/facts/module_facts.h"
#include "store/write/rows/report_rows.h"
#include "store/backend/statement_cache.h"

namespace xladb::store {

class FileWriter : public ingest::RecordSink {
 public:
  // `facts` starts with what replacing the file's stored version changed (its rows and counters went).
  // `module_named_by_number`: the file's module key names it `module_<ID>` (FileContext::module_named_by_number).
  // `held_rows`: FileContext::held_rows (nullptr: the file's rows are written as it goes).
  FileWriter(StatementCache* statements, InternedTextCaches* interned, HeldBulkRows* held_rows, int64_t run_id,
             int64_t file_id, int64_t module_id, bool module_is_new, bool module_named_by_number,
             const FileFacts& facts);
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

#define XLADB_FILE_WRITER_METHOD(Name, plural) void On##Name(ingest::Name##Record&& r) override;
  XLADB_RECORD_TYPES(XLADB_FILE_WRITER_METHOD)
#undef XLADB_FILE_WRITER_METHOD

  // Writes the rows that wait for the file's end; returns the first database error of the file (then nothing
  // more is written).
  [[nodiscard]] Status Finish();

  int64_t file_id() const { return file_.file_id; }
  int64_t run_id() const { return file_.run_id; }
  int64_t module_id() const { return file_.module_id; }  // 0: the file names none
  bool module_is_new() const { return file_.module_is_new; }  // the file created its module
  const FileFacts& facts() const { return file_.facts; }    // complete once Finish() has run
  int64_t rows() const { return file_.rows; }
  FileIssues& issues() { return file_.issues; }

 private:
  template <typename Record>
  void Route(Record&& r);

  FileContext file_;
  BufferAssignmentRows buffer_assignment_;
  LiveRangeRows live_ranges_;
  HloModuleRows hlo_module_;
  ReportRows reports_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_FILE_WRITER_H_
