// The buffers and source lines behind a change, for every report format. The gate's CheckedModule and
// ListChanges' ChangePoint carry the attribution (store/compare/buffer_attribution.h) under the same field names;
// AttributionOf views either, and one piece of code writes it for check and for changes.
//
// Values from dumps go through cli/markdown_text.h (Markdown) or ingest/text/visible_text.h (terminal).
// Pure functions; thread-safe.
#ifndef XLADB_CLI_ATTRIBUTION_REPORT_H_
#define XLADB_CLI_ATTRIBUTION_REPORT_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "xladb/v1/xladb.pb.h"

namespace xladb::cli {

using Json = nlohmann::ordered_json;

// JSON null for what a message says is unknown or absent: a negative count or id, an empty text.
Json OrNull(int64_t v);
Json OrNull(const std::string& s);

// A view of one message's attribution fields; the message must outlive it.
struct AttributionView {
  const google::protobuf::RepeatedPtrField<v1::BufferChange>* changes = nullptr;
  int64_t count = 0;
  const google::protobuf::RepeatedPtrField<v1::SourceLineChange>* by_source = nullptr;
  std::string scope;  // "" = not explained
  int64_t baseline_peak_time = -1, current_peak_time = -1, baseline_schedule_length = -1,
          current_schedule_length = -1;
  std::string peak_metric;

  bool explained() const { return !scope.empty(); }
};

template <typename Message>
AttributionView AttributionOf(const Message& m) {
  return {&m.attribution(),         m.attribution_count(),         &m.by_source(),
          m.attribution_scope(),    m.baseline_peak_time(),        m.current_peak_time(),
          m.baseline_schedule_length(), m.current_schedule_length(), m.peak_metric()};
}

// "grew", "shrank", "appeared", "disappeared".
std::string BufferChangeName(v1::BufferChange::Change change);

// JSON (docs/check-json.md): adds "attribution" (the listed buffer changes) to `object`, then, when the view is
// explained, "attribution_count", "attribution_scope", "by_source" and "peak".
void AddAttributionJson(const AttributionView& a, Json* object);

// Terminal lines under `indent`: one per source line, the peak line, one per buffer (a deeper indent).
std::string AttributionText(const AttributionView& a, const std::string& indent);

// Markdown: the source lines as a list, the peak line, and a table of the buffers, with a note on the buffer
// changes not listed (`more_flag` names the option that lists them).
std::string AttributionMarkdown(const AttributionView& a, const std::string& more_flag);

}  // namespace xladb::cli

#endif  // XLADB_CLI_ATTRIBUTION_REPORT_H_
