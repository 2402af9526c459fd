#include "store/facts/long_text.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <memory>

namespace xladb::store {
namespace {

// A NUL (cut off when stored) or a placeholder byte.
bool HasReservedByte(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '\0' && c <= kSourceFilePlaceholder; });
}

}  // namespace

LongText CutInternedParts(std::string printed, const InternedPart& shape, const InternedPart& op_name,
                          const InternedPart& source_file) {
  LongText out;
  if (HasReservedByte(printed)) {
    out.text = std::move(printed);
    return out;
  }
  struct Cut {
    const InternedPart* part;
    char placeholder;
    int64_t* id;
  };
  std::array<Cut, 3> cuts = {Cut{&shape, kShapePlaceholder, &out.shape_id},
                             Cut{&op_name, kOpNamePlaceholder, &out.op_name_id},
                             Cut{&source_file, kSourceFilePlaceholder, &out.source_file_id}};
  std::sort(cuts.begin(), cuts.end(), [](const Cut& a, const Cut& b) { return a.part->at < b.part->at; });
  std::string text;
  text.reserve(printed.size());
  size_t copied = 0;  // printed[0, copied) is in `text`
  for (const Cut& c : cuts) {
    const InternedPart& p = *c.part;
    const bool exact = p.id >= 0 && p.at != InternedPart::npos && p.at >= copied && p.at <= printed.size() &&
                       p.size > 0 && p.size <= printed.size() - p.at &&
                       std::string_view(printed).substr(p.at, p.size) == p.value &&
                       !HasReservedByte(p.value);
    if (!exact) continue;
    text.append(printed, copied, p.at - copied);
    text += c.placeholder;
    *c.id = p.id;
    copied = p.at + p.size;
  }
  if (copied == 0) {
    out.text = std::move(printed);
    return out;
  }
  text.append(printed, copied, std::string::npos);
  out.text = std::move(text);
  return out;
}

std::string SpelledOut(const LongText& t, std::string_view shape, std::string_view op_name,
                       std::string_view source_file) {
  std::string out;
  out.reserve(t.text.size() + shape.size() + op_name.size() + source_file.size());
  for (const char c : t.text) {
    if (c == kShapePlaceholder && t.shape_id >= 0) {
      out += shape;
    } else if (c == kOpNamePlaceholder && t.op_name_id >= 0) {
      out += op_name;
    } else if (c == kSourceFilePlaceholder && t.source_file_id >= 0) {
      out += source_file;
    } else {
      out += c;
    }
  }
  return out;
}

int64_t LongTextHash(const LongText& t) {
  if (!t.has_parts()) return static_cast<int64_t>(XXH3_64bits(t.text.data(), t.text.size()));
  // The text, a NUL and the ids, hashed as they come (the same hash as of the bytes one after the other).
  struct FreeState {
    void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
  };
  thread_local const std::unique_ptr<XXH3_state_t, FreeState> state(XXH3_createState());
  XXH3_64bits_reset(state.get());
  XXH3_64bits_update(state.get(), t.text.data(), t.text.size());
  unsigned char tail[1 + 3 * 8] = {0};  // the NUL, then each id in 64-bit little-endian
  size_t at = 1;
  for (const int64_t id : {t.shape_id, t.op_name_id, t.source_file_id}) {
    for (int shift = 0; shift < 64; shift += 8) {
      tail[at++] = static_cast<unsigned char>(static_cast<uint64_t>(id) >> shift);
    }
  }
  XXH3_64bits_update(state.get(), tail, sizeof tail);
  return static_cast<int64_t>(XXH3_64bits_digest(state.get()));
}

}  // namespace xladb::store
