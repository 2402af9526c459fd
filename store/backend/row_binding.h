// Binding values to a statement's parameters. BindRow(st, a, b, c) binds a, b and c to placeholders 1, 2 and
// 3 in that order, so a statement's values are listed once, in the order of its column list, and no caller
// numbers a placeholder. Absent fields (empty text, negative counts, unset optionals) become NULL through
// NonEmpty/NonNegative, so a merge (COALESCE in the ON CONFLICT clause) keeps what another file wrote.
// Header-only; no state. Text is copied (SqlStatement::Bind), so a value may be a temporary.
#ifndef XLADB_STORE_BACKEND_ROW_BINDING_H_
#define XLADB_STORE_BACKEND_ROW_BINDING_H_

#include "store/backend/sql_connection.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace xladb::store {

// One value to placeholder i: integers and bools as INTEGER, doubles as REAL, text copied; std::nullopt or an
// empty std::optional as NULL.
template <typename T>
void BindValue(SqlStatement& st, int i, const T& v) {
  st.Bind(i, v);
}
inline void BindValue(SqlStatement& st, int i, std::nullopt_t) { st.BindNull(i); }
template <typename T>
void BindValue(SqlStatement& st, int i, const std::optional<T>& v) {
  if (v) {
    BindValue(st, i, *v);
  } else {
    st.BindNull(i);
  }
}

// values[0] to placeholder 1, values[1] to 2, ...
template <typename... Values>
void BindRow(SqlStatement& st, const Values&... values) {
  int i = 0;
  (BindValue(st, ++i, values), ...);
}

template <typename T>
void Merge(std::optional<T>& into, std::optional<T>&& from) {
  if (from) into = std::move(from);
}

inline std::optional<std::string> NonEmpty(std::string&& s) {
  if (s.empty()) return std::nullopt;
  return std::move(s);
}

// A view of s, or nothing when s is empty: BindRow copies the text while s lives.
inline std::optional<std::string_view> NonEmpty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return std::string_view(s);
}

// v when `present`, else nothing (NULL).
template <typename T>
std::optional<T> OnlyIf(bool present, T v) {
  if (!present) return std::nullopt;
  return v;
}

inline std::optional<int64_t> NonNegative(int64_t v) {
  if (v < 0) return std::nullopt;
  return v;
}

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_ROW_BINDING_H_
