// VectorSink: a RecordSink that keeps every record in vectors, for parser tests.
#ifndef XLADB_TESTS_INGEST_VECTOR_SINK_H_
#define XLADB_TESTS_INGEST_VECTOR_SINK_H_

#include <string>
#include <string_view>
#include <vector>

#include "ingest/source/byte_source.h"
#include "ingest/text/line_parser.h"
#include "ingest/source/line_reader.h"
#include "ingest/records/record_list.h"
#include "ingest/records/record_sink.h"

namespace xladb::ingest {

class VectorSink : public RecordSink {
 public:
  // One vector per record type (ingest/records/record_list.h names them), in arrival order.
#define XLADB_VECTOR_SINK_MEMBER(Name, plural) \
  std::vector<Name##Record> plural;                                 \
  void On##Name(Name##Record&& r) override { plural.push_back(std::move(r)); }
  XLADB_RECORD_TYPES(XLADB_VECTOR_SINK_MEMBER)
#undef XLADB_VECTOR_SINK_MEMBER

  // Issues of one severity.
  size_t CountIssues(IssueRecord::Severity s) const {
    size_t n = 0;
    for (const auto& i : issues) n += (i.severity == s);
    return n;
  }
};

// Feeds `text` through `parser` with the real LineReader; returns Finish()'s status.
inline Status ParseText(LineParser& parser, std::string_view text) {
  auto source = MakeMemorySource(text);
  LineReader reader(source.get());
  std::string_view line;
  while (reader.Next(&line)) parser.ParseLine(line, reader.line_number());
  if (!reader.status().ok()) return reader.status();
  return parser.Finish();
}

// Reads a whole (small) test file into a string; empty on failure.
std::string ReadTestFile(const std::string& path);

// Path of a copied seed, e.g. SeedPath("000") → tests/data/seeds/000_….txt.
std::string SeedPath(std::string_view seed_number);

}  // namespace xladb::ingest

#endif  // XLADB_TESTS_INGEST_VECTOR_SINK_H_
