#include "cli/output.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "ingest/text/visible_text.h"

namespace xladb::cli {
namespace {

void AppendCsvField(std::string* out, const std::string& s) {
  bool quote = s.find_first_of(",\"\n\r") != std::string::npos;
  if (!quote) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendJsonString(std::string* out, const std::string& s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Display width in terminal columns, counting UTF-8 continuation bytes as nothing.
size_t DisplayWidth(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

}  // namespace

Cell Num(int64_t v) { return Cell{std::to_string(v), false, true}; }
Cell Opt(int64_t v) { return v < 0 ? Cell{"", true, false} : Num(v); }
Cell Txt(const std::string& s) { return Cell{s, false, false}; }
Cell Time(int64_t us) {
  std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return Txt(buf);
}

std::optional<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  return std::nullopt;
}

void ResultPrinter::SetColumns(std::vector<std::string> names) {
  columns_ = std::move(names);
  if (format_ == OutputFormat::kCsv) {
    line_.clear();
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i) line_.push_back(',');
      AppendCsvField(&line_, columns_[i]);
    }
    line_.push_back('\n');
    std::fwrite(line_.data(), 1, line_.size(), out_);
  } else if (format_ == OutputFormat::kJson) {
    std::fputs("[", out_);
  }
}

void ResultPrinter::AddRow(const std::vector<Cell>& row) {
  switch (format_) {
    case OutputFormat::kTable:
      // A table is for a terminal: ESC, BEL, line breaks and bidi controls in a name must not act there
      // (nor break the alignment), so they are shown as escapes. CSV and JSON keep the text exact.
      buffered_.push_back(row);
      for (Cell& cell : buffered_.back()) cell.text = ingest::EscapeControlCharacters(cell.text);
      break;
    case OutputFormat::kCsv:
      line_.clear();
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line_.push_back(',');
        if (!row[i].is_null) AppendCsvField(&line_, row[i].text);
      }
      line_.push_back('\n');
      std::fwrite(line_.data(), 1, line_.size(), out_);
      break;
    case OutputFormat::kJson:
      line_.clear();
      line_.append(rows_ == 0 ? "\n  {" : ",\n  {");
      for (size_t i = 0; i < row.size() && i < columns_.size(); ++i) {
        if (i) line_.append(", ");
        AppendJsonString(&line_, columns_[i]);
        line_.append(": ");
        if (row[i].is_null) line_.append("null");
        else if (row[i].is_number) line_.append(row[i].text, row[i].text.rfind('+', 0) == 0 ? 1 : 0);
        else AppendJsonString(&line_, row[i].text);
      }
      line_.push_back('}');
      std::fwrite(line_.data(), 1, line_.size(), out_);
      break;
  }
  ++rows_;
}

void ResultPrinter::Finish() {
  if (format_ == OutputFormat::kJson) {
    std::fputs(rows_ == 0 ? "]\n" : "\n]\n", out_);
    return;
  }
  if (format_ != OutputFormat::kTable) return;
  for (std::string& name : columns_) name = ingest::EscapeControlCharacters(name);  // `xladb sql` names them
  std::vector<size_t> width(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) width[i] = DisplayWidth(columns_[i]);
  for (const auto& row : buffered_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], DisplayWidth(row[i].text));
  }
  auto print_row = [&](const std::vector<Cell>* row) {
    line_.clear();
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string& text = row ? (i < row->size() ? (*row)[i].text : std::string()) : columns_[i];
      bool right = row && i < row->size() && (*row)[i].is_number;
      size_t pad = width[i] - DisplayWidth(text);
      if (i) line_.append("  ");
      if (right) line_.append(pad, ' ');
      line_.append(text);
      if (!right && i + 1 < columns_.size()) line_.append(pad, ' ');
    }
    line_.push_back('\n');
    std::fwrite(line_.data(), 1, line_.size(), out_);
  };
  print_row(nullptr);
  line_.clear();
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i) line_.append("  ");
    line_.append(width[i], '-');
  }
  line_.push_back('\n');
  std::fwrite(line_.data(), 1, line_.size(), out_);
  for (const auto& row : buffered_) print_row(&row);
  std::fprintf(out_, "(%lld row%s)\n", static_cast<long long>(rows_), rows_ == 1 ? "" : "s");
  buffered_.clear();
}

}  // namespace xladb::cli
