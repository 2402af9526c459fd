#include "service/result_protos.h"

#include "service/attribution_proto.h"
#include "service/proto_fields.h"

namespace xladb::service {

// The parts of the results above: internal (static), beside the public overloads so that one name finds all.

static v1::CheckedModule::Status ToProto(store::CheckedModule::Status s) {
  using S = store::CheckedModule::Status;
  switch (s) {
    case S::kRegressed: return v1::CheckedModule::REGRESSED;
    case S::kImproved: return v1::CheckedModule::IMPROVED;
    case S::kUnchanged: return v1::CheckedModule::UNCHANGED;
    case S::kAdded: return v1::CheckedModule::ADDED;
    case S::kRemoved: return v1::CheckedModule::REMOVED;
    case S::kAmbiguous: return v1::CheckedModule::AMBIGUOUS;
    case S::kAccepted: return v1::CheckedModule::ACCEPTED;
    case S::kIgnored: return v1::CheckedModule::IGNORED;
    case S::kReshaped: return v1::CheckedModule::RESHAPED;
    case S::kOverBudget: return v1::CheckedModule::OVER_BUDGET;
    case S::kWithinBudget: return v1::CheckedModule::WITHIN_BUDGET;
  }
  return v1::CheckedModule::STATUS_UNSPECIFIED;
}

static v1::ModuleChange::Change ToProto(store::ModuleDiff::Change c) {
  switch (c) {
    case store::ModuleDiff::Change::kAdded: return v1::ModuleChange::ADDED;
    case store::ModuleDiff::Change::kRemoved: return v1::ModuleChange::REMOVED;
    case store::ModuleDiff::Change::kChanged: return v1::ModuleChange::CHANGED;
    case store::ModuleDiff::Change::kUnchanged: return v1::ModuleChange::UNCHANGED;
  }
  return v1::ModuleChange::CHANGE_UNSPECIFIED;
}

static v1::CheckRunResponse::Verdict ToProto(store::CheckResult::Verdict v) {
  switch (v) {
    case store::CheckResult::Verdict::kPass: return v1::CheckRunResponse::PASS;
    case store::CheckResult::Verdict::kFail: return v1::CheckRunResponse::FAIL;
    case store::CheckResult::Verdict::kInconclusive: return v1::CheckRunResponse::INCONCLUSIVE;
  }
  return v1::CheckRunResponse::INCONCLUSIVE;
}

// The attribution's peak and schedule fields read -1 (unknown) unless an attribution fills them.
template <typename Message>
static void AttributionOrUnknown(const std::optional<store::Attribution>& attribution, Message* out) {
  out->set_baseline_peak_time(-1);
  out->set_current_peak_time(-1);
  out->set_baseline_schedule_length(-1);
  out->set_current_schedule_length(-1);
  if (attribution) AttributionToProto(*attribution, out);
}

static void ToProto(const store::TopBuffer& b, v1::Buffer* out) {
  using S = store::TopBuffer;
  static const ProtoFields<S, v1::Buffer> kFields = {
      {"ordinal", &S::ordinal},
      {"instruction", &S::instruction},
      {"shape_index", &S::shape_index},
      {"logical_bytes", &S::logical_bytes},
      {"value_id", &S::value_id},
      {"allocation_index", &S::allocation_index},
      {"size_bytes", &S::size_bytes},
      {"shape", &S::shape},
      {"opcode", &S::opcode},
      {"op_name", &S::op_name},
      {"source_file", &S::source_file},
      {"source_line", &S::source_line},
      {"live_start", &S::live_start},
      {"live_end", &S::live_end},
      {"shape_bytes", &S::shape_bytes},
  };
  kFields.Copy(b, out);
}

static void ToProto(const store::ModuleDiff& m, v1::ModuleChange* out) {
  using S = store::ModuleDiff;
  static const ProtoFields<S, v1::ModuleChange> kFields = {
      {"module_name", &S::module_name},
      {"stage", &S::stage},
      {"xla_module_id_a", &S::xla_module_id_a},
      {"xla_module_id_b", &S::xla_module_id_b},
      {"fingerprint_a", &S::fingerprint_a},
      {"fingerprint_b", &S::fingerprint_b},
      {"peak_a", &S::peak_a},
      {"peak_b", &S::peak_b},
      {"total_a", &S::total_a},
      {"total_b", &S::total_b},
      {"temp_a", &S::temp_a},
      {"temp_b", &S::temp_b},
      {"folder", &S::folder},
      {"entry_signature", &S::entry_signature},
      {"matched_by", &S::matched_by},
      {"live_peak_padded_a", &S::live_peak_padded_a},
      {"live_peak_padded_b", &S::live_peak_padded_b},
      {"buffer_changes", &S::buffer_changes},
      {"entry_signature_a", &S::entry_signature_a},
  };
  kFields.Copy(m, out);
  out->set_change(ToProto(m.change));
  for (const auto& b : m.buffers) ToProto(b, out->add_buffers());
  for (const auto& s : m.by_source) ToProto(s, out->add_by_source());
}

static void ToProto(const store::MetricDelta& d, v1::MetricDelta* out) {
  using S = store::MetricDelta;
  static const ProtoFields<S, v1::MetricDelta> kFields = {
      {"metric", &S::metric},   {"baseline", &S::baseline},   {"current", &S::current},
      {"delta", &S::delta},     {"regressed", &S::regressed},
  };
  kFields.Copy(d, out);
}

static void ToProto(const store::CheckedModule& m, v1::CheckedModule* out) {
  using S = store::CheckedModule;
  static const ProtoFields<S, v1::CheckedModule> kFields = {
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"entry_signature", &S::entry_signature},
      {"xla_module_id", &S::xla_module_id},
      {"baseline_xla_module_id", &S::baseline_xla_module_id},
      {"fingerprint", &S::fingerprint},
      {"baseline_fingerprint", &S::baseline_fingerprint},
      {"matched_by", &S::matched_by},
      {"accepted_reason", &S::accepted_reason},
      {"baseline_entry_signature", &S::baseline_entry_signature},
      {"reshaped", &S::reshaped},
      {"peak_metric", &S::peak_metric},
      {"entry_sharding", &S::entry_sharding},
      {"baseline_entry_sharding", &S::baseline_entry_sharding},
  };
  kFields.Copy(m, out);
  out->set_status(ToProto(m.status));
  for (const auto& d : m.metrics) ToProto(d, out->add_metrics());
  AttributionOrUnknown(m.attribution, out);
  if (m.budget) ToProto(*m.budget, out->mutable_budget());
}

static void ToProto(const store::ErrorFile& f, v1::GateErrorFile* out) {
  using S = store::ErrorFile;
  static const ProtoFields<S, v1::GateErrorFile> kFields = {
      {"run_name", &S::run}, {"path", &S::path},       {"kind", &S::kind},     {"reason", &S::reason},
      {"module", &S::module}, {"xla_module_id", &S::xla_module_id}, {"judged", &S::judged},
  };
  kFields.Copy(f, out);
}

static void ToProto(const store::RetraceChange& c, v1::RetraceChange* out) {
  using S = store::RetraceChange;
  static const ProtoFields<S, v1::RetraceChange> kFields = {
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"baseline_compiles", &S::baseline_compiles},
      {"current_compiles", &S::current_compiles},
      {"failed", &S::failed},
  };
  kFields.Copy(c, out);
}

static void ToProto(const store::ChangePoint& c, v1::ChangePoint* out) {
  using S = store::ChangePoint;
  static const ProtoFields<S, v1::ChangePoint> kFields = {
      {"run_name", &S::run},
      {"previous_run_name", &S::previous_run},
      {"run_time_us", &S::run_time_us},
      {"previous_run_time_us", &S::previous_run_time_us},
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"entry_signature", &S::entry_signature},
      {"previous_entry_signature", &S::previous_entry_signature},
      {"entry_sharding", &S::entry_sharding},
      {"previous_entry_sharding", &S::previous_entry_sharding},
      {"xla_module_id", &S::xla_module_id},
      {"previous_xla_module_id", &S::previous_xla_module_id},
      {"compiles", &S::compiles},
      {"previous_compiles", &S::previous_compiles},
      {"metric", &S::metric},
      {"before", &S::before},
      {"after", &S::after},
      {"peak_metric", &S::peak_metric},
  };
  kFields.Copy(c, out);
  out->set_level(c.level == store::ChangePoint::Level::kName ? v1::ChangePoint::NAME : v1::ChangePoint::IDENTITY);
  out->set_delta(c.delta());
  AttributionOrUnknown(c.attribution, out);
}

static void ToProto(const store::FirstAbove& a, v1::FirstAbove* out) {
  using S = store::FirstAbove;
  static const ProtoFields<S, v1::FirstAbove> kFields = {
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"metric", &S::metric},
      {"bytes", &S::bytes},
      {"first_run", &S::first_run},
      {"first_value", &S::first_value},
      {"since_run", &S::since_run},
      {"since_value", &S::since_value},
      {"latest_run", &S::latest_run},
      {"latest_value", &S::latest_value},
  };
  kFields.Copy(a, out);
}

void ToProto(const store::RunInfo& r, v1::Run* out) {
  using S = store::RunInfo;
  static const ProtoFields<S, v1::Run> kFields = {
      {"name", &S::name},
      {"source_path", &S::source_path},
      {"run_time_us", &S::run_time_us},
      {"run_time_source", &S::run_time_source},
      {"file_count", &S::file_count},
      {"ingested_file_count", &S::ingested_file_count},
      {"error_file_count", &S::error_file_count},
      {"module_count", &S::module_count},
      {"created_at_us", &S::created_at_us},
      {"updated_at_us", &S::updated_at_us},
  };
  kFields.Copy(r, out);
  for (const auto& [k, v] : r.labels) {
    auto* l = out->add_labels();
    l->set_key(k);
    l->set_value(v);
  }
}

void ToProto(const store::ModuleMemoryInfo& m, v1::Module* out) {
  using S = store::ModuleMemoryInfo;
  static const auto kFields = ProtoFields<S, v1::Module>{
      {"name", &S::name},
      {"xla_module_id", &S::xla_module_id},
      {"stage", &S::stage},
      {"backend", &S::backend},
      {"fingerprint", &S::fingerprint},
      {"has_buffer_assignment", &S::has_buffer_assignment},
      {"peak_time", &S::peak_time},
      {"allocation_count", &S::allocation_count},
      {"value_count", &S::value_count},
      {"instruction_count", &S::instruction_count},
      {"folder", &S::folder},
      {"entry_signature", &S::entry_signature},
      {"identity_key", &S::identity_key},
      {"live_peak_padded_time", &S::live_peak_padded_time},
      {"entry_sharding", &S::entry_sharding},
  }.WithModuleMetrics();
  kFields.Copy(m, out);
}

void ToProto(const store::BudgetUse& use, v1::BudgetUse* out) {
  using S = store::BudgetUse;
  static const ProtoFields<S, v1::BudgetUse> kFields = {
      {"metric", &S::metric},   {"max_bytes", &S::max_bytes}, {"current", &S::current},
      {"percent", &S::percent}, {"over", &S::over},           {"warn", &S::warn},
  };
  kFields.Copy(use, out);
}

void ToProto(const store::TrendPoint& p, v1::TrendPoint* out) {
  using S = store::TrendPoint;
  static const ProtoFields<S, v1::TrendPoint> kFields = {
      {"run_name", &S::run_name},
      {"run_time_us", &S::run_time_us},
      {"module_name", &S::module_name},
      {"xla_module_id", &S::xla_module_id},
      {"stage", &S::stage},
      {"fingerprint", &S::fingerprint},
      {"value", &S::value},
      {"peak_bytes", &S::peak_bytes},
      {"total_bytes", &S::total_bytes},
      {"temp_bytes", &S::temp_bytes},
      {"folder", &S::folder},
      {"entry_signature", &S::entry_signature},
      {"identity_key", &S::identity_key},
      {"has_change", &S::has_change},
      {"change", &S::change},
      {"matched_by", &S::matched_by},
      {"live_peak_padded_bytes", &S::live_peak_padded_bytes},
      {"entry_sharding", &S::entry_sharding},
  };
  kFields.Copy(p, out);
}

void ToProto(const store::SpillRateRow& r, v1::SpillRate* out) {
  using S = store::SpillRateRow;
  static const ProtoFields<S, v1::SpillRate> kFields = {
      {"run_name", &S::run_name},
      {"run_time_us", &S::run_time_us},
      {"module_name", &S::module_name},
      {"kernel", &S::kernel},
      {"vmem_spills", &S::vmem_spills},
      {"vmem_fills", &S::vmem_fills},
      {"smem_spills", &S::smem_spills},
      {"smem_fills", &S::smem_fills},
      {"bundles", &S::bundles},
      {"vmem_spill_rate", &S::vmem_spill_rate},
      {"vmem_fill_rate", &S::vmem_fill_rate},
      {"smem_spill_rate", &S::smem_spill_rate},
      {"smem_fill_rate", &S::smem_fill_rate},
  };
  kFields.Copy(r, out);
}

void ToProto(const store::TopBuffersAnswer& a, v1::TopBuffersResponse* out) {
  using S = store::TopBuffersAnswer;
  static const ProtoFields<S, v1::TopBuffersResponse> kFields = {
      {"live_peak_padded_bytes", &S::live_peak_padded_bytes},
      {"live_peak_padded_time", &S::live_peak_padded_time},
      {"list_time", &S::list_time},
      {"total_bytes", &S::total_bytes},
      {"compiles", &S::compiles},
      {"has_memory", &S::has_memory},
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"xla_module_id", &S::xla_module_id},
      {"peak_bytes", &S::peak_bytes},
      {"peak_time", &S::peak_time},
  };
  kFields.Copy(a, out);
  out->set_at(a.list == store::PeakList::kPadded ? v1::PEAK_LIST_PADDED : v1::PEAK_LIST_XLA);
  for (const auto& b : a.buffers) ToProto(b, out->add_buffers());
}

void ToProto(const store::NameRollup& n, v1::NameRollup* out) {
  using S = store::NameRollup;
  static const ProtoFields<S, v1::NameRollup> kFields = {
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"baseline_compiles", &S::baseline_compiles},
      {"current_compiles", &S::current_compiles},
      {"changed", &S::changed},
  };
  using M = store::MetricRollup;
  static const ProtoFields<M, v1::NameRollupMetric> kMetricFields = {
      {"metric", &M::metric},
      {"baseline_max", &M::baseline_max},
      {"current_max", &M::current_max},
      {"baseline_sum", &M::baseline_sum},
      {"current_sum", &M::current_sum},
  };
  kFields.Copy(n, out);
  if (const store::MetricRollup* h = n.headline()) out->set_headline_metric(h->metric);
  for (const auto& m : n.metrics) kMetricFields.Copy(m, out->add_metrics());
}

void ToProto(const store::RunDiff& diff, v1::DiffRunsResponse* out) {
  using S = store::RunDiff;
  static const ProtoFields<S, v1::DiffRunsResponse> kFields = {
      {"added", &S::added}, {"removed", &S::removed}, {"changed", &S::changed}, {"unchanged", &S::unchanged},
  };
  for (const auto& m : diff.modules) ToProto(m, out->add_modules());
  for (const auto& n : diff.by_name) ToProto(n, out->add_by_name());
  kFields.Copy(diff, out);
}

void ToProto(const store::CheckResult& r, v1::CheckRunResponse* out) {
  using S = store::CheckResult;
  static const ProtoFields<S, v1::CheckRunResponse> kFields = {
      {"reason", &S::reason},
      {"run_name", &S::run},
      {"baseline_run_name", &S::baseline},
      {"baseline_selected_by", &S::baseline_selected_by},
      {"summary_line", &S::summary_line},
  };
  static const ProtoFields<S, v1::CheckSummary> kSummaryFields = {
      {"regressed", &S::regressed}, {"improved", &S::improved},       {"unchanged", &S::unchanged},
      {"added", &S::added},         {"removed", &S::removed},         {"ambiguous", &S::ambiguous},
      {"accepted", &S::accepted},   {"ignored", &S::ignored},         {"reshaped", &S::reshaped},
      {"over_budget", &S::over_budget}, {"within_budget", &S::within_budget},
  };
  out->set_verdict(ToProto(r.verdict));
  kFields.Copy(r, out);
  kSummaryFields.Copy(r, out->mutable_summary());
  for (const auto& w : r.budget_warnings) out->add_budget_warnings(w);
  for (const auto& m : r.metrics) out->add_metrics(m);
  for (const auto& m : r.modules) ToProto(m, out->add_modules());
  for (const auto& n : r.by_name) ToProto(n, out->add_by_name());
  for (const auto& f : r.error_files) ToProto(f, out->add_error_files());
  for (const auto& c : r.retraces) ToProto(c, out->add_retraces());
}

void ToProto(const store::RetraceGroup& g, v1::RetraceGroup* out) {
  using S = store::RetraceGroup;
  static const ProtoFields<S, v1::RetraceGroup> kFields = {
      {"module", &S::module},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"compiles", &S::compiles},
      {"distinct_signatures", &S::distinct_signatures},
      {"distinct_fingerprints", &S::distinct_fingerprints},
  };
  kFields.Copy(g, out);
  for (int64_t id : g.xla_module_ids) out->add_xla_module_ids(id);
}

void ToProto(const store::ChangeHistory& h, v1::ListChangesResponse* out) {
  using S = store::ChangeHistory;
  static const ProtoFields<S, v1::ListChangesResponse> kFields = {
      {"change_count", &S::change_count}, {"runs", &S::runs}, {"first_run", &S::first_run}, {"last_run", &S::last_run},
  };
  for (const auto& c : h.changes) ToProto(c, out->add_changes());
  kFields.Copy(h, out);
  for (const auto& m : h.metrics) out->add_metrics(m);
  for (const auto& a : h.first_above) ToProto(a, out->add_first_above());
  for (const auto& n : h.notes) out->add_notes(n);
}

void ToProto(const store::JobRecord& j, v1::JobRecord* out) {
  using S = store::JobRecord;
  static const ProtoFields<S, v1::JobRecord> kFields = {
      {"job_id", &S::job_id},       {"source", &S::source},   {"path", &S::path},
      {"run_name", &S::run_name},   {"message", &S::message},
      {"created_at_us", &S::created_at_us}, {"finished_at_us", &S::finished_at_us},
  };
  kFields.Copy(j, out);
  out->set_state(std::string(store::JobStateName(j.state)));
}

void ToProto(const store::OomReportInfo& r, v1::OomReport* out) {
  using S = store::OomReportInfo;
  static const ProtoFields<S, v1::OomReport> kFields = {
      {"path", &S::path},
      {"module", &S::module},
      {"xla_module_id", &S::xla_module_id},
      {"stage", &S::stage},
      {"folder", &S::folder},
      {"failed_allocation_bytes", &S::failed_allocation_bytes},
      {"limit_bytes", &S::limit_bytes},
      {"total_allocation_bytes", &S::total_allocation_bytes},
  };
  using T = store::OomStatInfo;
  static const ProtoFields<T, v1::OomStat> kStatFields = {
      {"label", &T::label}, {"bytes", &T::bytes}, {"bytes_text", &T::bytes_text}, {"percent", &T::percent},
  };
  using B = store::OomBufferInfo;
  static const ProtoFields<B, v1::OomBuffer> kBufferFields = {
      {"buffer_number", &B::buffer_number},
      {"size_bytes", &B::size_bytes},
      {"size_text", &B::size_text},
      {"shape", &B::shape},
      {"is_entry_parameter", &B::is_entry_parameter},
      {"xla_label", &B::xla_label},
      {"op_name", &B::op_name},
      {"source_file", &B::source_file},
      {"source_line", &B::source_line},
  };
  kFields.Copy(r, out);
  for (const auto& s : r.stats) kStatFields.Copy(s, out->add_stats());
  for (const auto& b : r.buffers) kBufferFields.Copy(b, out->add_buffers());
}

}  // namespace xladb::service
