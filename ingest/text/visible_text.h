// Visible text: names from dumps, run names and labels shown to a person without letting their bytes act.
// A terminal obeys escape sequences (ESC, BEL, CSI as U+009B) and every text view applies bidi controls
// (U+202E turns "exe.txt" around), so output meant for people writes them as escapes that read as what they
// are:
//
//   EscapeControlCharacters("a\x1b]0;PWN\x07")  == "a\\x1b]0;PWN\\x07"
//   EscapeControlCharacters("tab\there\n")      == "tab\\there\\n"
//   EscapeControlCharacters("\u202egnp.exe")    == "\\u202egnp.exe"
//   EscapeBidiControls(...)                      the same for the bidi controls only (pages keep line breaks)
//
// Escaped: C0 controls (\n, \r, \t by name, others as \xNN), DEL (\x7f), C1 controls U+0080–U+009F and the
// bidi controls U+202A–U+202E and U+2066–U+2069 (as \uNNNN), and a byte 0x80–0x9F that is not part of a
// UTF-8 character (as \xNN: a terminal not in UTF-8 reads 0x9B as CSI). Everything else, other bytes that
// are not UTF-8 included, comes back unchanged (a backslash too: the escapes are for reading, not for
// decoding).
//
// Pure functions; thread-safe.
#ifndef XLADB_INGEST_TEXT_VISIBLE_TEXT_H_
#define XLADB_INGEST_TEXT_VISIBLE_TEXT_H_

#include <string>
#include <string_view>

namespace xladb::ingest {

std::string EscapeControlCharacters(std::string_view text);
std::string EscapeBidiControls(std::string_view text);

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_TEXT_VISIBLE_TEXT_H_
