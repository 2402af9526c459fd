// xladb_parse: the parse-only scenario of the benchmark. Sniffs and parses dump files exactly as ingest
// does (LineReader, the format's parser), but discards the records in a counting sink, so the time is the
// parsers' alone. Prints files, bytes, records and MB/s.
//
//   xladb_parse FILE...
#include <chrono>
#include <cstdio>
#include <string>

#include "ingest/source/byte_source.h"
#include "ingest/text/dump_name.h"
#include "ingest/source/line_reader.h"
#include "ingest/parser_registry.h"
#include "ingest/records/record_list.h"
#include "ingest/records/record_sink.h"
#include "ingest/source/sniff.h"

namespace {

// Counts records of every type; keeps nothing.
class CountingSink : public xladb::ingest::RecordSink {
 public:
  int64_t records = 0;
#define XLADB_COUNT_RECORD(Name, plural) \
  void On##Name(xladb::ingest::Name##Record&&) override { ++records; }
  XLADB_RECORD_TYPES(XLADB_COUNT_RECORD)
#undef XLADB_COUNT_RECORD
};

}  // namespace

int main(int argc, char** argv) {
  using namespace xladb::ingest;
  if (argc < 2) {
    std::fprintf(stderr, "usage: xladb_parse FILE...\n");
    return 2;
  }
  CountingSink sink;
  int64_t bytes = 0, files = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 1; i < argc; ++i) {
    std::string path = argv[i];
    auto head_source = OpenFileSource(path);
    if (!head_source.ok()) {
      std::fprintf(stderr, "xladb_parse: %s\n", head_source.status().message().c_str());
      return 1;
    }
    std::string head(kSniffBytes, '\0');
    auto n = head_source.value()->Read(head.data(), head.size());
    head.resize(n.ok() ? *n : 0);
    std::string name = path.substr(path.rfind('/') + 1);
    SniffResult sniff = SniffFile(name, head);
    auto parser = MakeParser(sniff.kind, &sink);
    if (!parser) continue;
    auto source = OpenFileSource(path);
    LineReader reader(source.value().get());
    std::string_view line;
    while (reader.Next(&line)) parser->ParseLine(line, reader.line_number());
    xladb::Status st = parser->Finish();
    if (!st.ok()) std::fprintf(stderr, "xladb_parse: %s: %s\n", path.c_str(), st.message().c_str());
    bytes += reader.bytes_consumed();
    ++files;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("parsed %lld files, %.1f MB, %lld records in %.3f s: %.1f MB/s\n", static_cast<long long>(files),
              static_cast<double>(bytes) / 1e6, static_cast<long long>(sink.records), s,
              static_cast<double>(bytes) / 1e6 / s);
  return 0;
}
