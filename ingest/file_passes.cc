#include "ingest/file_passes.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "base/content_hash.h"
#include "ingest/parser_registry.h"
#include "ingest/records/record_pipe.h"
#include "ingest/source/line_reader.h"

namespace xladb::ingest {
namespace {

// Passes bytes through while hashing them and counting them.
class HashingSource : public ByteSource {
 public:
  explicit HashingSource(ByteSource* inner) : inner_(inner) {}
  StatusOr<size_t> Read(char* buffer, size_t capacity) override {
    auto n = inner_->Read(buffer, capacity);
    if (n.ok() && *n > 0) {
      hasher_.Update(buffer, *n);
      bytes_ += static_cast<int64_t>(*n);
    }
    return n;
  }
  std::string HexDigest() const { return hasher_.HexDigest(); }
  int64_t bytes() const { return bytes_; }

 private:
  ByteSource* inner_;
  ContentHasher hasher_;
  int64_t bytes_ = 0;
};

// Reads `source` line by line into the parser for `kind`; fills the result's status and counts.
void ParseLines(ByteSource* source, FileKind kind, RecordSink* sink, ParseResult* result) {
  LineReader reader(source);
  std::unique_ptr<LineParser> parser = MakeParser(kind, sink);
  std::string_view line;
  while (reader.Next(&line)) parser->ParseLine(line, reader.line_number());
  result->line_count = reader.line_number();
  if (!reader.status().ok()) {
    result->status = reader.status();
  } else {
    // Signs of a damaged file that no format parser can see on its own (bad-input catalog,
    // tests/store/bad_input_test.cc): a cut-off last line parses as a shorter valid one, and NUL bytes past
    // the sniffed head (the zero-filled tail a crash leaves) would pass as odd text.
    if (reader.last_line_unterminated()) {
      sink->OnIssue({result->line_count, IssueRecord::Severity::kWarning,
                     "truncated file: no newline at the end (XLA ends every dump with one), so line " +
                         std::to_string(result->line_count) + " may be cut short"});
    }
    if (reader.saw_nul()) {
      sink->OnIssue({0, IssueRecord::Severity::kWarning,
                     "the file holds NUL bytes (a zero-filled tail a crash leaves, or a damaged copy)"});
    }
    result->status = parser->Finish();
  }
  result->unknown_lines = parser->unknown_lines();
}

// Reads `entry` line by line into the parser for `kind`, hashing what it reads.
ParseResult ParseEntry(DumpEntry& entry, FileKind kind, RecordSink* sink) {
  ParseResult result;
  auto content = entry.Open();
  if (!content.ok()) {
    result.status = content.status();
    return result;
  }
  HashingSource hashing(content.value().get());
  ParseLines(&hashing, kind, sink, &result);
  result.bytes = hashing.bytes();
  result.hash = hashing.HexDigest();
  return result;
}

}  // namespace

StatusOr<FirstPass> HashAndHead(DumpEntry& entry, char* buf, bool keep_content) {
  auto source = entry.Open();
  if (!source.ok()) return source.status();
  FirstPass pass;
  if (keep_content) pass.content.emplace();
  ContentHasher hasher;
  for (;;) {
    auto n = source.value()->Read(buf, kHashReadChunk);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    hasher.Update(buf, *n);
    if (pass.head.size() < kSniffBytes) {
      pass.head.append(buf, std::min(*n, kSniffBytes - pass.head.size()));
    }
    pass.bytes += static_cast<int64_t>(*n);
    if (pass.content) {
      if (pass.bytes > kReadAheadMaxBytes) {
        pass.content.reset();  // too big to keep: read on, for the hash
      } else {
        pass.content->append(buf, *n);
      }
    }
  }
  pass.hash = hasher.HexDigest();
  return pass;
}

ParseResult ParseInto(DumpEntry& entry, FileKind kind, int64_t size_bytes, RecordSink* sink) {
  if (size_bytes < kPipelineMinBytes) return ParseEntry(entry, kind, sink);
  ParseResult parsed;
  RecordPipe pipe;
  std::thread parser_thread([&] {
    parsed = ParseEntry(entry, kind, pipe.input());
    pipe.Close();
  });
  pipe.Drain(sink);
  parser_thread.join();
  return parsed;
}

std::optional<std::string> ParseFailure(const ParseResult& parsed, const std::string& content_hash) {
  if (parsed.status.ok() && parsed.hash == content_hash) return std::nullopt;
  std::string reason = parsed.status.ok() ? "file changed while being read (content hash differs between passes); "
                                            "ingest it again once it is complete"
                                          : parsed.status.message();
  if (parsed.line_count > 0 && reason.find("line ") == std::string::npos) {
    reason += " (after line " + std::to_string(parsed.line_count) + ")";
  }
  return reason;
}

size_t ReadAheadFile::approx_bytes() const {
  size_t bytes = sizeof(*this) + records.approx_bytes();
  if (first.ok()) bytes += first->head.size() + (first->content ? first->content->size() : 0);
  return bytes;
}

ParseResult ReadAheadFile::ParseInto(RecordSink* sink) {
  if (parsed) {
    records.DeliverAll(sink);
    return *std::exchange(parsed, std::nullopt);
  }
  ParseResult result;
  auto memory = MakeMemorySource(*first->content);
  ParseLines(memory.get(), sniff.kind, sink, &result);
  result.bytes = second_bytes;
  result.hash = second_hash;
  if (result.status.ok() && !second_read.ok()) result.status = second_read;
  return result;
}

std::unique_ptr<ReadAheadFile> ReadAhead(DumpEntry& entry, char* buf, bool parse) {
  if (entry.open_error.ok() && entry.size_bytes > kReadAheadMaxBytes) return nullptr;
  auto ahead = std::make_unique<ReadAheadFile>();
  ahead->entry = entry;
  ahead->entry.Open = nullptr;
  if (!entry.open_error.ok()) {
    ahead->first = entry.open_error;
    return ahead;
  }
  ahead->first = HashAndHead(entry, buf, /*keep_content=*/true);
  if (!ahead->first.ok()) return ahead;
  if (!ahead->first->content) return nullptr;  // bigger than it said (a compressed file): read in place
  ahead->sniff = SniffFile(entry.name, ahead->first->head);
  if (!IsIngestedKind(ahead->sniff.kind)) return ahead;
  StatusOr<FirstPass> second = HashAndHead(entry, buf);  // its hash and size; its head is not needed again
  if (second.ok()) {
    ahead->second_hash = std::move(second->hash);
    ahead->second_bytes = second->bytes;
  } else {
    ahead->second_read = second.status();
  }
  if (parse) ahead->parsed = ahead->ParseInto(&ahead->records);
  return ahead;
}

}  // namespace xladb::ingest
