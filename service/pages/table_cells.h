// Table cells and small pieces the report pages share, so every page shows a number the same way: bytes as
// a human size with the exact count in data-v (what sorting and tests read; page.js shows it on hover).
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_PAGES_TABLE_CELLS_H_
#define XLADB_SERVICE_PAGES_TABLE_CELLS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace xladb::service::pages {

std::string BytesCell(int64_t bytes);             // -1: unknown ("–")
std::string DeltaCell(int64_t delta);             // signed, class up (grew) or down (shrank)
std::string IntCell(int64_t n);                   // -1: unknown
std::string TextCell(std::string_view text, bool code = false);
std::string HeaderCell(std::string_view label, bool sortable, bool numeric = false);
// A run time (microseconds since the epoch, UTC) as "2026-11-02 06:00:00Z"; "" for 0.
std::string RunTimeText(int64_t us);
// "Showing N of M <what>; …" when rows were left out, else "".
std::string LeftOutNote(int64_t shown, int64_t total, std::string_view what, std::string_view how_to_see_all);

}  // namespace xladb::service::pages

#endif  // XLADB_SERVICE_PAGES_TABLE_CELLS_H_
