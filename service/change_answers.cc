// AnswerListChanges (query_answers.h): the change points of a run history (store/compare/change_points.h).
#include <string>

#include "service/attribution_proto.h"
#include "service/query_answers.h"
#include "store/compare/change_points.h"

namespace xladb::service {
namespace {

v1::ChangePoint::Level ToProto(store::ChangePoint::Level level) {
  return level == store::ChangePoint::Level::kName ? v1::ChangePoint::NAME : v1::ChangePoint::IDENTITY;
}

}  // namespace

Status AnswerListChanges(store::Database& db, const v1::ListChangesRequest& req, v1::ListChangesResponse* resp) {
  if (req.last_n() < 0) return Status::InvalidArgument("last_n must not be negative (0 = every run)");
  if (req.limit() < 0) return Status::InvalidArgument("limit must not be negative (0 = every change point)");
  if (req.attribute() < -1) return Status::InvalidArgument("attribute is -1 (all), 0 (= 5) or a count");
  if (req.max_attribution() < 0 || req.max_attribution() > 100000) {
    return Status::InvalidArgument("max_attribution is 0 (= 10) to 100000");
  }
  store::ChangeQuery q;
  q.module = req.module();
  for (const auto& l : req.labels()) q.labels.emplace_back(l.key(), l.value());
  q.since_run = req.since_run();
  q.last_n = req.last_n() > 0 ? req.last_n() : -1;
  q.metrics.assign(req.metrics().begin(), req.metrics().end());
  q.min_bytes = req.min_bytes();
  q.min_percent = req.min_percent();
  q.attribute = req.no_attribution() ? 0 : req.attribute() != 0 ? req.attribute() : 5;
  q.max_attribution = req.max_attribution() > 0 ? req.max_attribution() : 10;
  q.first_above_bytes = req.first_above_bytes();
  q.limit = req.limit() > 0 ? req.limit() : -1;
  auto history = store::ListChanges(db, q);
  if (!history.ok()) return history.status();
  const store::ChangeHistory& h = *history;
  for (const auto& c : h.changes) {
    v1::ChangePoint* out = resp->add_changes();
    out->set_run_name(c.run);
    out->set_previous_run_name(c.previous_run);
    out->set_run_time_us(c.run_time_us);
    out->set_previous_run_time_us(c.previous_run_time_us);
    out->set_level(ToProto(c.level));
    out->set_module(c.module);
    out->set_stage(c.stage);
    out->set_folder(c.folder);
    out->set_entry_signature(c.entry_signature);
    out->set_previous_entry_signature(c.previous_entry_signature);
    out->set_entry_sharding(c.entry_sharding);
    out->set_previous_entry_sharding(c.previous_entry_sharding);
    out->set_xla_module_id(c.xla_module_id);
    out->set_previous_xla_module_id(c.previous_xla_module_id);
    out->set_compiles(c.compiles);
    out->set_previous_compiles(c.previous_compiles);
    out->set_metric(c.metric);
    out->set_before(c.before);
    out->set_after(c.after);
    out->set_delta(c.delta());
    out->set_baseline_peak_time(-1);
    out->set_current_peak_time(-1);
    out->set_baseline_schedule_length(-1);
    out->set_current_schedule_length(-1);
    if (c.attribution) AttributionToProto(*c.attribution, out);
    out->set_peak_metric(c.peak_metric);
  }
  resp->set_change_count(h.change_count);
  for (const auto& m : h.metrics) resp->add_metrics(m);
  resp->set_runs(h.runs);
  resp->set_first_run(h.first_run);
  resp->set_last_run(h.last_run);
  for (const auto& a : h.first_above) {
    v1::FirstAbove* out = resp->add_first_above();
    out->set_module(a.module);
    out->set_stage(a.stage);
    out->set_folder(a.folder);
    out->set_metric(a.metric);
    out->set_bytes(a.bytes);
    out->set_first_run(a.first_run);
    out->set_first_value(a.first_value);
    out->set_since_run(a.since_run);
    out->set_since_value(a.since_value);
    out->set_latest_run(a.latest_run);
    out->set_latest_value(a.latest_value);
  }
  for (const auto& n : h.notes) resp->add_notes(n);
  return Status::Ok();
}

}  // namespace xladb::service
