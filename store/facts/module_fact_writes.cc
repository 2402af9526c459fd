#include "store/facts/module_fact_writes.h"

#include <algorithm>

#include "store/backend/bulk_batch.h"

namespace xladb::store {
namespace {

// The HLO texts' headers of a list of modules, a row each (v): (module_id, hlo_entry_sharding,
// hlo_entry_signature or NULL to keep the stored one).
constexpr const char* kHeadersSql = R"sql(
    UPDATE modules SET hlo_entry_sharding = v.column2,
           hlo_entry_signature = COALESCE(v.column3, hlo_entry_signature)
    FROM (VALUES {rows}) AS v WHERE modules.module_id = v.column1)sql";

// The identity facts of a list of modules, a row each (v): (module_id, entry_signature, identity_key,
// entry_signature_confirmed, entry_sharding, fingerprint, FingerprintOf). A buffer assignment's fingerprint
// never replaces the HLO text's.
constexpr const char* kIdentitiesSql = R"sql(
    UPDATE modules SET entry_signature = v.column2, identity_key = v.column3,
           entry_signature_confirmed = v.column4, entry_sharding = v.column5,
           fingerprint = CASE WHEN v.column7 = 1 OR (v.column7 = 2 AND (fingerprint_source IS NULL OR
                                   fingerprint_source = 'buffer_assignment'))
                              THEN v.column6 ELSE fingerprint END,
           fingerprint_source = CASE WHEN v.column7 = 1 THEN 'hlo_text'
                                     WHEN v.column7 = 2 AND (fingerprint_source IS NULL OR
                                          fingerprint_source = 'buffer_assignment') THEN 'buffer_assignment'
                                     ELSE fingerprint_source END
    FROM (VALUES {rows}) AS v WHERE modules.module_id = v.column1)sql";

// The summaries of a list of modules, a row each (v): (module_id, total_bytes, schedule_length, peak_time,
// stack_trace_peak_bytes, live_peak_padded_bytes, live_peak_padded_time, whether the padded peaks were
// computed: 1, or 0 to keep those stored). The figures the files printed (NULL: leave what is stored), and
// the aggregates, recomputed from the module's rows (a module can span several files). Each table is read
// once (row-value assignments: SQLite 3.15+, PostgreSQL).
constexpr const char* kAggregatesSet = R"sql(
      total_bytes = COALESCE(v.column2, total_bytes), schedule_length = COALESCE(v.column3, schedule_length),
      peak_time = COALESCE(v.column4, peak_time),
      stack_trace_peak_bytes = COALESCE(v.column5, stack_trace_peak_bytes),
      (allocation_bytes, parameter_bytes, output_bytes, temp_bytes, constant_bytes, thread_local_bytes,
       allocation_count) = (
        SELECT SUM(size_bytes),
               COALESCE(SUM(CASE WHEN is_parameter = 1 THEN size_bytes END), 0),
               COALESCE(SUM(CASE WHEN is_maybe_live_out = 1 THEN size_bytes END), 0),
               COALESCE(SUM(CASE WHEN is_preallocated_temp = 1 THEN size_bytes END), 0),
               COALESCE(SUM(CASE WHEN is_constant = 1 THEN size_bytes END), 0),
               COALESCE(SUM(CASE WHEN is_thread_local = 1 THEN size_bytes END), 0),
               COUNT(*)
        FROM allocations WHERE module_id = module_summary.module_id),
      value_count        = (SELECT COUNT(*) FROM buffer_values WHERE module_id = module_summary.module_id),
      live_range_count   = (SELECT COUNT(*) FROM buffer_live_ranges WHERE module_id = module_summary.module_id),
      (peak_bytes, peak_buffer_count) = (
        SELECT COALESCE(MAX(cumulative_bytes), SUM(logical_bytes)), COUNT(*) FROM peak_buffers
        WHERE module_id = module_summary.module_id),
      instruction_count  = (SELECT COUNT(*) FROM instructions WHERE module_id = module_summary.module_id))sql";
// …and the padded peaks, with the default space's bytes, where v.column8 says they were computed.
constexpr const char* kPaddedPeaksSet = R"sql(,
      live_peak_padded_bytes = CASE WHEN v.column8 = 1 THEN v.column6 ELSE live_peak_padded_bytes END,
      live_peak_padded_time = CASE WHEN v.column8 = 1 THEN v.column7 ELSE live_peak_padded_time END,
      color0_total_bytes = CASE WHEN v.column8 = 1
        THEN (SELECT SUM(size_bytes) FROM allocations WHERE module_id = module_summary.module_id AND color = 0)
        ELSE color0_total_bytes END)sql";

// Sends the statements of `rows`, kRowsAStatement at most a statement, `bind(statement, list, row, r)` binding
// row `r` of its statement.
template <typename Row, typename Bind>
void WriteLists(SqlConnection& sql, ValuesList& list, const std::vector<Row>& rows, Bind&& bind) {
  for (size_t at = 0; at < rows.size(); at += ModuleFactWrites::kRowsAStatement) {
    const size_t n = std::min(ModuleFactWrites::kRowsAStatement, rows.size() - at);
    SqlStatement& st = list.For(sql, n);
    for (size_t r = 0; r < n; ++r) bind(st, list, rows[at + r], r);
    st.ExecuteLater();
  }
}

void BindIfSet(SqlStatement& q, int index, const std::optional<int64_t>& v) {
  if (v) q.Bind(index, *v);
}

}  // namespace

ModuleFactWrites::ModuleFactWrites()
    : headers_(kHeadersSql, "(CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT))", 3),
      identities_(kIdentitiesSql,
                  "(CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), "
                  "CAST(? AS TEXT), CAST(? AS BIGINT))",
                  7),
      summaries_(std::string("UPDATE module_summary SET ") + kAggregatesSet + kPaddedPeaksSet +
                     " FROM (VALUES {rows}) AS v WHERE module_summary.module_id = v.column1",
                 "(CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), "
                 "CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))",
                 8),
      // ON CONFLICT: a module rebuilt for a second pass was given its row again (FileReplacement).
      new_summaries_("INSERT INTO module_summary(module_id) SELECT module_id FROM modules "
                     "WHERE module_id IN ({ids}) ON CONFLICT DO NOTHING"),
      clear_spaces_("DELETE FROM module_memory_spaces WHERE module_id IN ({ids})") {}

namespace {

// Runs `list`'s statement (not awaited) for `ids`, InListRead::kMaxKeys at most a statement.
void ForEachKeyList(SqlConnection& sql, InListRead& list, std::span<const int64_t> ids) {
  for (size_t at = 0; at < ids.size(); at += InListRead::kMaxKeys) {
    list.For(sql, ids.subspan(at, std::min(InListRead::kMaxKeys, ids.size() - at))).ExecuteLater();
  }
}

}  // namespace

void ModuleFactWrites::NewSummaries(SqlConnection& sql, std::span<const int64_t> modules) {
  ForEachKeyList(sql, new_summaries_, modules);
}

void ModuleFactWrites::Headers(SqlConnection& sql, const std::vector<Header>& rows) {
  WriteLists(sql, headers_, rows, [](SqlStatement& q, const ValuesList& list, const Header& row, size_t r) {
    q.Bind(list.Param(r, 0), row.module_id);
    q.Bind(list.Param(r, 1), row.entry_sharding);
    if (row.entry_signature) q.Bind(list.Param(r, 2), *row.entry_signature);
  });
}

void ModuleFactWrites::Identities(SqlConnection& sql, const std::vector<Identity>& rows) {
  WriteLists(sql, identities_, rows, [](SqlStatement& q, const ValuesList& list, const Identity& row, size_t r) {
    q.Bind(list.Param(r, 0), row.module_id);
    q.Bind(list.Param(r, 1), row.signature);
    q.Bind(list.Param(r, 2), row.key);
    if (row.confirmed) q.Bind(list.Param(r, 3), int64_t{*row.confirmed ? 1 : 0});
    q.Bind(list.Param(r, 4), row.sharding);
    if (row.fingerprint) q.Bind(list.Param(r, 5), *row.fingerprint);
    q.Bind(list.Param(r, 6), static_cast<int64_t>(row.fingerprint_of));
  });
}

void ModuleFactWrites::Summaries(SqlConnection& sql, const std::vector<Summary>& rows) {
  WriteLists(sql, summaries_, rows, [](SqlStatement& q, const ValuesList& list, const Summary& row, size_t r) {
    q.Bind(list.Param(r, 0), row.module_id);
    BindIfSet(q, list.Param(r, 1), row.total_bytes);
    BindIfSet(q, list.Param(r, 2), row.schedule_length);
    BindIfSet(q, list.Param(r, 3), row.peak_time);
    BindIfSet(q, list.Param(r, 4), row.stack_trace_peak_bytes);
    BindIfSet(q, list.Param(r, 5), row.padded_bytes);
    BindIfSet(q, list.Param(r, 6), row.padded_time);
    q.Bind(list.Param(r, 7), int64_t{row.peaks_read ? 1 : 0});
  });
}

void ModuleFactWrites::Spaces(SqlConnection& sql, std::span<const int64_t> cleared, const std::vector<Space>& rows) {
  ForEachKeyList(sql, clear_spaces_, cleared);
  static const BulkInsert kSpaceInsert{"module_memory_spaces",
                                       "module_id, color, allocation_count, total_bytes, live_peak_padded_bytes", "",
                                       0};
  BulkBatch batch(&kSpaceInsert);
  for (const Space& row : rows) {
    batch.Int(row.module_id);
    batch.Int(row.color);
    batch.Int(row.allocations);
    batch.Int(row.bytes);
    batch.Opt(row.padded_bytes);
    (void)batch.EndRow(sql);
  }
  (void)batch.Flush(sql);
}

}  // namespace xladb::store
