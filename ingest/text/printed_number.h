// Parsing of the numbers XLA prints: exact decimal integers, HumanReadableNumBytes strings (§6.4) and
// space-grouped integers of the stack-trace breakdown (§4.2).
//
// All functions are pure, allocation-free and thread-safe. They return std::nullopt for anything that is
// not exactly the printed form (including overflow past int64), never a partial value.
#ifndef XLADB_INGEST_TEXT_PRINTED_NUMBER_H_
#define XLADB_INGEST_TEXT_PRINTED_NUMBER_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace xladb::ingest {

// "[-]<digits>" → int64. Rejects empty input, signs alone, other characters and overflow.
std::optional<int64_t> ParseInt64(std::string_view text);

// "800B", "1.2KiB", "17.77MiB", "-3.00GiB" → approximate bytes (rounded to nearest). Surrounding spaces are
// allowed (the printers right-align with %10s). The result is lossy by nature: use exact integers when the
// format has them.
std::optional<int64_t> ParseHumanBytes(std::string_view text);

// "1 179 648" → 1179648; "-2 048" → -2048. Groups must be separated by single ASCII spaces.
std::optional<int64_t> ParseSpaceGroupedInt64(std::string_view text);

// "0.5", "6.6072e-05", "1", "inf" → double (strtod semantics over exactly the given text).
std::optional<double> ParseDouble(std::string_view text);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_PRINTED_NUMBER_H_
