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

void ReportRows::BindModule(SqlStatement& st, int index) const {
  if (file_->module_id != 0) st.Bind(index, file_->module_id); else st.BindNull(index);
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
    auto& st = f.Statement("INSERT INTO memory_report_totals(file_id, memory_space, module_id, total_bytes) "
                           "VALUES (?,?,?,?) ON CONFLICT(file_id, memory_space) DO NOTHING");
    st.Bind(1, f.file_id);
    st.Bind(2, r.memory_space);
    BindModule(st, 3);
    st.Bind(4, r.total_bytes);
    InsertOnce(st, [&] {
      return "memory space " + std::to_string(r.memory_space) + " total printed twice; the first is kept";
    });
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
    st.Bind(1, f.file_id);
    st.Bind(2, r.ordinal);
    BindModule(st, 3);
    st.Bind(4, section);
    BindOpt(st, 5, NonNegative(r.allocation_index));
    if (r.memory_space >= 0) st.Bind(6, r.memory_space); else st.BindNull(6);
    BindOpt(st, 7, NonEmpty(std::move(r.memory_space_name)));
    BindOpt(st, 8, NonNegative(r.table_ordinal));
    st.Bind(9, r.cumulative_bytes_approx);
    st.Bind(10, r.cumulative_percent);
    BindOpt(st, 11, NonNegative(r.remaining_bytes_approx));
    st.Bind(12, r.size_bytes_approx);
    BindOpt(st, 13, NonNegative(r.offset_bytes));
    BindOpt(st, 14, NonNegative(r.value_count));
    st.Bind(15, r.shapes);
    f.rows += st.Execute();
    st.Reset();
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
    st.Bind(1, f.file_id);
    st.Bind(2, r.block_ordinal);
    st.Bind(3, r.counter);
    BindModule(st, 4);
    st.Bind(5, r.kernel);
    st.Bind(6, r.numerator);
    st.Bind(7, r.denominator);
    st.Bind(8, r.ratio);
    st.Bind(9, r.ratio_text);
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
    st.Bind(1, f.file_id);
    st.Bind(2, r.label);
    st.Bind(3, r.bytes_approx);
    st.Bind(4, r.bytes_text);
    if (r.percent >= 0) st.Bind(5, r.percent); else st.BindNull(5);
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
    st.Bind(1, f.file_id);
    st.Bind(2, r.buffer_number);
    BindModule(st, 3);
    st.Bind(4, r.size_bytes_approx);
    st.Bind(5, r.size_text);
    BindOpt(st, 6, NonEmpty(std::move(r.op_name)));
    BindOpt(st, 7, NonEmpty(std::move(r.source_file)));
    BindOpt(st, 8, NonNegative(r.source_line));
    BindOpt(st, 9, NonEmpty(std::move(r.xla_label)));
    BindOpt(st, 10, NonEmpty(std::move(r.shape)));
    st.Bind(11, r.is_entry_parameter ? 1 : 0);
    f.rows += st.Execute();
    st.Reset();
  });
}

}  // namespace xladb::store
