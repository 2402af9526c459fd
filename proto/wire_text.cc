#include "proto/wire_text.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>

#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace xladb::wire {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when the bytes there start no valid sequence. For an
// invalid start, *maximal_part is how many bytes form the maximal invalid subpart (at least 1): one U+FFFD
// replaces them.
size_t ValidSequenceAt(std::string_view text, size_t i, size_t* maximal_part) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  *maximal_part = 1;
  if (b0 < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;       // no overlong 3-byte forms
    else if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;       // no overlong 4-byte forms
    else if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= text.size()) return 0;
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
    *maximal_part = k + 1;
  }
  return need + 1;
}

void FixStringField(google::protobuf::Message* m, const google::protobuf::Reflection* r,
                    const google::protobuf::FieldDescriptor* f) {
  if (f->is_repeated()) {
    for (int i = 0; i < r->FieldSize(*m, f); ++i) {
      std::string scratch;
      const std::string& s = r->GetRepeatedStringReference(*m, f, i, &scratch);
      if (!IsValidUtf8(s)) r->SetRepeatedString(m, f, i, ToValidUtf8(s));
    }
    return;
  }
  std::string scratch;
  const std::string& s = r->GetStringReference(*m, f, &scratch);
  if (!IsValidUtf8(s)) r->SetString(m, f, ToValidUtf8(s));
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // ASCII runs are the common case: skip them eight bytes at a time.
    while (i + 8 <= text.size()) {
      uint64_t word;
      __builtin_memcpy(&word, text.data() + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= text.size()) break;
    size_t part;
    size_t n = ValidSequenceAt(text, i, &part);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

namespace {

// Copies the valid sequences of `text` and lets `replace(invalid_part, out)` write each invalid subpart.
template <typename Replace>
std::string Rewrite(std::string_view text, Replace replace) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t part;
    size_t n = ValidSequenceAt(text, i, &part);
    if (n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      replace(text.substr(i, part), &out);
      i += part;
    }
  }
  return out;
}

}  // namespace

std::string ToValidUtf8(std::string_view text) {
  return Rewrite(text, [](std::string_view, std::string* out) { out->append("\xEF\xBF\xBD"); });  // U+FFFD
}

std::string EscapeInvalidUtf8(std::string_view text) {
  return Rewrite(text, [](std::string_view bytes, std::string* out) {
    for (unsigned char b : bytes) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out->append(buf);
    }
  });
}

namespace {

// What MakeStringsValidUtf8 visits in a message type, found once a type (reflection's descriptor loop and
// type tests cost more than the checks: a gate's answer holds about 15,000 messages of a few strings each).
struct TypePlan {
  std::vector<const google::protobuf::FieldDescriptor*> strings;  // string fields, singular or repeated
  // Message fields (maps' entries included) whose type holds a string at some depth, with that type's plan.
  std::vector<std::pair<const google::protobuf::FieldDescriptor*, const TypePlan*>> messages;
};

class TypePlans {
 public:
  // The plan of type d; the reference stays valid (the map's nodes do not move).
  const TypePlan& Of(const google::protobuf::Descriptor* d) {
    auto [it, added] = plans_.try_emplace(d);
    if (!added) return it->second;  // done, or being made (a type that holds itself)
    TypePlan& plan = it->second;
    for (int i = 0; i < d->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* f = d->field(i);
      if (f->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
        plan.strings.push_back(f);
      } else if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
                 HoldsStrings(f->message_type())) {
        plan.messages.emplace_back(f, &Of(f->message_type()));
      }
    }
    return plan;
  }

 private:
  // A type with a string field at some depth (a type met again while it is being looked at counts as one).
  bool HoldsStrings(const google::protobuf::Descriptor* d) {
    auto [it, added] = holds_strings_.try_emplace(d, true);
    if (!added) return it->second;
    bool holds = false;
    for (int i = 0; i < d->field_count() && !holds; ++i) {
      const google::protobuf::FieldDescriptor* f = d->field(i);
      holds = f->type() == google::protobuf::FieldDescriptor::TYPE_STRING ||
              (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE && HoldsStrings(f->message_type()));
    }
    return holds_strings_[d] = holds;
  }

  std::unordered_map<const google::protobuf::Descriptor*, TypePlan> plans_;
  std::unordered_map<const google::protobuf::Descriptor*, bool> holds_strings_;
};

void FixStrings(google::protobuf::Message* message, const TypePlan& plan) {
  const google::protobuf::Reflection* r = message->GetReflection();
  for (const google::protobuf::FieldDescriptor* f : plan.strings) FixStringField(message, r, f);
  for (const auto& [f, inner] : plan.messages) {
    if (f->is_repeated()) {
      const int n = r->FieldSize(*message, f);
      for (int k = 0; k < n; ++k) FixStrings(r->MutableRepeatedMessage(message, f, k), *inner);
    } else if (r->HasField(*message, f)) {
      FixStrings(r->MutableMessage(message, f), *inner);
    }
  }
}

}  // namespace

void MakeStringsValidUtf8(google::protobuf::Message* message) {
  thread_local TypePlans plans;  // descriptors live as long as the program
  FixStrings(message, plans.Of(message->GetDescriptor()));
}

}  // namespace xladb::wire
