#include "store/write/rows/report_rows.h"

#include <cstdio>
#include <string>
#include <utility>

#include "store/backend/row_binding.h"

namespace xladb::store {
namespace {

// A report prints hundreds of rows a file and a TPU bundle profile thousands of counters: both go by bulk
// append (one statement a batch, not one a row). Their keys start with the file's id, new for every file (its
// old version's rows are gone), so a row meets no stored one: every row is vouched new (BulkBatch::Keys::kNew),
// and the conflict clause, which names the key, is never sent.
const BulkInsert kTotalInsert{"memory_report_totals", "file_id, memory_space, module_id, total_bytes",
                               "ON CONFLICT(file_id, memory_space) DO NOTHING", 2};
const BulkInsert kReportRowInsert{
    "memory_report_rows",
    "file_id, ordinal, module_id, section, allocation_index, memory_space, memory_space_name, table_ordinal, "
    "cumulative_bytes_approx, cumulative_percent, remaining_bytes_approx, size_bytes_approx, offset_bytes, "
    "value_count, shapes",
    "ON CONFLICT(file_id, ordinal) DO NOTHING", 2};
const BulkInsert kCounterInsert{
    "utilization_counters",
    "file_id, block_ordinal, counter, module_id, kernel, numerator, denominator, ratio, ratio_text",
    "ON CONFLICT(file_id, block_ordinal, counter) DO NOTHING", 3};

std::string FormatPercent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

}  // namespace

ReportRows::ReportRows(FileContext* file)
    : file_(file), totals_(&kTotalInsert), report_rows_(&kReportRowInsert), counters_(&kCounterInsert) {
  // Their keys hold the file's id and every row is vouched new: each batch goes by the insert without its
  // conflict clause, whose every row changes one (BulkBatch::HoldIn).
  totals_.HoldIn(file->held_rows);
  report_rows_.HoldIn(file->held_rows);
  counters_.HoldIn(file->held_rows, {"counter", "kernel"});  // the key, and utilization_counters_spills
}

void ReportRows::Flush() {
  FileContext& f = *file_;
  f.rows += totals_.Flush(f.sql());
  f.rows += report_rows_.Flush(f.sql());
  f.rows += counters_.Flush(f.sql());
}

std::optional<int64_t> ReportRows::ModuleOrNull() const {
  return OnlyIf(file_->module_id != 0, file_->module_id);
}

void ReportRows::Add(ingest::MemoryReportTotalRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    // The file's id is new and its rows are all this file prints, so a space seen before in the file is the
    // only conflict: told here, and the row is vouched new.
    if (!totals_seen_.insert(r.memory_space).second) {
      f.issues.Add(IssueRecord::Severity::kWarning, 0,
                   "memory space " + std::to_string(r.memory_space) + " total printed twice; the first is kept");
      return;
    }
    BulkBatch& b = totals_;
    b.Int(f.file_id);
    b.Int(r.memory_space);
    b.Opt(ModuleOrNull());
    b.Int(r.total_bytes);
    f.rows += b.EndRow(f.sql(), BulkBatch::Keys::kNew);
  });
}

void ReportRows::Add(ingest::MemoryReportRowRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    const char* section = "allocations_by_size";
    if (r.section == ingest::MemoryReportRowRecord::Section::kAllocationValues) section = "allocation_values";
    if (r.section == ingest::MemoryReportRowRecord::Section::kMemorySpace) section = "memory_space";
    BulkBatch& b = report_rows_;
    b.Int(f.file_id);
    b.Int(r.ordinal);
    b.Opt(ModuleOrNull());
    b.Text(section);
    b.Opt(NonNegative(r.allocation_index));
    b.Opt(NonNegative(r.memory_space));
    b.OptText(NonEmpty(std::move(r.memory_space_name)));
    b.Opt(NonNegative(r.table_ordinal));
    b.Int(r.cumulative_bytes_approx);
    b.Real(r.cumulative_percent);
    b.Opt(NonNegative(r.remaining_bytes_approx));
    b.Int(r.size_bytes_approx);
    b.Opt(NonNegative(r.offset_bytes));
    b.Opt(NonNegative(r.value_count));
    b.Text(r.shapes);
    // The parser numbers a file's rows one by one (records.h), so an ordinal is new in the file.
    f.rows += b.EndRow(f.sql(), BulkBatch::Keys::kNew);
  });
}

void ReportRows::Add(ingest::MemoryReportOmittedRecord&& r) {
  // Truncation notes are facts about the report, kept as warnings so analysts know rows are missing.
  file_->issues.Add(IssueRecord::Severity::kWarning, 0,
                    "report omits " + std::to_string(r.omitted_count) + (r.values ? " values" : " allocations") +
                        " under " + FormatPercent(r.threshold_percent) + "% of the total (XLA's own truncation)");
}

void ReportRows::Add(ingest::UtilizationCounterRecord&& r) {
  FileContext& f = *file_;
  f.facts.counters_changed = true;
  f.Guard([&] {
    // A counter printed again in its block is told here (the key as the database keeps the text, StoredText).
    if (!counters_seen_.emplace(r.block_ordinal, StoredText(r.counter)).second) {
      f.issues.Add(IssueRecord::Severity::kWarning, 0,
                   "counter " + r.counter + " printed twice in block " + std::to_string(r.block_ordinal) +
                       "; the first is kept");
      return;
    }
    BulkBatch& b = counters_;
    b.Int(f.file_id);
    b.Int(r.block_ordinal);
    b.Text(r.counter);
    b.Opt(ModuleOrNull());
    b.Text(r.kernel);
    b.Int(r.numerator);
    b.Int(r.denominator);
    b.Real(r.ratio);
    b.Text(r.ratio_text);
    f.rows += b.EndRow(f.sql(), BulkBatch::Keys::kNew);
  });
}

void ReportRows::Add(ingest::OomStatRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    auto& st = f.Statement("INSERT INTO oom_stats(file_id, label, bytes_approx, bytes_text, percent) "
                           "VALUES (?,?,?,?,?) ON CONFLICT(file_id, label) DO NOTHING");
    BindRow(st, f.file_id, r.label, r.bytes_approx, r.bytes_text, OnlyIf(r.percent >= 0, r.percent));
    f.rows += st.Execute();
    st.Reset();
  });
}

void ReportRows::Add(ingest::OomBufferRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    auto& st = f.Statement("INSERT INTO oom_buffers(file_id, buffer_number, module_id, size_bytes_approx, "
                           "size_text, op_name, source_file, source_line, xla_label, shape, is_entry_parameter) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(file_id, buffer_number) DO NOTHING");
    BindRow(st, f.file_id, r.buffer_number, ModuleOrNull(), r.size_bytes_approx, r.size_text,
            NonEmpty(std::move(r.op_name)), NonEmpty(std::move(r.source_file)), NonNegative(r.source_line),
            NonEmpty(std::move(r.xla_label)), NonEmpty(std::move(r.shape)), r.is_entry_parameter);
    f.rows += st.Execute();
    st.Reset();
  });
}

}  // namespace xladb::store
