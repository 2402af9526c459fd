#include "ingest/text/hlo_instruction_text.h"

#include <cstdint>

#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

constexpr std::string_view kRootPrefix = "ROOT ";
constexpr std::string_view kAssign = " = ";

// Index of the first `target` at bracket depth zero and outside quoted strings, at or after `pos`; npos if
// there is none. `target` must not be '"'. A closer with no opener is ignored (depth stays >= 0).
size_t FindAtDepthZero(std::string_view s, size_t pos, char target) {
  int64_t depth = 0;
  bool in_quote = false;
  for (; pos < s.size(); ++pos) {
    const char c = s[pos];
    if (in_quote) {
      if (c == '\\') {
        ++pos;  // the escaped byte, whatever it is
      } else if (c == '"') {
        in_quote = false;
      }
      continue;
    }
    if (depth == 0 && c == target) return pos;
    switch (c) {
      case '"':
        in_quote = true;
        break;
      case '(':
      case '{':
      case '[':
        ++depth;
        break;
      case ')':
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::string_view::npos;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-' || c == '$';
}

bool IsOpcodeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Where `quoted` (a view into `text`) prints its value byte for byte: the span of its body when the body
// needs no unescaping and is all of `value`, the field UnquoteValue read from it.
InstructionRecord::TextSpan VerbatimSpan(std::string_view text, std::string_view quoted, const std::string& value) {
  if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') return {};
  const std::string_view body = quoted.substr(1, quoted.size() - 2);
  if (body != value) return {};
  return {static_cast<size_t>(body.data() - text.data()), body.size()};
}

// Fills the metadata fields of `record` from the body of `metadata={…}`, a view into `text`.
void ReadMetadata(std::string_view text, std::string_view value, InstructionRecord* record) {
  if (!value.empty() && value.front() == '{') value.remove_prefix(1);
  if (!value.empty() && value.back() == '}') value.remove_suffix(1);
  TopLevelItems fields(value, ' ');
  std::string_view field;
  while (fields.Next(&field)) {
    std::string_view key;
    std::string_view v;
    if (!SplitKeyValue(field, &key, &v)) continue;
    if (key == "op_type") {
      record->op_type = UnquoteValue(v);
    } else if (key == "op_name") {
      record->op_name = UnquoteValue(v);
      record->op_name_in_text = VerbatimSpan(text, v, record->op_name);
    } else if (key == "source_file") {
      record->source_file = UnquoteValue(v);
      record->source_file_in_text = VerbatimSpan(text, v, record->source_file);
    } else if (key == "source_line") {
      auto line = ParseInt64(v);
      if (line && *line >= 0) record->source_line = *line;
    }
  }
}

}  // namespace

bool TopLevelItems::Next(std::string_view* item) {
  while (!rest_.empty()) {
    const size_t end = FindAtDepthZero(rest_, 0, separator_);
    std::string_view candidate = rest_.substr(0, end);
    rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
    candidate = TrimSpaces(candidate);
    if (!candidate.empty()) {
      *item = candidate;
      return true;
    }
  }
  return false;
}

std::optional<int64_t> ParameterNumber(const HloInstructionPieces& pieces) {
  if (pieces.opcode != "parameter" || pieces.operands.empty() || pieces.operands.size() > 18) return std::nullopt;
  int64_t n = 0;
  for (const char c : pieces.operands) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool SplitKeyValue(std::string_view item, std::string_view* key, std::string_view* value) {
  const size_t eq = item.find('=');
  if (eq == std::string_view::npos) return false;
  *key = item.substr(0, eq);
  *value = item.substr(eq + 1);
  return true;
}

std::string UnquoteValue(std::string_view value) {
  if (value.empty() || value.front() != '"') return std::string(value);
  // Find the closing quote, skipping escaped bytes; an unterminated string runs to the end.
  size_t end = 1;
  while (end < value.size() && value[end] != '"') end += (value[end] == '\\') ? 2 : 1;
  if (end > value.size()) end = value.size();
  return UnescapeCString(value.substr(1, end - 1));
}

std::string UnescapeCString(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c != '\\' || i + 1 == escaped.size()) {
      out.push_back(c);
      continue;
    }
    const char e = escaped[++i];
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case '\\': case '"': case '\'': case '?': out.push_back(e); break;
      case 'x': {
        unsigned value = 0;
        size_t digits = 0;
        while (i + 1 < escaped.size() && digits < 2 && HexValue(escaped[i + 1]) >= 0) {
          value = value * 16 + static_cast<unsigned>(HexValue(escaped[++i]));
          ++digits;
        }
        if (digits == 0) {
          out += "\\x";
        } else {
          out.push_back(static_cast<char>(value));
        }
        break;
      }
      default:
        if (IsOctalDigit(e)) {
          unsigned value = static_cast<unsigned>(e - '0');
          for (int k = 0; k < 2 && i + 1 < escaped.size() && IsOctalDigit(escaped[i + 1]); ++k) {
            value = value * 8 + static_cast<unsigned>(escaped[++i] - '0');
          }
          out.push_back(static_cast<char>(value & 0xFF));
        } else {
          out.push_back('\\');  // not an escape XLA prints: keep it as written
          out.push_back(e);
        }
        break;
    }
  }
  return out;
}

std::optional<HloInstructionPieces> SplitHloInstructionText(std::string_view text) {
  HloInstructionPieces p;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  if (text.substr(0, kRootPrefix.size()) == kRootPrefix) {
    p.is_root = true;
    text.remove_prefix(kRootPrefix.size());
  }
  p.text = text;

  // Name: `%?[A-Za-z0-9_.$-]+` followed by " = ".
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '%') ++pos;
  const size_t name_begin = pos;
  while (pos < text.size() && IsNameChar(text[pos])) ++pos;
  if (pos == name_begin || text.substr(pos, kAssign.size()) != kAssign) return std::nullopt;
  p.name = text.substr(name_begin, pos - name_begin);
  pos += kAssign.size();

  // Shape: up to the first space outside brackets.
  const size_t shape_end = FindAtDepthZero(text, pos, ' ');
  if (shape_end == std::string_view::npos || shape_end == pos) return std::nullopt;
  p.shape = text.substr(pos, shape_end - pos);
  pos = shape_end + 1;

  // Opcode, immediately followed by '('.
  const size_t opcode_begin = pos;
  while (pos < text.size() && IsOpcodeChar(text[pos])) ++pos;
  if (pos == opcode_begin || pos >= text.size() || text[pos] != '(') return std::nullopt;
  p.opcode = text.substr(opcode_begin, pos - opcode_begin);
  ++pos;

  // Operands up to the matching ')'.
  const size_t close = FindAtDepthZero(text, pos, ')');
  if (close == std::string_view::npos) {
    p.operands = text.substr(pos);
    return p;
  }
  p.operands_closed = true;
  p.operands = text.substr(pos, close - pos);

  std::string_view rest = text.substr(close + 1);
  while (!rest.empty() && (rest.front() == ',' || rest.front() == ' ')) rest.remove_prefix(1);
  p.attributes = rest;
  return p;
}

void BracketTracker::Feed(std::string_view text) {
  for (const char c : text) {
    if (in_quote_) {
      if (escape_pending_) {
        escape_pending_ = false;
      } else if (c == '\\') {
        escape_pending_ = true;
      } else if (c == '"') {
        in_quote_ = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quote_ = true;
        break;
      case '(':
      case '{':
      case '[':
        ++depth_;
        break;
      case ')':
      case '}':
      case ']':
        if (depth_ > 0) --depth_;
        break;
      default:
        break;
    }
  }
}

std::optional<InstructionRecord> ParseHloInstructionText(std::string_view text) {
  std::optional<HloInstructionPieces> pieces = SplitHloInstructionText(text);
  if (!pieces) return std::nullopt;
  return MakeInstructionRecord(*pieces);
}

InstructionRecord MakeInstructionRecord(const HloInstructionPieces& pieces) {
  InstructionRecord record;
  record.name = std::string(pieces.name);
  record.opcode = std::string(pieces.opcode);
  record.shape = std::string(pieces.shape);
  record.is_root = pieces.is_root;
  record.text = std::string(pieces.text);
  record.shape_in_text = {static_cast<size_t>(pieces.shape.data() - pieces.text.data()), pieces.shape.size()};

  bool seen_metadata = false;
  bool seen_kind = false;
  bool seen_target = false;
  TopLevelItems attributes(pieces.attributes, ',');
  std::string_view attribute;
  while (attributes.Next(&attribute)) {
    std::string_view key;
    std::string_view value;
    if (!SplitKeyValue(attribute, &key, &value)) continue;
    if (key == "metadata" && !seen_metadata) {
      seen_metadata = true;
      ReadMetadata(pieces.text, value, &record);
    } else if (key == "kind" && !seen_kind && pieces.opcode == "fusion") {
      seen_kind = true;
      record.fusion_kind = std::string(value);
    } else if (key == "custom_call_target" && !seen_target) {
      seen_target = true;
      record.custom_call_target = UnquoteValue(value);
    }
  }
  return record;
}

}  // namespace xladb::ingest
