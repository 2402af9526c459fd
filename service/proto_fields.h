// ProtoFields<S, M>: a store result S copied into its API message M, each field named once: a table of
// {M's field name, member of S}, applied through protobuf reflection. It replaces the runs of
// `out->set_x(s.x)` the answers were written with; what is not a plain copy (an enum, a repeated or message
// field, a computed value) stays the caller's, written beside the table's Copy.
//
// Contract
//   * A table is built once (a function-local static) and checked then: every name is a singular field of M
//     whose type takes the member's (int64_t: int64 or int32; double: double; std::string: string; bool:
//     bool). A name M lacks, or a type that does not fit, is a programming error: building the table prints
//     both and aborts, so any test that answers through the table finds it.
//   * Copy(from, to) sets every listed field as its generated setter would (an int64 into an int32 field is
//     narrowed as set_x narrows it), so the message and its bytes are those the setters gave.
//   * WithModuleMetrics() adds every metric of store/facts/module_metrics.h under its own name.
//   * Thread-safe once built (const).
#ifndef XLADB_SERVICE_PROTO_FIELDS_H_
#define XLADB_SERVICE_PROTO_FIELDS_H_

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "store/facts/module_metrics.h"

namespace xladb::service {

namespace proto_fields {

// What a member holds, for the field check.
enum class ValueKind { kInt, kDouble, kString, kBool };

// `message`'s field `name`, checked to be singular and to take a `kind`; aborts naming both otherwise.
const google::protobuf::FieldDescriptor* CheckedField(const google::protobuf::Descriptor* message,
                                                      std::string_view name, ValueKind kind);

// The generated setters' effect, through reflection (`field` checked by CheckedField).
void Set(google::protobuf::Message* to, const google::protobuf::FieldDescriptor* field, int64_t value);
void Set(google::protobuf::Message* to, const google::protobuf::FieldDescriptor* field, double value);
void Set(google::protobuf::Message* to, const google::protobuf::FieldDescriptor* field, const std::string& value);
void Set(google::protobuf::Message* to, const google::protobuf::FieldDescriptor* field, bool value);

}  // namespace proto_fields

template <typename S, std::derived_from<google::protobuf::Message> M>
class ProtoFields {
 public:
  // One field: `{"total_bytes", &S::total_bytes}`. The member is an int64_t, double, std::string or bool.
  class Field {
   public:
    template <typename T>
    Field(std::string_view name, T S::*member)
        : name_(name), member_(member), kind_(KindOf<T>()), copy_(&CopyMember<T>) {}

   private:
    friend class ProtoFields;
    using Member = std::variant<int64_t S::*, double S::*, std::string S::*, bool S::*>;
    using Copier = void (*)(const S&, const Member&, const google::protobuf::FieldDescriptor*, M*);

    // Chosen by the member's type when the field is named, so a copy does not visit every type.
    template <typename T>
    static void CopyMember(const S& from, const Member& member, const google::protobuf::FieldDescriptor* field,
                           M* to) {
      proto_fields::Set(to, field, from.*std::get<T S::*>(member));
    }
    template <typename T>
    static constexpr proto_fields::ValueKind KindOf() {
      if constexpr (std::same_as<T, int64_t>) return proto_fields::ValueKind::kInt;
      if constexpr (std::same_as<T, double>) return proto_fields::ValueKind::kDouble;
      if constexpr (std::same_as<T, std::string>) return proto_fields::ValueKind::kString;
      if constexpr (std::same_as<T, bool>) return proto_fields::ValueKind::kBool;
    }

    std::string_view name_;
    Member member_;
    proto_fields::ValueKind kind_;
    Copier copy_;
  };

  ProtoFields(std::initializer_list<Field> fields) {
    for (const Field& f : fields) Add(f);
  }

  // This table, then every metric of store/facts/module_metrics.h under its own name.
  ProtoFields WithModuleMetrics() const
    requires std::derived_from<S, store::ModuleMetricValues>
  {
    ProtoFields with = *this;
    for (const store::ModuleMetric& m : store::kModuleMetrics) {
      with.Add(Field(m.name, static_cast<int64_t S::*>(m.value)));
    }
    return with;
  }

  void Copy(const S& from, M* to) const {
    for (const Bound& b : fields_) b.copy(from, b.member, b.field, to);
  }

 private:
  struct Bound {
    const google::protobuf::FieldDescriptor* field;
    typename Field::Member member;
    typename Field::Copier copy;
  };

  void Add(const Field& f) {
    fields_.push_back({proto_fields::CheckedField(M::descriptor(), f.name_, f.kind_), f.member_, f.copy_});
  }

  std::vector<Bound> fields_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_PROTO_FIELDS_H_
