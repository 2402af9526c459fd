// AnswerListChanges (query_answers.h): the change points of a run history (store/compare/change_points.h).
#include <string>

#include "service/query_answers.h"
#include "service/result_protos.h"
#include "store/compare/change_points.h"

namespace xladb::service {

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
  ToProto(*history, resp);
  return Status::Ok();
}

}  // namespace xladb::service
