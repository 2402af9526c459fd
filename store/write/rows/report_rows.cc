#include "store/write/rows/report_rows.h"

#include <cstdio>
#include <string>
#include <utility>

#include "store/backend/row_binding.h"

namespace xladb::store {
namespace {

std::string FormatPercent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

}  // namespace

std::optional<int64_t> ReportRows::ModuleOrNull() const {
  return OnlyIf(file_->module_id != 0, file_->module_id);
}

template <typename Warning>
void ReportRows::InsertOnce(SqlStatement& st, Warning&& warning) {
  if (st.Execute() == 0) {
    file_->issues.Add(IssueRecord::Severity::kWarning, 0, warning());
  } else {
    ++file_->rows;
  }
  st.Reset();
}

void ReportRows::Add(ingest::MemoryReportTotalRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    // The file's id is new and its rows are all this file prints, so a space seen before in the file is the
    // only conflict: told here, and the insert is not awaited (a round trip a total on PostgreSQL).
    if (!totals_seen_.insert(r.memory_space).second) {
      f.issues.Add(IssueRecord::Severity::kWarning, 0,
                   "memory space " + std::to_string(r.memory_space) + " total printed twice; the first is kept");
      return;
    }
    auto& st = f.Statement("INSERT INTO memory_report_totals(file_id, memory_space, module_id, total_bytes) "
                           "VALUES (?,?,?,?) ON CONFLICT(file_id, memory_space) DO NOTHING");
    BindRow(st, f.file_id, r.memory_space, ModuleOrNull(), r.total_bytes);
    st.ExecuteLater();
    st.Reset();
    ++f.rows;
  });
}

void ReportRows::Add(ingest::MemoryReportRowRecord&& r) {
  FileContext& f = *file_;
  f.Guard([&] {
    auto& st = f.Statement("INSERT INTO memory_report_rows(file_id, ordinal, module_id, section, allocation_index, "
                           "memory_space, memory_space_name, table_ordinal, cumulative_bytes_approx, "
                           "cumulative_percent, remaining_bytes_approx, size_bytes_approx, offset_bytes, "
                           "value_count, shapes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                           "ON CONFLICT(file_id, ordinal) DO NOTHING");
    const char* section = "allocations_by_size";
    if (r.section == ingest::MemoryReportRowRecord::Section::kAllocationValues) section = "allocation_values";
    if (r.section == ingest::MemoryReportRowRecord::Section::kMemorySpace) section = "memory_space";
    BindRow(st, f.file_id, r.ordinal, ModuleOrNull(), section, NonNegative(r.allocation_index),
            NonNegative(r.memory_space), NonEmpty(std::move(r.memory_space_name)), NonNegative(r.table_ordinal),
            r.cumulative_bytes_approx, r.cumulative_percent, NonNegative(r.remaining_bytes_approx),
            r.size_bytes_approx, NonNegative(r.offset_bytes), NonNegative(r.value_count), r.shapes);
    // Not awaited (a round trip a row on PostgreSQL): the parser numbers a file's rows one by one and the
    // file's old rows are gone, so the ordinal never meets a stored one and every row sent is a row stored.
    st.ExecuteLater();
    st.Reset();
    ++f.rows;
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
    auto& st = f.Statement("INSERT INTO utilization_counters(file_id, block_ordinal, counter, module_id, kernel, "
                           "numerator, denominator, ratio, ratio_text) VALUES (?,?,?,?,?,?,?,?,?) "
                           "ON CONFLICT(file_id, block_ordinal, counter) DO NOTHING");
    BindRow(st, f.file_id, r.block_ordinal, r.counter, ModuleOrNull(), r.kernel, r.numerator, r.denominator, r.ratio,
            r.ratio_text);
    InsertOnce(st, [&] {
      return "counter " + r.counter + " printed twice in block " + std::to_string(r.block_ordinal) +
             "; the first is kept";
    });
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
