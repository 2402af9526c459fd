// What the buffer-assignment parser's tests share: a fixture by name, a whole text parsed by a fresh parser
// into a VectorSink, and the issues and peak bytes it collected.
#ifndef XLADB_TESTS_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSE_H_
#define XLADB_TESTS_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSE_H_

#include "ingest/formats/buffer_assignment/buffer_assignment_parser.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest::testing {

using Severity = IssueRecord::Severity;

inline std::string FixturePath(const std::string& name) {
  return std::string(XLADB_FIXTURE_DIR) + "/buffer_assignment/" + name;
}

// Parses a whole text with a fresh parser.
struct Parsed {
  VectorSink sink;
  Status status;
  int64_t unknown_lines = 0;
};

inline Parsed ParseBufferAssignment(const std::string& text) {
  Parsed parsed;
  BufferAssignmentParser parser(&parsed.sink);
  parsed.status = ParseText(parser, text);
  parsed.unknown_lines = parser.unknown_lines();
  return parsed;
}

inline std::string ReadFixture(const std::string& name) {
  std::string text = ReadTestFile(FixturePath(name));
  EXPECT_FALSE(text.empty()) << "missing fixture " << name;
  return text;
}

inline std::string IssueText(const VectorSink& sink) {
  std::string out;
  for (const auto& issue : sink.issues) {
    out += "line " + std::to_string(issue.line) + " [" + std::to_string(static_cast<int>(issue.severity)) +
           "] " + issue.reason + "\n";
  }
  return out;
}

inline int64_t SumOfPeakBytes(const VectorSink& sink) {
  int64_t sum = 0;
  for (const auto& p : sink.peak_buffers) sum += p.logical_bytes;
  return sum;
}

}  // namespace xladb::ingest::testing

#endif  // XLADB_TESTS_INGEST_FORMATS_BUFFER_ASSIGNMENT_BUFFER_ASSIGNMENT_PARSE_H_
