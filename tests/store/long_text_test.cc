// store/facts/long_text.h: which parts of a printed instruction are cut out, and that putting them back
// gives the printed text again; the hash of a cut text is never the hash of a whole one.
#include "store/facts/long_text.h"

#include <gtest/gtest.h>

#include <string>

#include "store/facts/interned_texts.h"

namespace xladb::store {
namespace {

const std::string kShape = "f32[8]{0}", kOpName = "jit(f)/add", kPath = "/src/m.py";
const std::string kPrinted = "%add = f32[8]{0} add(%x, %y), metadata={op_name=\"jit(f)/add\" source_file=\"/src/m.py\"}";

InternedPart Part(const std::string& printed, const std::string& value, int64_t id) {
  return {printed.find(value), value.size(), id, value};
}

TEST(LongText, EveryPartPrintedAsInternedIsCutAndPutBack) {
  const LongText t = CutInternedParts(kPrinted, Part(kPrinted, kShape, 4), Part(kPrinted, kOpName, 5),
                                      Part(kPrinted, kPath, 6));
  EXPECT_EQ(t.text, "%add = \x01 add(%x, %y), metadata={op_name=\"\x02\" source_file=\"\x03\"}");
  EXPECT_EQ(t.shape_id, 4);
  EXPECT_EQ(t.op_name_id, 5);
  EXPECT_EQ(t.source_file_id, 6);
  EXPECT_EQ(SpelledOut(t, kShape, kOpName, kPath), kPrinted);
  EXPECT_NE(LongTextHash(t), TextHash(t.text));
  // As stored: XXH3-64 of the text, a NUL and the three ids in 64-bit little-endian.
  std::string bytes = t.text + '\0';
  for (int64_t id : {4, 5, 6}) bytes += std::string(1, static_cast<char>(id)) + std::string(7, '\0');
  EXPECT_EQ(LongTextHash(t), TextHash(bytes));
  EXPECT_NE(LongTextHash(t), LongTextHash(LongText{t.text, 4, 5, 7}));  // the ids are part of the hash
  EXPECT_EQ(LongTextHash(LongText{kPrinted}), TextHash(kPrinted));      // a whole text hashes as before
}

TEST(LongText, APartIsCutOnlyWherePuttingItBackIsExact) {
  // The printed bytes at the place differ from the interned text (an op_name printed C-escaped): kept.
  InternedPart elsewhere = Part(kPrinted, kOpName, 5);
  elsewhere.value = "jit(f)/ad\"";
  LongText t = CutInternedParts(kPrinted, {}, elsewhere, Part(kPrinted, kPath, 6));
  EXPECT_EQ(t.op_name_id, -1);
  EXPECT_EQ(t.source_file_id, 6);
  EXPECT_NE(t.text.find(kOpName), std::string::npos);
  EXPECT_EQ(SpelledOut(t, "", "", kPath), kPrinted);

  // A text holding a placeholder byte (or a NUL) is stored whole: a placeholder must stand for one part.
  const std::string odd = "%c = f32[] custom-call(), backend_config=\"\x02\", metadata={op_name=\"jit(f)/add\"}";
  t = CutInternedParts(odd, Part(odd, "f32[]", 1), Part(odd, kOpName, 5), {});
  EXPECT_EQ(t, LongText{odd});
  // So is a text whose part holds one (putting the part back would make another placeholder).
  const std::string odd_name = std::string("jit(f)/\x03");
  const std::string printed = "%c = f32[] constant(0), metadata={op_name=\"" + odd_name + "\" source_file=\"/s.py\"}";
  t = CutInternedParts(printed, {}, {printed.find(odd_name), odd_name.size(), 5, odd_name}, Part(printed, "/s.py", 6));
  EXPECT_EQ(t, LongText{printed});

  // Overlapping places, one running past the end, one starting past it: only what fits is cut.
  t = CutInternedParts(kPrinted, Part(kPrinted, kShape, 4), {kPrinted.find(kShape) + 2, 3, 5, kShape.substr(2, 3)},
                       {kPrinted.size() - 2, 9, 6, kPath});
  EXPECT_EQ(t.shape_id, 4);
  EXPECT_EQ(t.op_name_id, -1);
  EXPECT_EQ(t.source_file_id, -1);
  EXPECT_EQ(SpelledOut(t, kShape, "", ""), kPrinted);
  t = CutInternedParts(kPrinted, {}, {}, {kPrinted.size() + 5, 9, 6, kPath});
  EXPECT_EQ(t, LongText{kPrinted});
}

}  // namespace
}  // namespace xladb::store
