// FileContext: what the row mappers of one dump file share while its records arrive: where rows go (the
// writer's statements and interned texts), which run, file and module they belong to, how many were written,
// the issues seen, and the facts the module's derived rows are computed from (store/facts/module_facts.h).
//
// The mappers, one per record family, each with a header that maps records to tables:
//   store/write/rows/buffer_assignment_rows.h  allocations, buffer_values
//   store/write/rows/live_range_rows.h         schedule, buffer_live_ranges, peak_buffers, stack_trace_nodes
//   store/write/rows/hlo_module_rows.h         instructions, computations, long_texts, the module header (facts)
//   store/write/rows/report_rows.h             memory_report_*, utilization_counters, oom_*
//
// Contract: owned by the file's FileWriter and dies with it. Database errors inside a record callback are
// caught by Guard() and remembered as the first `error` (records after it are dropped); the writer returns it
// at commit and rolls the file back. Not thread-safe: one file, one thread.
#ifndef XLADB_STORE_WRITE_ROWS_FILE_CONTEXT_H_
#define XLADB_STORE_WRITE_ROWS_FILE_CONTEXT_H_

#include "store/backend/sql_connection.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ingest/records/records.h"
#include "base/status.h"
#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "store/backend/bulk_batch.h"
#include "store/backend/statement_cache.h"
#include "store/write/rows/first_seen_ids.h"

namespace xladb::store {

using ingest::IssueRecord;

// The issues of one file: the first kMaxStored are kept for ingest_issues, all are counted.
struct FileIssues {
  static constexpr size_t kMaxStored = 1000;
  std::vector<IssueRecord> stored;
  int64_t total = 0;

  void Add(IssueRecord&& issue) {
    ++total;
    if (stored.size() < kMaxStored) stored.push_back(std::move(issue));
  }
  void Add(IssueRecord::Severity severity, int64_t line, std::string reason) {
    IssueRecord r;
    r.severity = severity;
    r.line = line;
    r.reason = std::move(reason);
    Add(std::move(r));
  }
};

struct FileContext {
  FileContext(StatementCache* statements, InternedTextCaches* interned, HeldBulkRows* held, int64_t run,
              int64_t file, int64_t module, bool new_module, bool named_by_number)
      : run_id(run), file_id(file), module_id(module), module_is_new(new_module),
        module_named_by_number(named_by_number), held_rows(held), statements_(statements), interned_(interned) {}

  SqlConnection& sql() { return statements_->sql(); }
  // Ends `batch`'s row of this module whose key id is `id`, counting the rows written: vouched new (the batch
  // may go without its conflict clause, BulkBatch::Keys::kNew) when this file created the module and `written`
  // sees the id for the first time.
  void EndModuleRow(BulkBatch& batch, FirstSeenIds& written, int64_t id) {
    const bool is_new = module_is_new && written.Claim(id);
    rows += batch.EndRow(sql(), is_new ? BulkBatch::Keys::kNew : BulkBatch::Keys::kMayExist);
  }
  // A cached statement (store/backend/statement_cache.h): `text` must have static storage.
  SqlStatement& Statement(const char* text) { return statements_->Get(text); }
  StatementCache& statements() { return *statements_; }
  int64_t ShapeId(const std::string& text) { return interned_->shapes.Id(*interned_->connection, text); }
  int64_t SourceFileId(const std::string& path) { return interned_->source_files.Id(*interned_->connection, path); }
  int64_t NameId(const std::string& name) { return interned_->names.Id(*interned_->connection, name); }
  // The ids of names, a batch at a time (InternedTexts::Ids).
  void NameIds(std::span<const std::string> names, std::span<int64_t> ids) {
    interned_->names.Ids(*interned_->connection, names, ids);
  }
  // The ids of whole instruction texts, a batch at a time (InternedTexts::Ids); returns how many were new.
  int64_t LongTextIds(std::vector<LongText> texts, std::span<int64_t> ids) {
    return interned_->long_texts.Ids(*interned_->connection, std::move(texts), ids);
  }
  // A merge replaced an instruction's whole text `text_id` (InternedTextCaches::TextReplaced).
  void LongTextReplaced(int64_t text_id) { interned_->TextReplaced(text_id); }

  // Runs `fn` unless an error was seen, turning a database exception into the remembered error.
  template <typename Fn>
  void Guard(Fn&& fn) {
    if (!error.ok()) return;
    try {
      fn();
    } catch (const std::exception& e) {
      error = Status::IoError(std::string("database write failed: ") + e.what());
    }
  }

  const int64_t run_id;
  const int64_t file_id;
  const int64_t module_id;   // 0: the file's rows belong to no module
  const bool module_is_new;  // created by this file: no rows of it are stored yet
  // The file's module key names it `module_<ID>` (ModuleKey::name_is_placeholder, or a module so named): its
  // row may have the placeholder name, which the HloModule line replaces.
  const bool module_named_by_number;
  // Where the batches of the tables nothing reads before the group ends hand their rows (BulkBatch::HoldIn,
  // store/backend/held_bulk_rows.h): the schedule, live ranges, peak list, computations, memory-report
  // totals and rows, utilization counters; nullptr: the file's rows are written as it goes (a big file, SQLite).
  HeldBulkRows* const held_rows;
  int64_t rows = 0;          // rows written
  FileIssues issues;
  FileFacts facts;
  Status error;              // the first database error

 private:
  StatementCache* statements_;
  InternedTextCaches* interned_;
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_ROWS_FILE_CONTEXT_H_
