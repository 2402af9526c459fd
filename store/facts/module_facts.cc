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
#include "store/facts/module_fact_writes.h"
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
        clear_spills(sql.Prepare("DELETE FROM kernel_spill_summary WHERE module_id = ?")),
        spills(sql.Prepare(kSpillSummarySql)) {}

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

  // The reads, each of a list of modules (kModulesARead at most).
  InListRead names, params, live, spaces, siblings;
  // The writes of a list of modules, a statement a table.
  ModuleFactWrites writes;
  // A module's spill summary, a statement each.
  std::unique_ptr<SqlStatement> clear_spills, spills;
};

namespace {

// Resets a cached statement for its next use.
SqlStatement& Fresh(const std::unique_ptr<SqlStatement>& q) {
  q->Reset();
  q->ClearBindings();
  return *q;
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

// The module's identity facts, from its row and the signature its allocations give, and with them the
// fingerprint its files printed (`facts`, when given: the HLO text's, else the values').
ModuleFactWrites::Identity IdentityOf(int64_t module_id, const ModuleRow& row, std::string signature,
                                      const FileFacts* facts) {
  const bool hlo_fingerprint = facts != nullptr && facts->hlo_fingerprint.has_value();
  const bool value_fingerprint = facts != nullptr && !hlo_fingerprint && facts->saw_allocated_values;
  // A buffer assignment that prints no parameter or output shape (the 2019-2020 format) gives '?' for it.
  const bool partial = signature.find('?') != std::string::npos;
  std::optional<bool> confirmed;
  if (!signature.empty() && !row.hlo_signature.empty() && !partial) {
    confirmed = CompactSignature(signature) == CompactSignature(row.hlo_signature);
  }
  // No buffer assignment, or one with shapes missing: the HLO text's, when there is one.
  if (signature.empty() || (partial && !row.hlo_signature.empty())) signature = row.hlo_signature;
  ModuleFactWrites::Identity out;
  out.module_id = module_id;
  out.key = ModuleIdentityKey(row.name, row.stage, signature, row.folder, row.sharding);
  out.signature = std::move(signature);
  out.confirmed = confirmed;
  out.sharding = row.sharding;
  if (hlo_fingerprint) {
    out.fingerprint = HexU64(*facts->hlo_fingerprint);
    out.fingerprint_of = ModuleFactWrites::FingerprintOf::kHloText;
  } else if (value_fingerprint) {
    out.fingerprint = HexU64(facts->value_fingerprint);
    out.fingerprint_of = ModuleFactWrites::FingerprintOf::kAllocatedValues;
  }
  return out;
}

// A module's summary row: the figures its files printed (`facts`; null: none), and its padded peaks when
// `peaks_read` (NULL: it has no live ranges), else the stored ones stay.
ModuleFactWrites::Summary SummaryOf(int64_t module_id, const FileFacts* facts, bool peaks_read,
                                    std::optional<int64_t> padded_bytes, std::optional<int64_t> padded_time) {
  ModuleFactWrites::Summary out;
  out.module_id = module_id;
  if (facts != nullptr) {
    out.total_bytes = facts->total_bytes;
    out.schedule_length = facts->schedule_length;
    out.peak_time = facts->peak_time;
    out.stack_trace_peak_bytes = facts->stack_peak;
  }
  out.peaks_read = peaks_read;
  out.padded_bytes = padded_bytes;
  out.padded_time = padded_time;
  return out;
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
// one statement a read however many modules), then its writes are sent, one statement a table.
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
    std::vector<ModuleFactWrites::Identity> identities;
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
      identities.push_back(
          IdentityOf(module_id, row->second,
                   EntrySignature(parameters == got.parameters.end() ? kNone : parameters->second, row->second),
                   identity_only ? nullptr : m.facts));
      if (!identity_only) summed.push_back(m);
    }
    st.writes.Identities(sql, identities);
    std::vector<ModuleFactWrites::Summary> summaries;
    std::vector<int64_t> cleared;
    std::vector<ModuleFactWrites::Space> spaces;
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
        summaries.push_back(SummaryOf(m.module_id, m.facts, true, OnlyIf(peaks.any, peaks.all.bytes),
                                      OnlyIf(peaks.any, peaks.all.time)));
        if (!m.created) cleared.push_back(m.module_id);
        const auto stored = got.spaces.find(m.module_id);
        if (stored == got.spaces.end()) continue;
        for (const Space& space : stored->second) {
          const auto peak = peaks.by_color.find(space.color);
          spaces.push_back({m.module_id, space.color, space.allocations, space.bytes,
                            OnlyIf(peak != peaks.by_color.end(),
                                   peak == peaks.by_color.end() ? 0 : peak->second.bytes)});
        }
      }
    }
    st.writes.Summaries(sql, summaries);
    st.writes.Spaces(sql, cleared, spaces);
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
  if (later.hlo_header) {  // as two updates in order: the later sharding, the later signature printed
    std::optional<std::string> signature = later.hlo_header->entry_signature;
    if (!signature && into.hlo_header) signature = std::move(into.hlo_header->entry_signature);
    into.hlo_header = FileFacts::HloHeader{later.hlo_header->entry_sharding, std::move(signature)};
  }
}

void DerivedModuleFacts::UpdateAfterFiles(std::span<const ModuleFiles> modules) {
  Statements& st = statements();
  // The HLO texts' headers first: the identities below read them (a module's own, and its
  // before_optimizations sibling's sharding).
  std::vector<ModuleFactWrites::Header> headers;
  for (const ModuleFiles& m : modules) {
    if (m.module_id == 0 || !m.facts.hlo_header) continue;
    headers.push_back({m.module_id, m.facts.hlo_header->entry_sharding, m.facts.hlo_header->entry_signature});
  }
  st.writes.Headers(sql_, headers);
  std::vector<int64_t> created;  // their summary rows first
  for (const ModuleFiles& m : modules) {
    if (m.module_id != 0 && m.module_is_new) created.push_back(m.module_id);
  }
  st.writes.NewSummaries(sql_, created);
  // The spill summaries of the modules whose counters changed (sent, not awaited); the modules whose rows
  // changed get the rest with their reads below, the others their summary's figures and aggregates here.
  std::vector<int64_t> changed;
  // The others: their figures and aggregates, not their padded peaks.
  std::vector<ModuleFactWrites::Summary> figures_only;
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
      figures_only.push_back(SummaryOf(m.module_id, &facts, false, std::nullopt, std::nullopt));
    }
  }
  st.writes.Summaries(sql_, figures_only);
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
