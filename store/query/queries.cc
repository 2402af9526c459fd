#include "store/query/queries.h"

#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"
#include "store/query/rows_by_id.h"
#include "store/query/statement_text.h"
#include "store/facts/module_metrics.h"
#include "store/facts/shape_text.h"


#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <variant>

namespace xladb::store {
namespace {

// ---------------------------------------------------------------------------------------------------
// Runs

constexpr int64_t kDefaultPageSize = 100;
constexpr int64_t kMaxPageSize = 1000;
constexpr std::string_view kRunPageTokenPrefix = "runs1.";

// The run's row, its summary included (store/facts/run_summary.h: counted by the writer, not here).
const ResultColumns<RunInfo> kRunColumns = {
    {"r.run_id", &RunInfo::run_id},
    {"r.name", &RunInfo::name},
    {"r.source_path", &RunInfo::source_path},
    {"r.run_time_us", &RunInfo::run_time_us},
    {"r.run_time_source", &RunInfo::run_time_source},
    {"r.created_at_us", &RunInfo::created_at_us},
    {"r.updated_at_us", &RunInfo::updated_at_us},
    {"r.file_count", &RunInfo::file_count},
    {"r.ingested_file_count", &RunInfo::ingested_file_count},
    {"r.error_file_count", &RunInfo::error_file_count},
    {"r.module_count", &RunInfo::module_count},
};

struct RunLabel {
  std::string key, value;
};
const ResultColumns<RunLabel> kRunLabelColumns = {{"key", &RunLabel::key}, {"value", &RunLabel::value}};

// Fills the runs' labels, each run's by key: a statement a run on SQLite, one for the page on PostgreSQL
// (RowsById; a page of 100 runs was 100 round trips there).
void FillRunLabels(Database& db, std::span<RunInfo> runs) {
  // The run id follows the label's columns.
  static const RowsById kLabelsOfRuns("SELECT " + kRunLabelColumns.SelectList() + ", run_id FROM run_labels",
                                      "run_id", " ORDER BY run_id, key");
  std::unordered_map<int64_t, RunInfo*> by_id;
  std::vector<int64_t> ids;
  for (RunInfo& run : runs) {
    by_id.emplace(run.run_id, &run);
    ids.push_back(run.run_id);
  }
  kLabelsOfRuns.ForEach(db, ids, [&](const SqlStatement& q) {
    RunLabel label = kRunLabelColumns.Read(q);
    by_id.at(q.Int(kRunLabelColumns.size()))->labels.emplace_back(std::move(label.key), std::move(label.value));
  });
}

// The page token is the (run_time_us, run_id) of the last run returned: pages are keyset ranges of the
// newest-first order, so runs ingested between two calls neither repeat nor shift the next page.
std::string MakeRunPageToken(const RunInfo& last) {
  return std::string(kRunPageTokenPrefix) + std::to_string(last.run_time_us) + "." + std::to_string(last.run_id);
}

bool ParseRunPageToken(const std::string& token, int64_t* run_time_us, int64_t* run_id) {
  std::string_view s(token);
  if (s.substr(0, kRunPageTokenPrefix.size()) != kRunPageTokenPrefix) return false;
  s.remove_prefix(kRunPageTokenPrefix.size());
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  auto parse = [](std::string_view part, int64_t* out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), *out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  return parse(s.substr(0, dot), run_time_us) && parse(s.substr(dot + 1), run_id);
}

// SpillRates: the columns of one SpillRateRow, from kernel_spill_summary k with its run r and module m.
const ResultColumns<SpillRateRow> kSpillRateColumns = {
    {"r.name", &SpillRateRow::run_name},
    {"r.run_time_us", &SpillRateRow::run_time_us},
    {"m.name", &SpillRateRow::module_name},
    {"k.kernel", &SpillRateRow::kernel},
    {"k.vmem_spills", &SpillRateRow::vmem_spills},
    {"k.vmem_fills", &SpillRateRow::vmem_fills},
    {"k.smem_spills", &SpillRateRow::smem_spills},
    {"k.smem_fills", &SpillRateRow::smem_fills},
    {"k.bundles", &SpillRateRow::bundles},
    {"k.vmem_spill_rate", &SpillRateRow::vmem_spill_rate},
    {"k.vmem_fill_rate", &SpillRateRow::vmem_fill_rate},
    {"k.smem_spill_rate", &SpillRateRow::smem_spill_rate},
    {"k.smem_fill_rate", &SpillRateRow::smem_fill_rate},
};
const std::string kSpillColumns = "SELECT " + kSpillRateColumns.SelectList() + " ";
constexpr const char* kSpillRunAndModule =
    " JOIN runs r ON r.run_id = k.run_id JOIN modules m ON m.module_id = k.module_id";
// The rows in rate order (read through the rate index or one run's rows).
const std::string kSpillRowsByRate = kSpillColumns + "FROM kernel_spill_summary k" + kSpillRunAndModule;
// The rate pair a SpillRates' top N is cut at.
const ResultColumns<SpillRateRow> kRatePairColumns = {{"k.vmem_spill_rate", &SpillRateRow::vmem_spill_rate},
                                                      {"k.vmem_fill_rate", &SpillRateRow::vmem_fill_rate}};
constexpr const char* kRateIndexOrder = " ORDER BY k.vmem_spill_rate DESC, k.vmem_fill_rate DESC";
constexpr const char* kSpillRateOrder =
    " ORDER BY k.vmem_spill_rate DESC, k.vmem_fill_rate DESC, r.run_time_us DESC, k.kernel, k.run_id, k.module_id";
// The rows run by run, newest run first (CROSS JOIN keeps runs as SQLite's outer loop).
const std::string kSpillRowsByRunTime = kSpillColumns +
                                        "FROM runs r CROSS JOIN kernel_spill_summary k "
                                        "JOIN modules m ON m.module_id = k.module_id WHERE k.run_id = r.run_id";

// Appends the rows of `sql` (its placeholders `args`, then LIMIT `limit` unless it is negative) to `rows`.
void ReadSpillRows(SqlConnection& db, const std::string& sql, const std::vector<SqlArg>& args, int64_t limit,
                   std::vector<SpillRateRow>* rows) {
  auto q = db.Prepare(limit >= 0 ? sql + " LIMIT ?" : sql);
  const int next = BindArgs(*q, args);
  if (limit >= 0) q->Bind(next, limit);
  while (q->Step()) rows->push_back(kSpillRateColumns.Read(*q));
}


// A TopBuffer's columns, as peak_buffer_details (schema.sql) names them. Its shape's logical size is computed
// (WithShapeBytes).
const ResultColumns<TopBuffer> kBufferColumns = {
    {"instruction", &TopBuffer::instruction},
    {"shape_index", &TopBuffer::shape_index},
    {"value_id", &TopBuffer::value_id},
    {"allocation_index", &TopBuffer::allocation_index},
    {"size_bytes", &TopBuffer::size_bytes},
    {"shape", &TopBuffer::shape},
    {"opcode", &TopBuffer::opcode},
    {"op_name", &TopBuffer::op_name},
    {"source_file", &TopBuffer::source_file},
    {"source_line", &TopBuffer::source_line},
    {"live_start", &TopBuffer::live_start},
    {"live_end", &TopBuffer::live_end},
};
// A buffer of XLA's printed peak list: its place in the list and XLA's size, then kBufferColumns.
const ResultColumns<TopBuffer> kPeakListColumns =
    ResultColumns<TopBuffer>{{"ordinal", &TopBuffer::ordinal}, {"logical_bytes", &TopBuffer::logical_bytes}}.Then(
        kBufferColumns);

// `b` with its shape's logical size.
TopBuffer WithShapeBytes(TopBuffer b) {
  b.shape_bytes = LogicalByteSize(b.shape).value_or(-1);
  return b;
}

// XLA's printed peak list of a module, largest first.
std::vector<TopBuffer> ReadPeakList(SqlConnection& db, int64_t module_id) {
  auto q = db.Prepare("SELECT " + kPeakListColumns.SelectList() +
                      " FROM peak_buffer_details WHERE module_id = ? ORDER BY logical_bytes DESC, ordinal");
  q->Bind(1, module_id);
  std::vector<TopBuffer> buffers;
  while (q->Step()) buffers.push_back(WithShapeBytes(kPeakListColumns.Read(*q)));
  return buffers;
}

// A live value's allocation slice, beside its kBufferColumns: (allocation, offset, size, color) is the slice.
struct SliceColumns {
  int64_t offset_bytes = -1;
  int64_t color = 0;
};
const ResultColumns<SliceColumns> kSliceColumns = {{"offset_bytes", &SliceColumns::offset_bytes},
                                                   {"color", &SliceColumns::color}};

// The values live at `time` from their live ranges, one per allocation slice (the one with the largest
// logical size where values share it, as the padded live peak counts the slice once), largest slice first.
std::vector<TopBuffer> ReadBuffersLiveAt(SqlConnection& db, int64_t module_id, int64_t time) {
  // The live values in peak_buffer_details' columns (and their slices'), for the lists above to read.
  auto q = db.Prepare(
      "SELECT " + kBufferColumns.SelectList() + ", " + kSliceColumns.SelectList() + " FROM ("
      "SELECT v.instruction, v.shape_index, v.value_id, v.allocation_index, v.size_bytes, sh.text AS shape, "
      "       i.opcode, opn.text AS op_name, sf.path AS source_file, i.source_line, l.live_start, l.live_end, "
      "       v.offset_bytes, a.color "
      "FROM buffer_live_ranges l "
      "JOIN buffer_values v ON v.module_id = l.module_id AND v.value_id = l.value_id "
      "LEFT JOIN allocations a ON a.module_id = v.module_id AND a.allocation_index = v.allocation_index "
      "LEFT JOIN shapes sh ON sh.shape_id = v.shape_id "
      "LEFT JOIN instructions i ON i.module_id = v.module_id AND i.name = v.instruction "
      "LEFT JOIN names opn ON opn.name_id = i.op_name_id "
      "LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id "
      "WHERE l.module_id = ?1 AND l.live_start <= ?2 AND ?2 <= l.live_end AND v.size_bytes IS NOT NULL) AS live");
  BindRow(*q, module_id, time);
  // (allocation or -1 - value_id, offset, size, color) -> the slice's value
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, TopBuffer> by_slice;
  while (q->Step()) {
    TopBuffer b;
    SliceColumns slice;
    kSliceColumns.ReadInto(*q, &slice, kBufferColumns.ReadInto(*q, &b));
    b = WithShapeBytes(std::move(b));
    b.logical_bytes = b.shape_bytes;
    const int64_t allocation = b.allocation_index >= 0 ? b.allocation_index : -1 - b.value_id;
    auto [it, added] = by_slice.try_emplace({allocation, slice.offset_bytes, b.size_bytes, slice.color}, b);
    if (!added && std::tie(b.logical_bytes, it->second.value_id) > std::tie(it->second.logical_bytes, b.value_id)) {
      it->second = std::move(b);
    }
  }
  std::vector<TopBuffer> buffers;
  for (auto& [slice, b] : by_slice) buffers.push_back(std::move(b));
  std::sort(buffers.begin(), buffers.end(), [](const TopBuffer& a, const TopBuffer& b) {
    return std::tie(b.size_bytes, a.instruction, a.shape_index) < std::tie(a.size_bytes, b.instruction, b.shape_index);
  });
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].ordinal = static_cast<int64_t>(i);
  return buffers;
}

// A module with its summary s (LEFT JOINed: NULL without one).
const ResultColumns<ModuleMemoryInfo> kModuleColumns =
    ResultColumns<ModuleMemoryInfo>{
        {"m.module_id", &ModuleMemoryInfo::module_id},
        {"m.name", &ModuleMemoryInfo::name},
        {"m.xla_module_id", &ModuleMemoryInfo::xla_module_id},
        {"m.stage", &ModuleMemoryInfo::stage},
        {"m.backend", &ModuleMemoryInfo::backend},
        {"m.fingerprint", &ModuleMemoryInfo::fingerprint},
        {"EXISTS (SELECT 1 FROM module_memory mm WHERE mm.module_id = m.module_id)",
         &ModuleMemoryInfo::has_buffer_assignment},
        {"s.peak_time", &ModuleMemoryInfo::peak_time},
        {"s.allocation_count", &ModuleMemoryInfo::allocation_count},
        {"s.value_count", &ModuleMemoryInfo::value_count},
        {"s.instruction_count", &ModuleMemoryInfo::instruction_count},
        {"m.folder", &ModuleMemoryInfo::folder},
        {"m.entry_signature", &ModuleMemoryInfo::entry_signature},
        {"m.identity_key", &ModuleMemoryInfo::identity_key},
        {"s.live_peak_padded_time", &ModuleMemoryInfo::live_peak_padded_time},
        {"m.entry_sharding", &ModuleMemoryInfo::entry_sharding},
    }.WithModuleMetrics("s");

const ResultColumns<ModuleSpaceInfo> kModuleSpaceColumns = {
    {"s.module_id", &ModuleSpaceInfo::module_id},
    {"s.color", &ModuleSpaceInfo::color},
    {"s.allocation_count", &ModuleSpaceInfo::allocation_count},
    {"s.total_bytes", &ModuleSpaceInfo::total_bytes},
    {"s.live_peak_padded_bytes", &ModuleSpaceInfo::live_peak_padded_bytes},
};

// TopBuffers' module: one with memory figures (a buffer assignment or memory report) first.
constexpr const char* kHasMemory = "(s.allocation_count > 0 OR s.total_bytes IS NOT NULL)";
const std::string kHasMemoryFlag = std::string("CASE WHEN ") + kHasMemory + " THEN 1 ELSE 0 END";
const ResultColumns<TopBuffersAnswer> kPickedModuleColumns = {
    {"m.module_id", &TopBuffersAnswer::module_id},
    {"m.name", &TopBuffersAnswer::module},
    {"m.stage", &TopBuffersAnswer::stage},
    {"m.folder", &TopBuffersAnswer::folder},
    {"m.xla_module_id", &TopBuffersAnswer::xla_module_id},
    {"s.peak_bytes", &TopBuffersAnswer::peak_bytes},
    {"s.peak_time", &TopBuffersAnswer::peak_time},
    {"m.identity_key", &TopBuffersAnswer::identity_key},
    {"s.total_bytes", &TopBuffersAnswer::total_bytes},
    {"s.live_peak_padded_bytes", &TopBuffersAnswer::live_peak_padded_bytes},
    {"s.live_peak_padded_time", &TopBuffersAnswer::live_peak_padded_time},
    {kHasMemoryFlag, &TopBuffersAnswer::has_memory},
};

struct RowCount {
  int64_t count = 0;
};
const ResultColumns<RowCount> kCountColumns = {{"COUNT(*)", &RowCount::count}};

const ResultColumns<RetraceGroup> kRetraceColumns = {
    {"module_name", &RetraceGroup::module},
    {"stage", &RetraceGroup::stage},
    {"folder", &RetraceGroup::folder},
    {"compiles", &RetraceGroup::compiles},
    {"distinct_signatures", &RetraceGroup::distinct_signatures},
    {"distinct_fingerprints", &RetraceGroup::distinct_fingerprints},
};

// A retrace group's compile: its module_<ID>, -1 for a module without a number.
struct CompileId {
  int64_t xla_module_id = -1;
};
const ResultColumns<CompileId> kXlaModuleIdColumns = {{"xla_module_id", &CompileId::xla_module_id}};

}  // namespace

// ---------------------------------------------------------------------------------------------------

StatusOr<RunPage> ListRuns(Database& db, const RunFilter& filter) {
  if (filter.page_size < 0) {
    return Status::InvalidArgument("page_size must be 0 (default) to " + std::to_string(kMaxPageSize) + ", not " +
                                   std::to_string(filter.page_size));
  }
  const int64_t page_size = filter.page_size == 0 ? kDefaultPageSize : std::min(filter.page_size, kMaxPageSize);
  Conditions where;
  AddLabelMatch(&where, "r.run_id", filter.labels);
  if (filter.since_us >= 0) where.Add("r.run_time_us >= ?", filter.since_us);
  if (filter.until_us >= 0) where.Add("r.run_time_us < ?", filter.until_us);
  Status st = AddNameMatch(&where, "r.name", filter.name_pattern, "run name");
  if (!st.ok()) return st;
  if (!filter.page_token.empty()) {
    int64_t after_time = 0, after_id = 0;
    if (!ParseRunPageToken(filter.page_token, &after_time, &after_id)) {
      return Status::InvalidArgument("page token '" + filter.page_token +
                                     "' is not one this server returned; pass \"\" for the first page");
    }
    where.Add("(r.run_time_us < ? OR (r.run_time_us = ? AND r.run_id < ?))", after_time, after_time, after_id);
  }
  return CatchSqlErrors("listing runs", [&]() -> StatusOr<RunPage> {
    auto q = db.statements().ByText("SELECT " + kRunColumns.SelectList() + " FROM runs r" + where.Where() +
                                    " ORDER BY r.run_time_us DESC, r.run_id DESC LIMIT ?");
    int next = BindArgs(*q, where.args());
    q->Bind(next, page_size + 1);  // one more than the page, to know whether another page follows
    RunPage page;
    while (q->Step()) page.runs.push_back(kRunColumns.Read(*q));
    if (static_cast<int64_t>(page.runs.size()) > page_size) {
      page.runs.resize(static_cast<size_t>(page_size));
      page.next_page_token = MakeRunPageToken(page.runs.back());
    }
    FillRunLabels(db, page.runs);
    return page;
  });
}

StatusOr<RunInfo> GetRun(Database& db, const std::string& run_name) {
  return CatchSqlErrors("reading run '" + run_name + "'", [&]() -> StatusOr<RunInfo> {
    auto q = db.statements().ByText("SELECT " + kRunColumns.SelectList() + " FROM runs r WHERE r.name = ?");
    q->Bind(1, run_name);
    if (!q->Step()) return Status::NotFound("run '" + run_name + "' not found");
    RunInfo run = kRunColumns.Read(*q);
    FillRunLabels(db, std::span(&run, 1));
    return run;
  });
}

StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const std::string& name_pattern) {
  ModuleListOptions options;
  options.name_pattern = name_pattern;
  return ListModules(db, run_name, options);
}

StatusOr<std::vector<ModuleMemoryInfo>> ListModules(Database& db, const std::string& run_name,
                                                    const ModuleListOptions& options) {
  const std::string& name_pattern = options.name_pattern;
  std::string order = " ORDER BY m.name, m.stage, COALESCE(m.xla_module_id, -1), m.folder, m.module_id";
  if (!options.sort_metric.empty()) {
    const ModuleMetric* metric = FindModuleMetric(options.sort_metric);
    if (metric == nullptr) {
      return Status::InvalidArgument("cannot sort by '" + options.sort_metric + "': the metrics are " +
                                     ModuleMetricNames());
    }
    order = " ORDER BY COALESCE(s." + std::string(metric->name) + ", -1) DESC, " + order.substr(10);
  }
  if (options.limit >= 0) order += " LIMIT " + std::to_string(options.limit);
  return CatchSqlErrors("listing modules of run '" + run_name + "'",
                        [&]() -> StatusOr<std::vector<ModuleMemoryInfo>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    Conditions where;
    where.Add("m.run_id = ?", *run_id);
    Status st = AddNameMatch(&where, "m.name", name_pattern, "module name");
    if (!st.ok()) return st;
    if (!options.stage.empty()) where.Add("m.stage = ?", options.stage);
    if (options.memory_only) {  // an OOM report is a module's memory too (all it has, often)
      where.Add("(s.allocation_count > 0 OR s.total_bytes IS NOT NULL OR m.module_id IN "
                "(SELECT f.module_id FROM dump_files f WHERE f.run_id = ? AND f.kind = 'oom_report'))",
                *run_id);
    }
    auto q = db.connection().Prepare("SELECT " + kModuleColumns.SelectList() +
                                     " FROM modules m LEFT JOIN module_summary s ON s.module_id = m.module_id" +
                                     where.Where() + order);
    BindArgs(*q, where.args());
    std::vector<ModuleMemoryInfo> modules;
    while (q->Step()) modules.push_back(kModuleColumns.Read(*q));
    return modules;
  });
}

StatusOr<std::vector<SpillRateRow>> SpillRates(Database& db, const SpillQuery& query) {
  return CatchSqlErrors("spill rates", [&]() -> StatusOr<std::vector<SpillRateRow>> {
    Conditions where;
    if (!query.run.empty()) {
      StatusOr<int64_t> run_id = FindRunId(db.connection(), query.run);
      if (!run_id.ok()) return run_id.status();
      where.Add("k.run_id = ?", *run_id);
    }
    Status st = AddNameMatch(&where, "k.kernel", query.kernel_pattern, "kernel");
    if (!st.ok()) return st;
    std::vector<SpillRateRow> rows;
    if (query.limit == 0) return rows;
    // kernel_spill_summary is computed at ingest. One run's kernels are few: read them whole, in order.
    // The top N over every run is read in two parts around the N-th rate pair (the cut), read off the rate
    // index: the rows above the cut (fewer than N), then the rows at the cut, which can be thousands (every
    // kernel that spills on every bundle ties at 1.0/1.0) and are ordered by run time: they are read run by
    // run, newest first, through the (run_id, rates) index, and reading stops at the N-th. Sorting every
    // tied row of every run made the top 20 over 1,000 runs take 300 ms.
    std::optional<std::pair<double, double>> cut;
    if (query.run.empty() && query.limit > 0) {
      auto q = db.connection().Prepare("SELECT " + kRatePairColumns.SelectList() + " FROM kernel_spill_summary k" +
                                        where.Where() + kRateIndexOrder + " LIMIT 1 OFFSET ?");
      q->Bind(BindArgs(*q, where.args()), query.limit - 1);
      if (q->Step()) {
        const SpillRateRow at = kRatePairColumns.Read(*q);
        cut.emplace(at.vmem_spill_rate, at.vmem_fill_rate);
      }
    }
    if (!cut) {
      ReadSpillRows(db.connection(), kSpillRowsByRate + where.Where() + kSpillRateOrder, where.args(), query.limit, &rows);
      return rows;
    }
    // Above the cut: among the first N rows of the rate index (a range condition on the descending index
    // would walk all of it), those with a higher rate pair.
    std::vector<SqlArg> above = where.args();
    above.emplace_back(query.limit);
    above.emplace_back(cut->first);
    above.emplace_back(cut->second);
    ReadSpillRows(db.connection(),
                  std::string(kSpillColumns) + "FROM (SELECT * FROM kernel_spill_summary k" + where.Where() +
                      kRateIndexOrder + " LIMIT ?) k" + kSpillRunAndModule +
                      " WHERE (k.vmem_spill_rate, k.vmem_fill_rate) > (?, ?)" + kSpillRateOrder,
                  above, -1, &rows);
    Conditions at = where;
    at.Add("k.vmem_spill_rate = ? AND k.vmem_fill_rate = ?", cut->first, cut->second);
    ReadSpillRows(db.connection(), kSpillRowsByRunTime + at.And() + " ORDER BY r.run_time_us DESC, k.kernel, k.run_id, k.module_id",
                  at.args(), query.limit - static_cast<int64_t>(rows.size()), &rows);
    return rows;
  });
}

StatusOr<std::vector<ModuleSpaceInfo>> ListModuleSpaces(Database& db, const std::string& run_name) {
  return CatchSqlErrors("memory spaces of run '" + run_name + "'", [&]() -> StatusOr<std::vector<ModuleSpaceInfo>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    auto q = db.connection().Prepare("SELECT " + kModuleSpaceColumns.SelectList() +
                                     " FROM module_memory_spaces s JOIN modules m ON m.module_id = s.module_id "
                                     "WHERE m.run_id = ? ORDER BY s.total_bytes DESC, s.module_id, s.color");
    q->Bind(1, *run_id);
    std::vector<ModuleSpaceInfo> spaces;
    while (q->Step()) spaces.push_back(kModuleSpaceColumns.Read(*q));
    return spaces;
  });
}

StatusOr<TopBuffersAnswer> TopBuffers(Database& db, const std::string& run_name, const std::string& module,
                                      int64_t n, const std::string& stage, int64_t xla_module_id,
                                      const std::optional<std::string>& folder, PeakList list) {
  return CatchSqlErrors("top buffers of '" + module + "' in run '" + run_name + "'",
                        [&]() -> StatusOr<TopBuffersAnswer> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    Conditions where;
    where.Add("m.run_id = ?", *run_id);
    where.Add("m.name = ?", module);
    if (!stage.empty()) where.Add("m.stage = ?", stage);
    if (folder) where.Add("m.folder = ?", *folder);
    auto count = db.connection().Prepare("SELECT " + kCountColumns.SelectList() +
                                         " FROM modules m JOIN module_summary s ON s.module_id = m.module_id" +
                                         where.Where() + " AND " + kHasMemory);
    BindArgs(*count, where.args());
    const int64_t compiles = count->Step() ? kCountColumns.Read(*count).count : 0;
    if (xla_module_id >= 0) where.Add("m.xla_module_id = ?", xla_module_id);
    auto pick = db.connection().Prepare(
        "SELECT " + kPickedModuleColumns.SelectList() +
        " FROM modules m LEFT JOIN module_summary s ON s.module_id = m.module_id" + where.Where() + " ORDER BY " +
        kHasMemoryFlag +
        " DESC, COALESCE(s.total_bytes, -1) DESC, COALESCE(s.peak_bytes, -1) DESC, m.module_id LIMIT 1");
    BindArgs(*pick, where.args());
    if (!pick->Step()) {
      std::string what = "module '" + module + "'";
      if (!stage.empty()) what += " at stage '" + stage + "'";
      if (xla_module_id >= 0) what += " with xla_module_id " + std::to_string(xla_module_id);
      if (folder) what += " in folder '" + *folder + "'";
      return Status::NotFound(what + " not found in run '" + run_name + "'");
    }
    TopBuffersAnswer answer = kPickedModuleColumns.Read(*pick);
    answer.compiles = compiles;
    answer.picked_largest = xla_module_id < 0 && compiles > 1;
    answer.list = list;
    // XLA's whole list: its largest buffer counted at pointer size is named wherever the peaks differ.
    std::vector<TopBuffer> xla_list = ReadPeakList(db.connection(), answer.module_id);
    std::optional<TopBuffer>& largest = answer.largest_counted_at_pointer_size;
    for (const TopBuffer& b : xla_list) {
      if (b.counted_at_pointer_size() && (!largest || b.shape_bytes > largest->shape_bytes)) largest = b;
    }
    if (list == PeakList::kXla) {
      answer.list_time = answer.peak_time;
      answer.buffers = std::move(xla_list);
    } else {
      answer.list_time = answer.live_peak_padded_time;
      if (answer.list_time >= 0) {
        answer.buffers = ReadBuffersLiveAt(db.connection(), answer.module_id, answer.list_time);
      }
    }
    if (n >= 0 && static_cast<int64_t>(answer.buffers.size()) > n) answer.buffers.resize(static_cast<size_t>(n));
    return answer;
  });
}

StatusOr<std::vector<RetraceGroup>> ListRetraces(Database& db, const std::string& run_name, int64_t min_compiles) {
  if (min_compiles < 2) return Status::InvalidArgument("a retrace group has at least 2 compiles");
  return CatchSqlErrors("retraces of run '" + run_name + "'", [&]() -> StatusOr<std::vector<RetraceGroup>> {
    StatusOr<int64_t> run_id = FindRunId(db.connection(), run_name);
    if (!run_id.ok()) return run_id.status();
    auto q = db.connection().Prepare("SELECT " + kRetraceColumns.SelectList() +
                                     " FROM retrace_groups WHERE run_id = ? AND compiles >= ? "
                                     "ORDER BY compiles DESC, module_name, stage, folder");
    BindRow(*q, *run_id, min_compiles);
    std::vector<RetraceGroup> groups;
    while (q->Step()) groups.push_back(kRetraceColumns.Read(*q));
    auto ids = db.connection().Prepare("SELECT " + kXlaModuleIdColumns.SelectList() +
                                       " FROM module_memory "
                                       "WHERE run_id = ? AND module_name = ? AND stage = ? AND folder = ? "
                                       "ORDER BY COALESCE(xla_module_id, -1)");
    for (RetraceGroup& g : groups) {
      ids->Reset();
      BindRow(*ids, *run_id, g.module, g.stage, g.folder);
      while (ids->Step()) g.xla_module_ids.push_back(kXlaModuleIdColumns.Read(*ids).xla_module_id);
    }
    return groups;
  });
}

}  // namespace xladb::store
