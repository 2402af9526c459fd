#include "service/proto_fields.h"

#include <cstdio>
#include <cstdlib>

namespace xladb::service::proto_fields {

namespace {

using google::protobuf::FieldDescriptor;

bool Takes(FieldDescriptor::CppType type, ValueKind kind) {
  switch (kind) {
    case ValueKind::kInt: return type == FieldDescriptor::CPPTYPE_INT64 || type == FieldDescriptor::CPPTYPE_INT32;
    case ValueKind::kDouble: return type == FieldDescriptor::CPPTYPE_DOUBLE;
    case ValueKind::kString: return type == FieldDescriptor::CPPTYPE_STRING;
    case ValueKind::kBool: return type == FieldDescriptor::CPPTYPE_BOOL;
  }
  return false;
}

}  // namespace

const FieldDescriptor* CheckedField(const google::protobuf::Descriptor* message, std::string_view name,
                                    ValueKind kind) {
  const FieldDescriptor* field = message->FindFieldByName(std::string(name));
  if (field == nullptr || field->is_repeated() || !Takes(field->cpp_type(), kind)) {
    std::fprintf(stderr, "xladb: a ProtoFields table copies a member into %s.%.*s, which %s\n",
                 std::string(message->full_name()).c_str(), static_cast<int>(name.size()), name.data(),
                 field == nullptr ? "does not exist" : "is not a singular field of the member's type");
    std::abort();
  }
  return field;
}

void Set(google::protobuf::Message* to, const FieldDescriptor* field, int64_t value) {
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
    to->GetReflection()->SetInt32(to, field, static_cast<int32_t>(value));
  } else {
    to->GetReflection()->SetInt64(to, field, value);
  }
}

void Set(google::protobuf::Message* to, const FieldDescriptor* field, double value) {
  to->GetReflection()->SetDouble(to, field, value);
}

void Set(google::protobuf::Message* to, const FieldDescriptor* field, const std::string& value) {
  to->GetReflection()->SetString(to, field, value);
}

void Set(google::protobuf::Message* to, const FieldDescriptor* field, bool value) {
  to->GetReflection()->SetBool(to, field, value);
}

}  // namespace xladb::service::proto_fields
