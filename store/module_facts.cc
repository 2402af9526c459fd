#include "store/module_facts.h"

#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "store/live_bytes.h"
#include "store/shape_text.h"

namespace xladb::store {

struct DerivedModuleFacts::Statements {
  explicit Statements(SQLite::Database& sql)
      : names(sql, "SELECT name, stage, folder, hlo_entry_signature FROM modules WHERE module_id = ?"),
        params(sql,
               "SELECT parameter_number, parameter_shape FROM allocations "
               "WHERE module_id = ? AND is_parameter = 1 AND parameter_number IS NOT NULL "
               "ORDER BY parameter_number, parameter_shape_index, allocation_index"),
        output(sql,
               "SELECT (SELECT output_shape FROM allocations WHERE module_id = ?1 AND output_shape IS NOT NULL "
               "        ORDER BY allocation_index LIMIT 1), "
               "       (SELECT COUNT(*) FROM allocations WHERE module_id = ?1)"),
        identity(sql,
                 "UPDATE modules SET entry_signature = ?, identity_key = ?, entry_signature_confirmed = ? "
                 "WHERE module_id = ?"),
        live(sql, kLiveSlicesSql),
        live_count(sql, "SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = ?"),
        summary(sql,
                "UPDATE module_summary SET live_peak_padded_bytes = ?, live_peak_padded_time = ?, "
                "color0_total_bytes = (SELECT SUM(size_bytes) FROM allocations "
                "                      WHERE module_id = ?3 AND color = 0) "
                "WHERE module_id = ?3"),
        clear_spaces(sql, "DELETE FROM module_memory_spaces WHERE module_id = ?"),
        spaces(sql,
               "SELECT color, COUNT(*), SUM(size_bytes) FROM allocations WHERE module_id = ? "
               "GROUP BY color ORDER BY color"),
        insert_space(sql,
                     "INSERT INTO module_memory_spaces(module_id, color, allocation_count, total_bytes, "
                     "live_peak_padded_bytes) VALUES (?, ?, ?, ?, ?)"),
        clear_spills(sql, "DELETE FROM kernel_spill_summary WHERE module_id = ?"),
        spills(sql, kSpillSummarySql),
        printed(sql,
                "UPDATE module_summary SET total_bytes = COALESCE(?, total_bytes), "
                "schedule_length = COALESCE(?, schedule_length), peak_time = COALESCE(?, peak_time), "
                "stack_trace_peak_bytes = COALESCE(?, stack_trace_peak_bytes) WHERE module_id = ?"),
        aggregates(sql, kAggregatesSql),
        hlo_fingerprint(sql,
                        "UPDATE modules SET fingerprint = ?, fingerprint_source = 'hlo_text' WHERE module_id = ?"),
        value_fingerprint(sql,
                          "UPDATE modules SET fingerprint = ?, fingerprint_source = 'buffer_assignment' "
                          "WHERE module_id = ? AND (fingerprint_source IS NULL "
                          "                         OR fingerprint_source = 'buffer_assignment')") {}

  // A module's kernel_spill_summary rows from its counter lines (all of its reports).
  static constexpr const char* kSpillSummarySql = R"sql(
      INSERT INTO kernel_spill_summary(module_id, kernel, run_id, vmem_spills, vmem_fills, smem_spills, smem_fills,
                                       bundles, vmem_spill_rate, vmem_fill_rate, smem_spill_rate, smem_fill_rate)
      SELECT :m, kernel, :run, vs, vf, ss, sf, vs_den,
             COALESCE(1.0 * vs / NULLIF(vs_den, 0), 0), COALESCE(1.0 * vf / NULLIF(vf_den, 0), 0),
             COALESCE(1.0 * ss / NULLIF(ss_den, 0), 0), COALESCE(1.0 * sf / NULLIF(sf_den, 0), 0)
      FROM (SELECT kernel,
                   SUM(CASE WHEN counter = 'VMEM_SPILL_COUNT' THEN numerator ELSE 0 END) AS vs,
                   SUM(CASE WHEN counter = 'VMEM_FILL_COUNT' THEN numerator ELSE 0 END) AS vf,
                   SUM(CASE WHEN counter = 'SMEM_SPILL_COUNT' THEN numerator ELSE 0 END) AS ss,
                   SUM(CASE WHEN counter = 'SMEM_FILL_COUNT' THEN numerator ELSE 0 END) AS sf,
                   SUM(CASE WHEN counter = 'VMEM_SPILL_COUNT' THEN denominator ELSE 0 END) AS vs_den,
                   SUM(CASE WHEN counter = 'VMEM_FILL_COUNT' THEN denominator ELSE 0 END) AS vf_den,
                   SUM(CASE WHEN counter = 'SMEM_SPILL_COUNT' THEN denominator ELSE 0 END) AS ss_den,
                   SUM(CASE WHEN counter = 'SMEM_FILL_COUNT' THEN denominator ELSE 0 END) AS sf_den
            FROM utilization_counters
            WHERE module_id = :m
              AND counter IN ('VMEM_SPILL_COUNT', 'VMEM_FILL_COUNT', 'SMEM_SPILL_COUNT', 'SMEM_FILL_COUNT')
            GROUP BY kernel))sql";

  // module_summary's aggregates, recomputed from the module's rows (a module can span several files).
  static constexpr const char* kAggregatesSql = R"sql(
      UPDATE module_summary SET
        allocation_bytes   = (SELECT SUM(size_bytes) FROM allocations WHERE module_id = :m),
        parameter_bytes    = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_parameter = 1),
        output_bytes       = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_maybe_live_out = 1),
        temp_bytes         = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_preallocated_temp = 1),
        constant_bytes     = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_constant = 1),
        thread_local_bytes = (SELECT COALESCE(SUM(size_bytes), 0) FROM allocations WHERE module_id = :m AND is_thread_local = 1),
        allocation_count   = (SELECT COUNT(*) FROM allocations WHERE module_id = :m),
        value_count        = (SELECT COUNT(*) FROM buffer_values WHERE module_id = :m),
        live_range_count   = (SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = :m),
        peak_bytes         = (SELECT COALESCE(MAX(cumulative_bytes), SUM(logical_bytes)) FROM peak_buffers WHERE module_id = :m),
        peak_buffer_count  = (SELECT COUNT(*) FROM peak_buffers WHERE module_id = :m),
        instruction_count  = (SELECT COUNT(*) FROM instructions WHERE module_id = :m)
      WHERE module_id = :m)sql";

  SQLite::Statement names, params, output, identity, live, live_count, summary, clear_spaces, spaces, insert_space;
  SQLite::Statement clear_spills, spills, printed, aggregates, hlo_fingerprint, value_fingerprint;
};

namespace {

// Resets a cached statement for its next use.
SQLite::Statement& Fresh(SQLite::Statement& q) {
  q.reset();
  q.clearBindings();
  return q;
}

// Binds `v`, or leaves the parameter NULL (Fresh cleared it).
void BindIfSet(SQLite::Statement& q, int index, const std::optional<int64_t>& v) {
  if (v) q.bind(index, *v);
}

std::string HexU64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string EntrySignature(DerivedModuleFacts::Statements& st, int64_t module_id) {
  SQLite::Statement& params = Fresh(st.params);
  params.bind(1, module_id);
  // Per parameter number, its distinct shapes in shape-index order.
  std::vector<std::pair<int64_t, std::vector<std::string>>> by_number;
  while (params.executeStep()) {
    const int64_t number = params.getColumn(0).getInt64();
    std::string shape = params.getColumn(1).isNull() ? std::string("?") : params.getColumn(1).getString();
    if (by_number.empty() || by_number.back().first != number) by_number.push_back({number, {}});
    auto& shapes = by_number.back().second;
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(std::move(shape));
  }
  SQLite::Statement& output = Fresh(st.output);
  output.bind(1, module_id);
  const bool has_allocations = output.executeStep() && output.getColumn(1).getInt64() > 0;
  const std::string out =
      !has_allocations || output.getColumn(0).isNull() ? std::string("?") : output.getColumn(0).getString();
  output.reset();  // a statement left on a row would hold a read transaction open after the file's COMMIT
  if (!has_allocations) return {};

  std::string sig = "(";
  for (size_t i = 0; i < by_number.size(); ++i) {
    if (i > 0) sig += ", ";
    const auto& shapes = by_number[i].second;
    if (shapes.size() == 1) {
      sig += shapes[0];
    } else {
      sig += "(";
      for (size_t j = 0; j < shapes.size(); ++j) sig += (j > 0 ? ", " : "") + shapes[j];
      sig += ")";
    }
  }
  sig += ") -> " + out;
  return sig;
}

// The padded live peak, over all colors and per color.
struct LivePeaks {
  bool any = false;  // the module has live ranges
  LivePeak all;
  std::map<int64_t, LivePeak> by_color;
};

LivePeaks ComputeLivePeaks(DerivedModuleFacts::Statements& st, int64_t module_id) {
  SQLite::Statement& q = Fresh(st.live);
  q.bind(1, module_id);
  LivePeaks peaks;
  std::vector<SliceUse> uses;
  SQLite::Statement& count = Fresh(st.live_count);
  count.bind(1, module_id);
  if (count.executeStep()) uses.reserve(static_cast<size_t>(count.getColumn(0).getInt64()));  // no regrowth
  count.reset();
  const int32_t last_time = ReadLiveSlices(q, &uses, [](const SQLite::Statement&, const SliceUse&) {});
  if (uses.empty()) return peaks;
  peaks.any = true;
  LiveBytes all(last_time);
  std::map<int64_t, LiveBytes> by_color;
  ForEachLiveSlice(uses, [&](int32_t start, int32_t end, int64_t size, int32_t color) {
    all.Add(start, end, size);
    by_color.try_emplace(color, last_time).first->second.Add(start, end, size);
  });
  std::vector<SliceUse>().swap(uses);
  peaks.all = all.Peak();
  for (const auto& [color, bytes] : by_color) peaks.by_color[color] = bytes.Peak();
  return peaks;
}

}  // namespace

std::string ModuleIdentityKey(const std::string& name, const std::string& stage, const std::string& entry_signature,
                              const std::string& folder) {
  std::string joined;
  for (const std::string* part : {&name, &stage, &entry_signature, &folder}) {
    joined += *part;
    joined.push_back('\0');  // no part holds a NUL: the parts cannot run into each other
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(joined.data(), joined.size())));
  return hex;
}

DerivedModuleFacts::DerivedModuleFacts(SQLite::Database& sql) : sql_(sql) {}
DerivedModuleFacts::~DerivedModuleFacts() = default;

void DerivedModuleFacts::UpdateAfterFile(int64_t run_id, int64_t module_id, bool module_is_new,
                                         const FileFacts& facts) {
  if (module_id == 0) return;
  if (!st_) st_ = std::make_unique<Statements>(sql_);
  Statements& st = *st_;
  if (facts.counters_changed) {
    SQLite::Statement& clear = Fresh(st.clear_spills);
    clear.bind(1, module_id);
    clear.exec();
    SQLite::Statement& spills = Fresh(st.spills);
    spills.bind(":m", module_id);
    spills.bind(":run", run_id);
    spills.exec();
  }
  SQLite::Statement& printed = Fresh(st.printed);
  BindIfSet(printed, 1, facts.total_bytes);
  BindIfSet(printed, 2, facts.schedule_length);
  BindIfSet(printed, 3, facts.peak_time);
  BindIfSet(printed, 4, facts.stack_peak);
  printed.bind(5, module_id);
  printed.exec();
  SQLite::Statement& aggregates = Fresh(st.aggregates);
  aggregates.bind(":m", module_id);
  aggregates.exec();
  if (facts.hlo_fingerprint) {
    SQLite::Statement& fp = Fresh(st.hlo_fingerprint);
    fp.bind(1, HexU64(*facts.hlo_fingerprint));
    fp.bind(2, module_id);
    fp.exec();
  } else if (facts.saw_allocated_values) {
    SQLite::Statement& fp = Fresh(st.value_fingerprint);
    fp.bind(1, HexU64(facts.value_fingerprint));
    fp.bind(2, module_id);
    fp.exec();
  }
  if (facts.rows_changed || facts.saw_allocated_values || module_is_new) Update(module_id);
}

void DerivedModuleFacts::Update(int64_t module_id) {
  if (!st_) st_ = std::make_unique<Statements>(sql_);
  Statements& st = *st_;
  SQLite::Statement& names = Fresh(st.names);
  names.bind(1, module_id);
  if (!names.executeStep()) return;
  const std::string name = names.getColumn(0).getString(), stage = names.getColumn(1).getString(),
                    folder = names.getColumn(2).getString();
  const std::string hlo_signature = names.getColumn(3).isNull() ? std::string() : names.getColumn(3).getString();
  names.reset();  // see EntrySignature
  std::string signature = EntrySignature(st, module_id);
  SQLite::Statement& identity = Fresh(st.identity);
  if (!signature.empty() && !hlo_signature.empty()) {
    identity.bind(3, CompactSignature(signature) == CompactSignature(hlo_signature) ? 1 : 0);
  }
  if (signature.empty()) signature = hlo_signature;  // no buffer assignment: the HLO text's
  identity.bind(1, signature);
  identity.bind(2, ModuleIdentityKey(name, stage, signature, folder));
  identity.bind(4, module_id);
  identity.exec();

  const LivePeaks peaks = ComputeLivePeaks(st, module_id);
  SQLite::Statement& summary = Fresh(st.summary);
  if (peaks.any) {
    summary.bind(1, peaks.all.bytes);
    summary.bind(2, peaks.all.time);
  }
  summary.bind(3, module_id);
  summary.exec();

  SQLite::Statement& clear = Fresh(st.clear_spaces);
  clear.bind(1, module_id);
  clear.exec();
  SQLite::Statement& spaces = Fresh(st.spaces);
  spaces.bind(1, module_id);
  while (spaces.executeStep()) {
    const int64_t color = spaces.getColumn(0).getInt64();
    SQLite::Statement& insert = Fresh(st.insert_space);
    insert.bind(1, module_id);
    insert.bind(2, color);
    insert.bind(3, spaces.getColumn(1).getInt64());
    insert.bind(4, spaces.getColumn(2).getInt64());
    if (auto it = peaks.by_color.find(color); it != peaks.by_color.end()) insert.bind(5, it->second.bytes);
    insert.exec();
  }
}

void UpdateDerivedFactsOfAllModules(SQLite::Database& sql) {
  std::vector<int64_t> ids;
  {
    SQLite::Statement q(sql, "SELECT module_id FROM modules ORDER BY module_id");
    while (q.executeStep()) ids.push_back(q.getColumn(0).getInt64());
  }
  DerivedModuleFacts facts(sql);
  for (int64_t id : ids) facts.Update(id);
}

}  // namespace xladb::store
