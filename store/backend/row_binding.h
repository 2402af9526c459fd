// Binding a record's fields to a statement's parameters: absent fields (empty text, negative counts, unset
// optionals) become NULL, so a merge (COALESCE in the ON CONFLICT clause) keeps what another file wrote.
// Header-only; no state.
#ifndef XLADB_STORE_BACKEND_ROW_BINDING_H_
#define XLADB_STORE_BACKEND_ROW_BINDING_H_

#include "store/backend/sql_connection.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace xladb::store {

// Binds text without copying it: `text` must stay valid until the statement is stepped.
inline void BindText(SqlStatement& st, int i, const std::string& text) { st.BindTextRef(i, text); }

template <typename T>
void BindOpt(SqlStatement& st, int i, const std::optional<T>& v) {
  if (!v) {
    st.BindNull(i);
  } else if constexpr (std::is_same_v<T, std::string>) {
    st.Bind(i, *v);  // copied: callers pass temporaries
  } else if constexpr (std::is_same_v<T, bool>) {
    st.Bind(i, *v ? 1 : 0);
  } else {
    st.Bind(i, static_cast<int64_t>(*v));
  }
}

template <typename T>
void Merge(std::optional<T>& into, std::optional<T>&& from) {
  if (from) into = std::move(from);
}

inline std::optional<std::string> NonEmpty(std::string&& s) {
  if (s.empty()) return std::nullopt;
  return std::move(s);
}

inline std::optional<int64_t> NonNegative(int64_t v) {
  if (v < 0) return std::nullopt;
  return v;
}

}  // namespace xladb::store

#endif  // XLADB_STORE_BACKEND_ROW_BINDING_H_
