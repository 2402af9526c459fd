#include "store/facts/module_facts.h"

#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/backend/in_list_read.h"
#include "store/backend/row_binding.h"
#include "store/facts/live_bytes.h"
#include "store/facts/shape_text.h"

namespace xladb::store {

struct DerivedModuleFacts::Statements {
  explicit Statements(SqlConnection& sql)
      : names(
            "SELECT m.module_id, m.name, m.stage, m.folder, m.hlo_entry_signature, "
            // The shardings of the module's before_optimizations text (the same name, number and folder; the
            // module itself at that stage; numbers repeat in a run, so the name counts), which
            // keeps the program's own in/out shardings, else its own text's: ingest/text/entry_sharding.h.
            "       COALESCE((SELECT b.hlo_entry_sharding FROM modules b WHERE b.run_id = m.run_id "
            "                   AND b.name = m.name AND b.xla_module_id = m.xla_module_id AND b.folder = m.folder "
            "                   AND b.stage = 'before_optimizations' AND b.hlo_entry_sharding IS NOT NULL "
            "                 ORDER BY b.module_id LIMIT 1), m.hlo_entry_sharding, ''), "
            // In the same statement: the output shape the first allocation that prints one gives, how many
            // allocations and live ranges the module has.
            "       (SELECT output_shape FROM allocations WHERE module_id = m.module_id AND output_shape IS NOT NULL "
            "         ORDER BY allocation_index LIMIT 1), "
            "       (SELECT COUNT(*) FROM allocations WHERE module_id = m.module_id), "
            "       (SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = m.module_id) "
            "FROM modules m WHERE m.module_id IN ({ids})"),
        params("SELECT module_id, parameter_number, parameter_shape FROM allocations "
               "WHERE module_id IN ({ids}) AND is_parameter = 1 AND parameter_number IS NOT NULL "
               "ORDER BY module_id, parameter_number, parameter_shape_index, allocation_index"),
        live(kLiveSlicesOfModulesSql),
        spaces("SELECT module_id, color, COUNT(*), SUM(size_bytes) FROM allocations WHERE module_id IN ({ids}) "
               "GROUP BY module_id, color ORDER BY module_id, color"),
        siblings("SELECT DISTINCT s.module_id FROM modules m JOIN modules s ON s.run_id = m.run_id "
                 "AND s.name = m.name AND s.xla_module_id = m.xla_module_id AND s.folder = m.folder "
                 "AND s.module_id <> m.module_id WHERE m.module_id IN ({ids}) ORDER BY s.module_id"),
        identity(sql.Prepare(IdentitySql(""))),
        identity_hlo_fingerprint(sql.Prepare(IdentitySql(", fingerprint = ?6, fingerprint_source = 'hlo_text'"))),
        // A buffer assignment's fingerprint never replaces the HLO text's.
        identity_value_fingerprint(sql.Prepare(IdentitySql(
            ", fingerprint = CASE WHEN fingerprint_source IS NULL OR fingerprint_source = 'buffer_assignment' "
            "                     THEN ?6 ELSE fingerprint END, "
            "fingerprint_source = CASE WHEN fingerprint_source IS NULL OR fingerprint_source = 'buffer_assignment' "
            "                          THEN 'buffer_assignment' ELSE fingerprint_source END"))),
        clear_spaces(sql.Prepare("DELETE FROM module_memory_spaces WHERE module_id = ?")),
        insert_space(sql.Prepare("INSERT INTO module_memory_spaces(module_id, color, allocation_count, total_bytes, "
                     "live_peak_padded_bytes) VALUES (?, ?, ?, ?, ?)")),
        clear_spills(sql.Prepare("DELETE FROM kernel_spill_summary WHERE module_id = ?")),
        spills(sql.Prepare(kSpillSummarySql)),
        aggregates(sql.Prepare(std::string("UPDATE module_summary SET ") + kAggregatesSet + " WHERE module_id = ?1")),
        aggregates_and_peaks(sql.Prepare(
            std::string("UPDATE module_summary SET ") + kAggregatesSet +
            ", live_peak_padded_bytes = ?6, live_peak_padded_time = ?7, "
            "color0_total_bytes = (SELECT SUM(size_bytes) FROM allocations WHERE module_id = ?1 AND color = 0) "
            "WHERE module_id = ?1")) {}

  // A module's identity facts (?1..?4 of module ?5), and what `more` sets with them (its fingerprint): one
  // UPDATE of the module's row.
  static std::string IdentitySql(const char* more) {
    return std::string("UPDATE modules SET entry_signature = ?1, identity_key = ?2, entry_signature_confirmed = ?3, "
                       "entry_sharding = ?4") + more + " WHERE module_id = ?5";
  }

  // A module's kernel_spill_summary rows from its counter lines (all of its reports).
  static constexpr const char* kSpillSummarySql = R"sql(
      INSERT INTO kernel_spill_summary(module_id, kernel, run_id, vmem_spills, vmem_fills, smem_spills, smem_fills,
                                       bundles, vmem_spill_rate, vmem_fill_rate, smem_spill_rate, smem_fill_rate)
      SELECT ?1, kernel, ?2, vs, vf, ss, sf, vs_den,
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
            WHERE module_id = ?1
              AND counter IN ('VMEM_SPILL_COUNT', 'VMEM_FILL_COUNT', 'SMEM_SPILL_COUNT', 'SMEM_FILL_COUNT')
            GROUP BY kernel) AS per_kernel)sql";

  // module_summary's figures the files printed (?2..?5, NULL: leave what is stored), and its aggregates,
  // recomputed from the module's rows (a module can span several files), for module ?1. Each table is read once
  // (row-value assignments: SQLite 3.15+, PostgreSQL).
  static constexpr const char* kAggregatesSet = R"sql(
        total_bytes = COALESCE(?2, total_bytes), schedule_length = COALESCE(?3, schedule_length),
        peak_time = COALESCE(?4, peak_time), stack_trace_peak_bytes = COALESCE(?5, stack_trace_peak_bytes),
        (allocation_bytes, parameter_bytes, output_bytes, temp_bytes, constant_bytes, thread_local_bytes,
         allocation_count) = (
          SELECT SUM(size_bytes),
                 COALESCE(SUM(CASE WHEN is_parameter = 1 THEN size_bytes END), 0),
                 COALESCE(SUM(CASE WHEN is_maybe_live_out = 1 THEN size_bytes END), 0),
                 COALESCE(SUM(CASE WHEN is_preallocated_temp = 1 THEN size_bytes END), 0),
                 COALESCE(SUM(CASE WHEN is_constant = 1 THEN size_bytes END), 0),
                 COALESCE(SUM(CASE WHEN is_thread_local = 1 THEN size_bytes END), 0),
                 COUNT(*)
          FROM allocations WHERE module_id = ?1),
        value_count        = (SELECT COUNT(*) FROM buffer_values WHERE module_id = ?1),
        live_range_count   = (SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = ?1),
        (peak_bytes, peak_buffer_count) = (
          SELECT COALESCE(MAX(cumulative_bytes), SUM(logical_bytes)), COUNT(*) FROM peak_buffers WHERE module_id = ?1),
        instruction_count  = (SELECT COUNT(*) FROM instructions WHERE module_id = ?1))sql";

  // The reads, each of a list of modules (kModulesARead at most).
  InListRead names, params, live, spaces, siblings;
  // The writes, each of one module: a module's row once a group (its identity, with its fingerprint when its
  // files printed one), its summary once (aggregates, with the padded peak when its rows were read).
  std::unique_ptr<SqlStatement> identity, identity_hlo_fingerprint, identity_value_fingerprint, clear_spaces,
      insert_space, clear_spills, spills, aggregates, aggregates_and_peaks;
};

namespace {

// Resets a cached statement for its next use.
SqlStatement& Fresh(const std::unique_ptr<SqlStatement>& q) {
  q->Reset();
  q->ClearBindings();
  return *q;
}

// Binds `v`, or leaves the parameter NULL (Fresh cleared it).
void BindIfSet(SqlStatement& q, int index, const std::optional<int64_t>& v) {
  if (v) q.Bind(index, *v);
}

// Binds the aggregates' module (?1) and the figures its files printed (?2..?5; NULL: `facts` is null or has
// none, and the stored figure stays).
void BindAggregates(SqlStatement& q, int64_t module_id, const FileFacts* facts) {
  q.Bind(1, module_id);
  if (facts == nullptr) return;
  BindIfSet(q, 2, facts->total_bytes);
  BindIfSet(q, 3, facts->schedule_length);
  BindIfSet(q, 4, facts->peak_time);
  BindIfSet(q, 5, facts->stack_peak);
}

std::string HexU64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Binds a cached statement of one module for its next run.
SqlStatement& ForModule(const std::unique_ptr<SqlStatement>& q, int64_t module_id) {
  SqlStatement& st = Fresh(q);
  st.Bind(1, module_id);
  return st;
}

// How many modules one read asks about (an IN list of that many ids at most), and how many live ranges one
// read of live slices holds (32 MiB of SliceUse; a module with more is read alone).
constexpr size_t kModulesARead = 256;
constexpr int64_t kSlicesARead = int64_t{1} << 20;

// A module's row and what the `names` read counts with it.
struct ModuleRow {
  std::string name, stage, folder, hlo_signature, sharding;
  std::optional<std::string> output_shape;  // the first allocation's that prints one
  int64_t allocations = 0, live_ranges = 0;
};

// A parameter allocation's number and shape (nullopt: printed without one).
struct ParameterShape {
  int64_t number;
  std::optional<std::string> shape;
};

struct Space {
  int64_t color, allocations, bytes;
};

// What the reads of a list of modules gave, by module id (a module without a row is not in `rows`).
struct ModuleReads {
  std::unordered_map<int64_t, ModuleRow> rows;
  std::unordered_map<int64_t, std::vector<ParameterShape>> parameters;
  std::unordered_map<int64_t, std::vector<Space>> spaces;  // with the padded-memory reads only
};

// The live slices of some of them, and the last live_end of each one's.
struct Slices {
  std::unordered_map<int64_t, std::vector<SliceUse>> uses;
  std::unordered_map<int64_t, int32_t> last_time;
};

void ReadModuleRows(SqlStatement& names, ModuleReads& into) {
  while (names.Step()) {
    ModuleRow& row = into.rows[names.Int(0)];
    row.name = names.Text(1);
    row.stage = names.Text(2);
    row.folder = names.Text(3);
    if (!names.IsNull(4)) row.hlo_signature = names.Text(4);
    row.sharding = names.Text(5);
    if (!names.IsNull(6)) row.output_shape = names.Text(6);
    row.allocations = names.Int(7);
    row.live_ranges = names.Int(8);
  }
  names.Reset();  // a statement left on a row would hold a read transaction open after the group's COMMIT
}

void ReadParameters(SqlStatement& params, ModuleReads& into) {
  while (params.Step()) {
    into.parameters[params.Int(0)].push_back(
        {params.Int(1), params.IsNull(2) ? std::nullopt : std::optional<std::string>(params.Text(2))});
  }
  params.Reset();
}

// Steps `live` (kLiveSlicesOfModulesSql) to its end, each row's SliceUse to its module's slices (rows
// ReadSliceUse refuses are skipped).
void ReadSlices(SqlStatement& live, const ModuleReads& modules, Slices& into) {
  std::vector<SliceUse>* uses = nullptr;
  int32_t* last_time = nullptr;
  int64_t module_id = 0;
  while (live.Step()) {
    SliceUse u;
    if (!ReadSliceUse(live, &u)) continue;
    if (uses == nullptr || live.Int(8) != module_id) {
      module_id = live.Int(8);
      uses = &into.uses[module_id];
      const auto row = modules.rows.find(module_id);
      if (uses->empty() && row != modules.rows.end()) {
        uses->reserve(static_cast<size_t>(row->second.live_ranges));  // no regrowth (a 1 GiB file has 1.3 M)
      }
      last_time = &into.last_time[module_id];
    }
    *last_time = std::max(*last_time, u.end);
    uses->push_back(u);
  }
  live.Reset();  // its rows (1.3 M for a 1 GiB file's module, held whole on PostgreSQL) are read
}

void ReadSpaces(SqlStatement& spaces, ModuleReads& into) {
  while (spaces.Step()) into.spaces[spaces.Int(0)].push_back({spaces.Int(1), spaces.Int(2), spaces.Int(3)});
  spaces.Reset();
}

std::string EntrySignature(const std::vector<ParameterShape>& parameters, const ModuleRow& row) {
  if (row.allocations == 0) return {};
  // Per parameter number, its distinct shapes in shape-index order.
  std::vector<std::pair<int64_t, std::vector<std::string>>> by_number;
  for (const ParameterShape& p : parameters) {
    std::string shape = p.shape ? ShapeWithoutComments(*p.shape) : std::string("?");
    if (by_number.empty() || by_number.back().first != p.number) by_number.push_back({p.number, {}});
    auto& shapes = by_number.back().second;
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(std::move(shape));
  }
  const std::string out = row.output_shape ? ShapeWithoutComments(*row.output_shape) : std::string("?");

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

// Sends the module's identity facts (not awaited), from its row and the signature its allocations give, and
// with them the fingerprint its files printed (`facts`, when given: the HLO text's, else the values').
void WriteIdentity(DerivedModuleFacts::Statements& st, int64_t module_id, const ModuleRow& row,
                   std::string signature, const FileFacts* facts) {
  const bool hlo_fingerprint = facts != nullptr && facts->hlo_fingerprint.has_value();
  const bool value_fingerprint = facts != nullptr && !hlo_fingerprint && facts->saw_allocated_values;
  SqlStatement& identity = Fresh(hlo_fingerprint     ? st.identity_hlo_fingerprint
                                 : value_fingerprint ? st.identity_value_fingerprint
                                                     : st.identity);
  // A buffer assignment that prints no parameter or output shape (the 2019-2020 format) gives '?' for it.
  const bool partial = signature.find('?') != std::string::npos;
  std::optional<bool> confirmed;  // NULL: nothing to compare
  if (!signature.empty() && !row.hlo_signature.empty() && !partial) {
    confirmed = CompactSignature(signature) == CompactSignature(row.hlo_signature);
  }
  // No buffer assignment, or one with shapes missing: the HLO text's, when there is one.
  if (signature.empty() || (partial && !row.hlo_signature.empty())) signature = row.hlo_signature;
  BindRow(identity, signature, ModuleIdentityKey(row.name, row.stage, signature, row.folder, row.sharding),
          confirmed, row.sharding, module_id);
  if (hlo_fingerprint) identity.Bind(6, HexU64(*facts->hlo_fingerprint));
  if (value_fingerprint) identity.Bind(6, HexU64(facts->value_fingerprint));
  identity.ExecuteLater();
}

// The padded live peak, over all colors and per color.
struct LivePeaks {
  bool any = false;  // the module has live ranges
  LivePeak all;
  std::map<int64_t, LivePeak> by_color;
};

LivePeaks ComputeLivePeaks(std::vector<SliceUse>& uses, int32_t last_time) {
  LivePeaks peaks;
  if (uses.empty()) return peaks;
  peaks.any = true;
  LiveBytes all(last_time);
  std::map<int64_t, LiveBytes> by_color;
  ForEachLiveSlice(uses, [&](int32_t start, int32_t end, int64_t size, int32_t color) {
    all.Add(start, end, size);
    by_color.try_emplace(color, last_time).first->second.Add(start, end, size);
  });
  peaks.all = all.Peak();
  for (const auto& [color, bytes] : by_color) peaks.by_color[color] = bytes.Peak();
  return peaks;
}

// What the files of a group printed of each module and whether they created it (UpdateAfterFiles), by module id.
using PrintedFacts = std::unordered_map<int64_t, const ModuleFiles*>;

// Calls fn(list) on each list of at most `most` of `ids`, in their order.
template <typename Fn>
void ForEachList(std::span<const int64_t> ids, size_t most, Fn&& fn) {
  for (size_t at = 0; at < ids.size(); at += most) fn(ids.subspan(at, std::min(most, ids.size() - at)));
}

// Recomputes the identity facts of the modules `ids` and, unless `identity_only`, their summaries' aggregates
// and padded-memory facts (module_facts.h), with the figures and fingerprints `printed` holds for them (none
// when null), a list of kModulesARead at a time: the list's reads run together (one round trip on PostgreSQL,
// one statement a read however many modules), then its writes are sent, one row update a module and table.
// The live slices are read for as many of the list's modules as hold kSlicesARead live ranges together (or
// one module's), each module's peak computed and its slices dropped before the next read: a group of big
// buffer assignments holds one read's slices at a time. No write changes what a read reads. Returns each
// module's stage (a module without a row is left out).
std::unordered_map<int64_t, std::string> UpdateModules(SqlConnection& sql, DerivedModuleFacts::Statements& st,
                                                       std::span<const int64_t> ids, bool identity_only,
                                                       const PrintedFacts* printed = nullptr) {
  std::unordered_map<int64_t, std::string> stages;
  ForEachList(ids, kModulesARead, [&](std::span<const int64_t> list) {
    std::vector<SqlStatement*> reads = {&st.names.For(sql, list), &st.params.For(sql, list)};
    if (!identity_only) reads.push_back(&st.spaces.For(sql, list));
    sql.RunTogether(reads);
    ModuleReads got;
    ReadModuleRows(*reads[0], got);
    ReadParameters(*reads[1], got);
    if (!identity_only) ReadSpaces(*reads[2], got);
    struct Summed {
      int64_t module_id;
      const FileFacts* facts;  // what its files printed (null: nothing)
      bool created;            // by the group's files: no memory spaces stored yet
    };
    std::vector<Summed> summed;  // the modules whose summaries follow, in list order
    for (const int64_t module_id : list) {
      const auto row = got.rows.find(module_id);
      if (row == got.rows.end() || stages.count(module_id) > 0) continue;
      stages.emplace(module_id, row->second.stage);
      Summed m{module_id, nullptr, false};
      if (printed != nullptr) {
        if (const auto p = printed->find(module_id); p != printed->end()) {
          m.facts = &p->second->facts;
          m.created = p->second->module_is_new;
        }
      }
      static const std::vector<ParameterShape> kNone;
      const auto parameters = got.parameters.find(module_id);
      WriteIdentity(st, module_id, row->second,
                    EntrySignature(parameters == got.parameters.end() ? kNone : parameters->second, row->second),
                    identity_only ? nullptr : m.facts);
      if (!identity_only) summed.push_back(m);
    }
    // The summaries, the live slices of a few modules a read.
    for (size_t from = 0; from < summed.size();) {
      size_t to = from;
      std::vector<int64_t> read_ids;
      for (int64_t held = 0; to < summed.size(); ++to) {
        held += got.rows.at(summed[to].module_id).live_ranges;
        if (to > from && held > kSlicesARead) break;
        read_ids.push_back(summed[to].module_id);
      }
      Slices slices;
      ReadSlices(st.live.For(sql, read_ids), got, slices);
      for (; from < to; ++from) {
        const Summed& m = summed[from];
        LivePeaks peaks;
        if (auto uses = slices.uses.find(m.module_id); uses != slices.uses.end()) {
          peaks = ComputeLivePeaks(uses->second, slices.last_time[m.module_id]);
          std::vector<SliceUse>().swap(uses->second);
        }
        SqlStatement& summary = Fresh(st.aggregates_and_peaks);
        BindAggregates(summary, m.module_id, m.facts);
        BindIfSet(summary, 6, OnlyIf(peaks.any, peaks.all.bytes));
        BindIfSet(summary, 7, OnlyIf(peaks.any, peaks.all.time));
        summary.ExecuteLater();
        if (!m.created) ForModule(st.clear_spaces, m.module_id).ExecuteLater();
        static const std::vector<Space> kNoSpaces;
        const auto spaces = got.spaces.find(m.module_id);
        for (const Space& space : spaces == got.spaces.end() ? kNoSpaces : spaces->second) {
          SqlStatement& insert = Fresh(st.insert_space);
          const auto peak = peaks.by_color.find(space.color);
          BindRow(insert, m.module_id, space.color, space.allocations, space.bytes,
                  OnlyIf(peak != peaks.by_color.end(), peak == peaks.by_color.end() ? 0 : peak->second.bytes));
          insert.ExecuteLater();
        }
      }
    }
  });
  return stages;
}

}  // namespace

std::string ModuleIdentityKey(const std::string& name, const std::string& stage, const std::string& entry_signature,
                              const std::string& folder, const std::string& entry_sharding) {
  std::string joined;
  for (const std::string* part : {&name, &stage, &entry_signature, &folder}) {
    joined += *part;
    joined.push_back('\0');  // no part holds a NUL: the parts cannot run into each other
  }
  // Only when there is one: the keys of unsharded modules are those of version 6 and before.
  if (!entry_sharding.empty()) joined += entry_sharding + '\0';
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(joined.data(), joined.size())));
  return hex;
}

DerivedModuleFacts::DerivedModuleFacts(SqlConnection& sql) : sql_(sql) {}
DerivedModuleFacts::~DerivedModuleFacts() = default;

void MergeLaterFile(FileFacts& into, const FileFacts& later) {
  auto later_if_set = [](auto& to, const auto& from) {
    if (from) to = from;
  };
  later_if_set(into.total_bytes, later.total_bytes);
  later_if_set(into.schedule_length, later.schedule_length);
  later_if_set(into.peak_time, later.peak_time);
  later_if_set(into.stack_peak, later.stack_peak);
  later_if_set(into.hlo_fingerprint, later.hlo_fingerprint);
  if (later.saw_allocated_values) {  // the last buffer assignment's values give the value fingerprint
    into.saw_allocated_values = true;
    into.value_fingerprint = later.value_fingerprint;
  }
  into.counters_changed |= later.counters_changed;
  into.rows_changed |= later.rows_changed;
  into.entry_sharding_changed |= later.entry_sharding_changed;
}

void DerivedModuleFacts::UpdateAfterFiles(std::span<const ModuleFiles> modules) {
  Statements& st = statements();
  // The spill summaries of the modules whose counters changed (sent, not awaited); the modules whose rows
  // changed get the rest with their reads below, the others their summary's figures and aggregates here.
  std::vector<int64_t> changed;
  PrintedFacts printed;
  for (const ModuleFiles& m : modules) {
    if (m.module_id == 0) continue;
    const FileFacts& facts = m.facts;
    if (facts.counters_changed) {
      ForModule(st.clear_spills, m.module_id).ExecuteLater();
      SqlStatement& spills = Fresh(st.spills);
      BindRow(spills, m.module_id, m.run_id);
      spills.ExecuteLater();
    }
    // A fingerprint comes with rows (an HLO text's header, a buffer assignment's values): such a module is
    // one of `changed`, and its fingerprint goes with its identity.
    if (facts.rows_changed || facts.saw_allocated_values || m.module_is_new) {
      changed.push_back(m.module_id);
      printed.emplace(m.module_id, &m);
    } else {
      SqlStatement& aggregates = Fresh(st.aggregates);
      BindAggregates(aggregates, m.module_id, &facts);
      aggregates.ExecuteLater();
    }
  }
  const std::unordered_map<int64_t, std::string> stages = UpdateModules(sql_, st, changed, false, &printed);
  // A before_optimizations text gives its module's other stages their sharding: their identity again.
  std::vector<int64_t> sharding_sources;
  for (const ModuleFiles& m : modules) {
    const auto stage = stages.find(m.module_id);
    if (m.facts.entry_sharding_changed && stage != stages.end() && stage->second == "before_optimizations") {
      sharding_sources.push_back(m.module_id);
    }
  }
  std::vector<int64_t> siblings;
  ForEachList(sharding_sources, kModulesARead, [&](std::span<const int64_t> list) {
    SqlStatement& q = st.siblings.For(sql_, list);
    while (q.Step()) siblings.push_back(q.Int(0));
    q.Reset();
  });
  std::sort(siblings.begin(), siblings.end());
  siblings.erase(std::unique(siblings.begin(), siblings.end()), siblings.end());
  // A sibling updated above read the sharding this group stored already (every read follows all the group's
  // writes, and no identity write changes what an identity read reads): not again.
  std::erase_if(siblings, [&](int64_t id) { return stages.count(id) > 0; });
  (void)UpdateModules(sql_, st, siblings, true);
}

DerivedModuleFacts::Statements& DerivedModuleFacts::statements() {
  if (!st_) st_ = std::make_unique<Statements>(sql_);
  return *st_;
}

std::string DerivedModuleFacts::UpdateIdentity(int64_t module_id) {
  const auto stages = UpdateModules(sql_, statements(), std::span<const int64_t>(&module_id, 1), true);
  return stages.empty() ? std::string() : stages.begin()->second;
}

std::string DerivedModuleFacts::Update(int64_t module_id) {
  const auto stages = UpdateModules(sql_, statements(), std::span<const int64_t>(&module_id, 1), false);
  return stages.empty() ? std::string() : stages.begin()->second;
}

void UpdateDerivedFactsOfAllModules(SqlConnection& sql) {
  std::vector<int64_t> ids;
  {
    auto q = sql.Prepare("SELECT module_id FROM modules ORDER BY module_id");
    while (q->Step()) ids.push_back(q->Int(0));
  }
  DerivedModuleFacts::Statements st(sql);
  (void)UpdateModules(sql, st, ids, false);
}

}  // namespace xladb::store
