// Shape text as XLA prints it (docs/formats.md §2.3, §7), reduced to what two dumps can compare.
//
//   ShapeWithoutLayout("f32[8,128]{1,0}")                 == "f32[8,128]"
//   ShapeWithoutLayout("(f32[2]{0}, s32[])")              == "(f32[2], s32[])"
//   ShapeWithoutLayout("s32[2048,128]{1,0:T(8,128)S(1)}") == "s32[2048,128]"   (tiling and memory space too)
//   CompactSignature("(f32[8]{0}, s32[])->f32[8]{0}")     == "(f32[8],s32[])->f32[8]"
//   CompactSignature("(f32[8], s32[]) -> f32[8]")         == "(f32[8],s32[])->f32[8]"
//
// A layout is the `{…}` right after an array shape's `]`; `/*index=5*/` comments (long tuples) go too.
// Pure functions; thread-safe.
#ifndef XLADB_STORE_FACTS_SHAPE_TEXT_H_
#define XLADB_STORE_FACTS_SHAPE_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xladb::store {

std::string ShapeWithoutLayout(std::string_view shape);

// `shape` without its `/*index=N*/` comments, layouts kept: ShapeWithoutComments("(f32[2], /*index=1*/s32[])")
// == "(f32[2], s32[])".
[[nodiscard]] std::string ShapeWithoutComments(std::string_view shape);

// An entry signature as HLO text prints it (entry_computation_layout's "(f32[8]{0}, s32[])->f32[8]{0}") in
// the store's form: no layouts, no comments, " -> " (modules.hlo_entry_signature).
//   StoredEntrySignature("(f32[8]{0}, s32[])->f32[8]{0}") == "(f32[8], s32[]) -> f32[8]"
[[nodiscard]] std::string StoredEntrySignature(std::string_view printed);

// An entry signature without layouts or spaces: the buffer assignment's form and HLO text's
// entry_computation_layout compare equal when they describe the same shapes.
std::string CompactSignature(std::string_view signature);

// The logical size of a shape as XLA's HloLiveRange counts it for its peak (ShapeUtil::ByteSizeOf with 8-byte
// pointers, docs/formats.md §4): elements × the element type's bytes, no tiling padding (a layout's `E(n)`
// packs n-bit elements); a tuple is 8 bytes per element; a token 0; a bounded dynamic dimension `<=N` counts
// N. nullopt for text that is not such a shape (an unbounded `?` dimension included).
//   LogicalByteSize("f32[8,128]{1,0:T(8,128)}") == 4096    LogicalByteSize("(f32[2], s32[])") == 16
std::optional<int64_t> LogicalByteSize(std::string_view shape);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_SHAPE_TEXT_H_
