#include "ingest/formats/buffer_assignment/hlo_value_text.h"

#include "ingest/text/printed_number.h"

namespace xladb::ingest {

bool IsShapeIndexText(std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  std::string_view body = text.substr(1, text.size() - 2);
  if (body.empty()) return true;
  bool need_digit = true;  // at the start and after each comma
  for (char c : body) {
    if (c >= '0' && c <= '9') {
      need_digit = false;
    } else if (c == ',' && !need_digit) {
      need_digit = true;
    } else {
      return false;
    }
  }
  return !need_digit;
}

std::optional<NameWithShapeIndex> SplitGluedShapeIndex(std::string_view text) {
  size_t brace = text.find('{');
  NameWithShapeIndex out;
  out.name = text.substr(0, brace);
  if (out.name.empty() || out.name.find(' ') != std::string_view::npos) return std::nullopt;
  if (brace == std::string_view::npos) return out;
  out.shape_index = text.substr(brace);
  if (!IsShapeIndexText(out.shape_index)) return std::nullopt;
  return out;
}

CountField ParseCountField(std::string_view text) {
  CountField field;
  std::string_view digits = text;
  bool negative = ConsumePrefix(&digits, "-");
  if (digits.empty()) return field;  // kMalformed
  for (char c : digits) {
    if (c < '0' || c > '9') return field;  // kMalformed
  }
  if (negative) {
    field.status = CountStatus::kNegative;
    return field;
  }
  std::optional<int64_t> value = ParseInt64(digits);
  if (!value) {
    field.status = CountStatus::kOutOfRange;
    return field;
  }
  field.status = CountStatus::kOk;
  field.value = *value;
  return field;
}

std::string DescribeCountProblem(std::string_view what, std::string_view text, CountStatus status) {
  std::string message(what);
  message += ' ';
  message += text.substr(0, 64);
  message += status == CountStatus::kNegative ? " is negative" : " does not fit in int64";
  return message;
}

}  // namespace xladb::ingest
