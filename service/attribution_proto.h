// The gate's buffer attribution (store/compare/buffer_attribution.h) in the API's messages. A CheckedModule (the gate)
// and a ChangePoint (ListChanges) carry it under the same field names, so one template fills either.
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_ATTRIBUTION_PROTO_H_
#define XLADB_SERVICE_ATTRIBUTION_PROTO_H_

#include "store/compare/buffer_attribution.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::service {

void ToProto(const store::BufferChange& change, v1::BufferChange* out);
void ToProto(const store::SourceLineChange& line, v1::SourceLineChange* out);

// Fills attribution, attribution_count, by_source, attribution_scope and the four peak and schedule fields.
template <typename Message>
void AttributionToProto(const store::Attribution& a, Message* out) {
  for (const auto& b : a.changes) ToProto(b, out->add_attribution());
  out->set_attribution_count(a.change_count);
  for (const auto& s : a.by_source) ToProto(s, out->add_by_source());
  out->set_attribution_scope(store::AttributionScopeName(a.scope));
  out->set_baseline_peak_time(a.baseline_peak_time);
  out->set_current_peak_time(a.current_peak_time);
  out->set_baseline_schedule_length(a.baseline_schedule_length);
  out->set_current_schedule_length(a.current_schedule_length);
}

}  // namespace xladb::service

#endif  // XLADB_SERVICE_ATTRIBUTION_PROTO_H_
