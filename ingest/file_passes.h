// The two reads of a file (file_ingest.h's steps 1 and 4) and the file read ahead by a pipelined ingest.
// Internal to ingest/.
//
//   * HashAndHead: the first read, hashing the content (XXH3-128) and keeping its head for sniffing; with
//     `keep_content`, the whole content too, while it stays under kReadAheadMaxBytes.
//   * ParseInto: the second read, line by line into a format's parser, hashing again; a file that changed
//     between the two reads is caught by comparing the hashes (ParseFailure).
//   * ReadAhead: both reads of a small file and, when asked, its parse into a RecordCollector, done by the
//     walk's thread while the writer's thread stores earlier files (dump_ingester.cc). The parse then reads
//     the first read's bytes from memory and the second read only hashes: the same guarantee (the records
//     come from bytes whose hash both reads agree on), without a third read.
//
// Contract: every function runs on one thread with what it is given; a ReadAheadFile is owned by one thread at a
// time (made on the walk's, then handed whole to the writer's). Errors are values (Status in the results).
#ifndef XLADB_INGEST_FILE_PASSES_H_
#define XLADB_INGEST_FILE_PASSES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "ingest/records/record_pipe.h"
#include "ingest/records/record_sink.h"
#include "ingest/source/dump_source.h"
#include "ingest/source/file_kind.h"
#include "ingest/source/sniff.h"

namespace xladb::ingest {

// The bytes the hash pass reads at a time.
inline constexpr size_t kHashReadChunk = size_t{1} << 20;
// Files at least this big are parsed on a second thread (RecordPipe) while the writer stores them; smaller
// ones are parsed whole, inline or read ahead, where a thread of their own would cost more than it saves.
inline constexpr int64_t kPipelineMinBytes = int64_t{1} << 20;
inline constexpr int64_t kReadAheadMaxBytes = kPipelineMinBytes;

struct FirstPass {
  std::string head;     // the first kSniffBytes
  std::string hash;     // hex XXH3-128 of the content
  int64_t bytes = 0;
  std::optional<std::string> content;  // the whole content, when asked and under kReadAheadMaxBytes
};

// Reads `entry` once. `buf` holds kHashReadChunk bytes (RunIngestState::read_buffer).
StatusOr<FirstPass> HashAndHead(DumpEntry& entry, char* buf, bool keep_content = false);

struct ParseResult {
  Status status;
  int64_t line_count = 0;
  int64_t unknown_lines = 0;
  int64_t bytes = 0;
  std::string hash;  // of the bytes read while parsing
};

// The second read of `entry`, into the parser for `kind` (on a second thread when the file is big).
ParseResult ParseInto(DumpEntry& entry, FileKind kind, int64_t size_bytes, RecordSink* sink);

// The parse's failure in words; nullopt when it succeeded and read the content the first read hashed.
std::optional<std::string> ParseFailure(const ParseResult& parsed, const std::string& content_hash);

// A small file of a pipelined ingest, read (and maybe parsed) ahead by the walk's thread.
struct ReadAheadFile {
  DumpEntry entry;             // path, name, size, mtime, open_error; Open is empty (the walk has moved on)
  StatusOr<FirstPass> first = Status::Ok();  // the first read, content kept
  SniffResult sniff;           // of first.head
  Status second_read;          // the second read's error, if it had one
  std::string second_hash;     // …else the hash of what it read
  int64_t second_bytes = 0;
  std::optional<ParseResult> parsed;  // parsed ahead into `records` (then the writer need not parse)
  RecordCollector records;

  // About how much memory this holds (content and records), for the read-ahead queue's bound.
  size_t approx_bytes() const;
  // The parse of `first.content` into `sink`, its hash and byte count those of the second read; the records
  // kept in `records` when it was parsed ahead.
  ParseResult ParseInto(RecordSink* sink);
};

// Reads `entry` ahead when it is small (nullptr when it is not: the writer must read it in place, while the
// walk waits), and parses it into the result's records when `parse` and its kind is ingested.
std::unique_ptr<ReadAheadFile> ReadAhead(DumpEntry& entry, char* buf, bool parse);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FILE_PASSES_H_
