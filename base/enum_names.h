// ValueNamed: the reverse of an enum's one to-name function, so that each enum's names are written in one
// place (its Name function) and read back by the same list.
//
// Contract: returns the first value of `all` whose name_of(value) equals `name` exactly; nullopt for any
// other text. Pure; thread-safe.
#ifndef XLADB_BASE_ENUM_NAMES_H_
#define XLADB_BASE_ENUM_NAMES_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace xladb {

template <typename Enum, size_t N, typename NameOf>
std::optional<Enum> ValueNamed(std::string_view name, const Enum (&all)[N], NameOf name_of) {
  for (Enum value : all) {
    if (name == name_of(value)) return value;
  }
  return std::nullopt;
}

}  // namespace xladb

#endif  // XLADB_BASE_ENUM_NAMES_H_
