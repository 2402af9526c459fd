// ResultPrinter: prints a result set as an aligned table, CSV (RFC 4180) or JSON (an array of objects).
//
// CSV and JSON stream each row as it comes; a table buffers rows to align columns (use csv for big
// results). Values are already text; `is_null` cells print empty (table, csv) or null (json), and numeric
// cells print bare in JSON. A table shows control characters and bidi controls as escapes (\x1b, \n,
// \u202e: ingest/text/visible_text.h); CSV keeps every byte; JSON escapes controls as its grammar says (\u001b).
// Not thread-safe.
#ifndef XLADB_CLI_OUTPUT_H_
#define XLADB_CLI_OUTPUT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace xladb::cli {

enum class OutputFormat { kTable, kCsv, kJson };

// "table", "csv" or "json"; nullopt otherwise.
std::optional<OutputFormat> ParseOutputFormat(const std::string& name);

struct Cell {
  std::string text;
  bool is_null = false;
  bool is_number = false;
};

// Cells as the query commands print them: a number; a number where negative means unknown (printed empty,
// null in JSON); text; a Unix time in microseconds as "2026-11-02T06:00:00Z" (UTC).
Cell Num(int64_t v);
Cell Opt(int64_t v);
Cell Txt(const std::string& s);
Cell Time(int64_t us);

class ResultPrinter {
 public:
  ResultPrinter(OutputFormat format, std::FILE* out) : format_(format), out_(out) {}
  void SetColumns(std::vector<std::string> names);
  void AddRow(const std::vector<Cell>& row);
  // Flushes a buffered table; ends the JSON array. Call once.
  void Finish();
  int64_t rows() const { return rows_; }

 private:
  OutputFormat format_;
  std::FILE* out_;
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> buffered_;
  int64_t rows_ = 0;
  std::string line_;
};

}  // namespace xladb::cli

#endif  // XLADB_CLI_OUTPUT_H_
