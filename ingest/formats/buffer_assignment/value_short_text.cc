#include "ingest/formats/buffer_assignment/value_short_text.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace xladb::ingest {
namespace {

// Consumes `[0-9]+` at the front of `*text`; false if there is no digit.
bool ConsumeDigits(std::string_view* text) {
  size_t n = 0;
  while (n < text->size() && (*text)[n] >= '0' && (*text)[n] <= '9') ++n;
  text->remove_prefix(n);
  return n > 0;
}

// ` [<digits>,<digits>]: ` somewhere in the line: the offset/size pair of pre-2019 allocation value lines.
// Each candidate is checked only as far as its own digits, so the scan stays linear.
bool HasOffsetSizePair(std::string_view line) {
  for (size_t at = line.find(" ["); at != std::string_view::npos; at = line.find(" [", at + 1)) {
    std::string_view rest = line.substr(at + 2);
    if (ConsumeDigits(&rest) && ConsumePrefix(&rest, ",") && ConsumeDigits(&rest) &&
        rest.starts_with("]: ")) {
      return true;
    }
  }
  return false;
}

}  // namespace

CountStatus ParseValueShort(std::string_view text, ValueRef* out, std::string_view* bad_number) {
  if (!ConsumePrefix(&text, "<") || !ConsumeSuffix(&text, ">")) return CountStatus::kMalformed;
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return CountStatus::kMalformed;
  std::string_view id_text = text.substr(0, space);
  std::string_view rest = text.substr(space + 1);
  size_t name_end = rest.find(' ');
  std::string_view tail = name_end == std::string_view::npos ? std::string_view() : rest.substr(name_end);
  std::optional<NameWithShapeIndex> name = SplitGluedShapeIndex(rest.substr(0, name_end));
  if (!name) return CountStatus::kMalformed;
  bool is_phi = ConsumePrefix(&tail, " (phi)");
  int64_t color = -1;
  if (ConsumePrefix(&tail, " @")) {
    CountField field = ParseCountField(tail);
    if (field.status == CountStatus::kOk && field.value > std::numeric_limits<int32_t>::max()) {
      field.status = CountStatus::kOutOfRange;
    }
    if (field.status != CountStatus::kOk) {
      *bad_number = tail;
      return field.status;
    }
    color = field.value;
    tail = {};
  }
  if (!tail.empty()) return CountStatus::kMalformed;
  CountField id = ParseCountField(id_text);
  if (id.status != CountStatus::kOk) {
    *bad_number = id_text;
    return id.status;
  }
  out->id = id.value;
  out->instruction = std::string(name->name);
  out->index_printed = !name->shape_index.empty();
  out->shape_index = out->index_printed ? std::string(name->shape_index) : std::string("{}");
  out->is_phi = is_phi;
  out->color = static_cast<int32_t>(color);
  return CountStatus::kOk;
}

bool LooksLikePre2019ValueLine(std::string_view line) {
  return line.find(">, positions:") != std::string_view::npos ||
         (line.starts_with(" ") && line.find("](#") != std::string_view::npos) ||
         (line.starts_with(" ") && HasOffsetSizePair(line));
}

}  // namespace xladb::ingest
