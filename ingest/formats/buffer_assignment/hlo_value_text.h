// HloValueText: the small printed pieces shared by the buffer-assignment parser (buffer_assignment_parser.h)
// and the live-range parser (live_range_parser.h).
//
//   * ShapeIndex text, `ShapeIndex::ToString` (xla/shape_util.cc, §6.1): `{}`, `{0}`, `{1,3,0}`.
//   * A name with a glued ShapeIndex: `NAME{1,2}` in HloLiveRange::ToString (xla/hlo/utils/hlo_live_range.cc,
//     §4) and in HloValue::ToShortString (xla/service/hlo_value.cc, §2.4), where the braces are printed only
//     for tuple-shaped instructions.
//   * The integer fields these printers write with %d from int64 values that cannot be negative (sizes,
//     offsets, ids, schedule times). Reading one tells "not a number" (the line is not what we thought: an
//     unknown line) apart from "a number, but negative or past int64" (an invariant violation: the caller
//     reports it and skips the line).
//
// Contract: pure functions over string_views; no allocation, no state, thread-safe. Returned views point
// into the caller's text.
#ifndef XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_HLO_VALUE_TEXT_H_
#define XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_HLO_VALUE_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xladb::ingest {

// True for `{}` and `{<int>[,<int>]*}` (decimal, no spaces, no signs).
bool IsShapeIndexText(std::string_view text);

// `NAME{1,2}` → {"NAME", "{1,2}"}; `NAME` → {"NAME", ""}.
struct NameWithShapeIndex {
  std::string_view name;
  std::string_view shape_index;  // as printed, braces included; empty when no braces were printed
};

// Splits `text` at its first '{'. std::nullopt when the name is empty, contains a space, or the part from
// the '{' is not exactly a ShapeIndex.
std::optional<NameWithShapeIndex> SplitGluedShapeIndex(std::string_view text);

// Reading a count field (a non-negative int64 printed in decimal).
enum class CountStatus {
  kOk,
  kMalformed,   // not `-?[0-9]+`: the line is not of the expected form
  kNegative,    // `-[0-9]+` where XLA never prints a negative number
  kOutOfRange,  // digits, but past int64
};

struct CountField {
  CountStatus status = CountStatus::kMalformed;
  int64_t value = 0;  // meaningful only for kOk
};

// Reads exactly `text` (no surrounding spaces).
CountField ParseCountField(std::string_view text);

// "<what> <text> is negative" / "<what> <text> does not fit in int64", for issue messages. Only for
// kNegative and kOutOfRange.
std::string DescribeCountProblem(std::string_view what, std::string_view text, CountStatus status);

// If `*text` starts with `prefix`, removes it and returns true; otherwise leaves `*text` alone.
inline bool ConsumePrefix(std::string_view* text, std::string_view prefix) {
  if (!text->starts_with(prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

// If `*text` ends with `suffix`, removes it and returns true; otherwise leaves `*text` alone.
inline bool ConsumeSuffix(std::string_view* text, std::string_view suffix) {
  if (!text->ends_with(suffix)) return false;
  text->remove_suffix(suffix.size());
  return true;
}

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_BUFFER_ASSIGNMENT_HLO_VALUE_TEXT_H_
