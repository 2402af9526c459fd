// LongText: a whole printed instruction as the table long_texts keeps it (store/schema/schema.sql), with the
// parts other tables intern cut out of it. A 1 GiB buffer assignment prints about 700,000 instruction texts
// whose result shape, op_name and source file path are already rows of shapes, names and source_files: kept
// once there instead of again in every text, they were 44% of long_texts' bytes (docs/schema.md).
//
// A cut part leaves one placeholder byte in the text and its id in the row; the view long_text_details puts
// the parts back, so it and instruction_details spell out the text exactly as it was printed:
//   \x01 → shapes.text of shape_id,  \x02 → names.text of op_name_id,  \x03 → source_files.path of source_file_id
// A part is cut only where the reconstruction is exact by construction: the printed bytes at the part's place
// equal its interned text, and neither the printed text nor any cut part holds a byte from \x00 to \x03 (so
// each placeholder stands for exactly one part, and putting one part back never creates another placeholder).
// Any other text is stored whole, with no ids, as every text was before schema version 9.
//
// Pure functions; thread-safe.
#ifndef XLADB_STORE_FACTS_LONG_TEXT_H_
#define XLADB_STORE_FACTS_LONG_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xladb::store {

inline constexpr char kShapePlaceholder = '\x01';
inline constexpr char kOpNamePlaceholder = '\x02';
inline constexpr char kSourceFilePlaceholder = '\x03';

struct LongText {
  std::string text;  // as stored: the printed text, a placeholder byte where a part was cut
  int64_t shape_id = -1, op_name_id = -1, source_file_id = -1;  // the cut parts' ids; -1: not cut

  bool has_parts() const { return shape_id >= 0 || op_name_id >= 0 || source_file_id >= 0; }
  bool operator==(const LongText&) const = default;
};

// One part of a printed text that an interned table holds: where the text prints it (offset and length;
// at == npos: nowhere), the interned row's id (< 0: none) and its text.
struct InternedPart {
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t at = npos;
  size_t size = 0;
  int64_t id = -1;
  std::string_view value;
};

// `printed` with each part cut out that can be put back exactly (see above); the others stay in the text.
LongText CutInternedParts(std::string printed, const InternedPart& shape, const InternedPart& op_name,
                          const InternedPart& source_file);

// The text with its parts put back, as long_text_details spells it out; `shape`, `op_name` and `source_file`
// are the texts of the row's ids. For tests and for readers that already hold the parts.
std::string SpelledOut(const LongText& t, std::string_view shape, std::string_view op_name,
                       std::string_view source_file);

// long_texts.hash of the row: XXH3-64 of the text for a whole text (as before version 9), else of the stored
// text, a NUL and the three ids (64-bit little-endian), so a text with cut parts never takes the hash of a
// whole text (which holds no NUL).
int64_t LongTextHash(const LongText& t);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_LONG_TEXT_H_
