// Name patterns as every xladb query, the gate and its config take them: SQL GLOB (`jit_*`, case-sensitive);
// "" matches everything, a name without * ? [ matches itself. Pure functions; thread-safe.
#ifndef XLADB_STORE_QUERY_NAME_PATTERN_H_
#define XLADB_STORE_QUERY_NAME_PATTERN_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace xladb::store {

bool IsGlobPattern(const std::string& name);
// A GLOB pattern must close every `[…]` class (SQLite would silently match nothing): kInvalidArgument
// "<what> pattern '…' has a '[' without a closing ']'".
Status CheckGlobPattern(const std::string& pattern, std::string_view what);
// A pattern that matches `name` alone, also when it holds * ? [ (each written as a one-character class: [*]).
std::string GlobLiteral(const std::string& name);
// `name` matches `pattern` (SQLite's own GLOB when the pattern has * ? [).
bool NameMatches(const std::string& pattern, const std::string& name);

}  // namespace xladb::store

#endif  // XLADB_STORE_QUERY_NAME_PATTERN_H_
