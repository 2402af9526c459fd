#include "ingest/text/hlo_instruction_text.h"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

TEST(HloInstructionText, LongFormWithOperandShapes) {
  auto r = ParseHloInstructionText("%add.39 = f32[] add(f32[] %x.51, f32[] %y.52)");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "add.39");
  EXPECT_EQ(r->shape, "f32[]");
  EXPECT_EQ(r->opcode, "add");
  EXPECT_FALSE(r->is_root);
  EXPECT_EQ(r->text, "%add.39 = f32[] add(f32[] %x.51, f32[] %y.52)");
  EXPECT_EQ(r->source_line, -1);
  EXPECT_EQ(r->computation, "");
  EXPECT_EQ(r->sequence_index, -1);
}

TEST(HloInstructionText, ShortParsableRootTupleWithIndexMarker) {
  auto r = ParseHloInstructionText(
      "  ROOT tuple.5 = (f32[2]{0}, s32[], f32[], f32[], f32[], /*index=5*/pred[]) tuple(a.1, b.2, c, d, e, "
      "/*index=5*/f.3)");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->is_root);
  EXPECT_EQ(r->name, "tuple.5");
  EXPECT_EQ(r->shape, "(f32[2]{0}, s32[], f32[], f32[], f32[], /*index=5*/pred[])");
  EXPECT_EQ(r->opcode, "tuple");
  EXPECT_EQ(r->text.rfind("tuple.5 = ", 0), 0u) << r->text;  // leading spaces and ROOT dropped
}

TEST(HloInstructionText, FusionKindAndMetadata) {
  auto r = ParseHloInstructionText(
      "%fusion.12 = pred[8,2048,2048]{1,2,0:T(8,128)(4,1)} fusion(%param_2.14), kind=kLoop, "
      "output_to_operand_aliasing={{}: (0, {})}, calls=%copy_fusion.2, metadata={op_type=\"Mul\" "
      "op_name=\"jit(f)/mul\" source_file=\"/tmp/a b.py\" source_line=195 source_end_line=196 "
      "profile_type={1,2}}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->opcode, "fusion");
  EXPECT_EQ(r->fusion_kind, "kLoop");
  EXPECT_EQ(r->op_type, "Mul");
  EXPECT_EQ(r->op_name, "jit(f)/mul");
  EXPECT_EQ(r->source_file, "/tmp/a b.py");
  EXPECT_EQ(r->source_line, 195);
  EXPECT_EQ(r->custom_call_target, "");
}

// The spans say where the text prints the shape, op_name and source_file byte for byte (the store keeps those
// parts once, in their own tables); a value printed C-escaped has none.
TEST(HloInstructionText, SpansOfTheShapeOpNameAndSourceFileInTheText) {
  auto r = ParseHloInstructionText(
      "  ROOT %fusion.12 = pred[8]{0} fusion(%p), kind=kLoop, metadata={op_type=\"Mul\" op_name=\"jit(f)/mul\" "
      "source_file=\"/tmp/a b.py\" source_line=195}");
  ASSERT_TRUE(r.has_value());
  auto at = [&r](const InstructionRecord::TextSpan& s) { return r->text.substr(s.at, s.size); };
  EXPECT_EQ(at(r->shape_in_text), "pred[8]{0}");
  EXPECT_EQ(r->shape_in_text.at, r->text.find("pred"));
  EXPECT_EQ(at(r->op_name_in_text), "jit(f)/mul");
  EXPECT_EQ(at(r->source_file_in_text), "/tmp/a b.py");

  auto escaped = ParseHloInstructionText(
      "%c = f32[] constant(0), metadata={op_name=\"jit(f)/\\\"q\\\"\" source_file=\"/t\\\\x.py\"}");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->op_name, "jit(f)/\"q\"");
  EXPECT_EQ(escaped->source_file, "/t\\x.py");
  EXPECT_EQ(escaped->op_name_in_text.at, InstructionRecord::TextSpan::kNotPrinted);
  EXPECT_EQ(escaped->source_file_in_text.at, InstructionRecord::TextSpan::kNotPrinted);
  EXPECT_EQ(escaped->text.substr(escaped->shape_in_text.at, escaped->shape_in_text.size), "f32[]");

  auto bare = ParseHloInstructionText("%add.39 = f32[] add(f32[] %x.51, f32[] %y.52)");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->op_name_in_text.at, InstructionRecord::TextSpan::kNotPrinted);
  EXPECT_EQ(bare->source_file_in_text.at, InstructionRecord::TextSpan::kNotPrinted);
}

TEST(HloInstructionText, KindIsOnlyAFusionKind) {
  auto r = ParseHloInstructionText("%x = f32[] custom-call(), kind=kLoop, custom_call_target=\"foo\"");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->fusion_kind, "");
  EXPECT_EQ(r->custom_call_target, "foo");
}

TEST(HloInstructionText, SeedFromInstructionWithBase64BackendConfig) {
  // Seed 000 line 66: a tuple-shaped Pallas custom-call with an 11 KB backend_config.
  std::string seed = ReadTestFile(SeedPath("000"));
  ASSERT_FALSE(seed.empty());
  const std::string_view prefix = " from instruction: %splash_mha_fwd_e9701070.1 = ";
  size_t begin = seed.find(prefix);
  ASSERT_NE(begin, std::string::npos);
  size_t end = seed.find('\n', begin);
  std::string_view line = std::string_view(seed).substr(begin, end - begin);
  auto r = ParseHloInstructionText(line.substr(std::string_view(" from instruction:").size()));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(r->opcode, "custom-call");
  EXPECT_EQ(r->shape,
            "(f32[512,128]{1,0:T(8,128)}, f32[512,128]{1,0:T(8,128)}, f32[512,128]{1,0:T(8,128)}, "
            "bf16[8,2048,128]{2,1,0:T(8,128)(2,1)})");
  EXPECT_EQ(r->custom_call_target, "tpu_custom_call");
  EXPECT_EQ(r->op_name,
            "jit(splash_attention_kernel)/jit(main)/splash_attention_kernel/splash_kernel_b512_h8_s2048/"
            "jit(_splash_attention)/splash_mha_fwd_e9701070/pallas_call");
  EXPECT_EQ(r->source_line, 1100);
  EXPECT_EQ(r->text.size(), line.size() - std::string_view(" from instruction: ").size());
}

TEST(HloInstructionText, CStringEscapesInMetadataAreUnescaped) {
  auto r = ParseHloInstructionText(
      "%c = f32[] constant(0), metadata={op_type=\"a\\\"b\" op_name=\"x\\\\y\\303\\227z\" "
      "source_file=\"f\\tg\" source_line=7}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->op_type, "a\"b");
  EXPECT_EQ(r->op_name, "x\\y\xc3\x97z");  // octal escapes of the UTF-8 multiplication sign
  EXPECT_EQ(r->source_file, "f\tg");
  EXPECT_EQ(r->source_line, 7);
}

TEST(HloInstructionText, RawJsonBackendConfigWithBracesAndCommasInStrings) {
  auto r = ParseHloInstructionText(
      "%cc = f32[4]{0} custom-call(%a), backend_config={\"k\":\"}, metadata={op_name=\\\"evil\\\"}\","
      "\"l\":[1,{\"m\":\"(\"}]}, custom_call_target=\"real\", metadata={op_name=\"good\" source_line=3}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->custom_call_target, "real");
  EXPECT_EQ(r->op_name, "good");
  EXPECT_EQ(r->source_line, 3);
}

TEST(HloInstructionText, QuotedBackendConfigIsSkipped) {
  auto r = ParseHloInstructionText(
      "%cc = f32[4]{0} custom-call(%a), custom_call_target=\"t\", "
      "backend_config=\"{\\\"x\\\": \\\"}, kind=kOops\\\"}\", metadata={op_type=\"T\"}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->custom_call_target, "t");
  EXPECT_EQ(r->op_type, "T");
  EXPECT_EQ(r->fusion_kind, "");
}

TEST(HloInstructionText, FiveMegabyteBackendConfigIsLinear) {
  std::string blob;
  blob.reserve(5 * 1024 * 1024 + 64);
  while (blob.size() < 5 * 1024 * 1024) blob += "{\\\"a\\\":[\\\"},(\\\"]},";
  std::string json;
  json.reserve(5 * 1024 * 1024 + 64);
  while (json.size() < 5 * 1024 * 1024) json += "{\"q\":\"},,{[(\",\"r\":[1,2,{\"s\":\"\\\"\"}]},";
  json = "{\"list\":[" + json + "{}]}";
  std::string text = "%f.1 = f32[8]{0} fusion(%p), kind=kCustom, backend_config=" + json +
                     ", quoted=\"" + blob + "\", metadata={op_name=\"after\" source_line=42}";
  ASSERT_GT(text.size(), 10u * 1024 * 1024);
  auto start = std::chrono::steady_clock::now();
  auto r = ParseHloInstructionText(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->fusion_kind, "kCustom");
  EXPECT_EQ(r->op_name, "after");
  EXPECT_EQ(r->source_line, 42);
  EXPECT_EQ(r->text.size(), text.size());
  EXPECT_LT(seconds, 5.0) << "10 MB line took " << seconds << " s: the scan is not linear";
}

TEST(HloInstructionText, NotAnInstructionGivesNullopt) {
  for (std::string_view text :
       {"", "   ", "ROOT ", "HloModule m, is_scheduled=true", "}", "ENTRY %main.47 (a: f32[]) -> f32[] {",
        "%a = ", "%a = f32[]", "%a = f32[] ", "%a = f32[] add", "= f32[] add(%x)", "%a=f32[] add(%x)",
        "%a = (f32[], s32[] add(%x)", "FileNames", "1 \"a.py\""}) {
    EXPECT_FALSE(ParseHloInstructionText(text).has_value()) << text;
  }
}

TEST(HloInstructionText, GarbageAfterTheHeadGivesBestEffortRecord) {
  // Unbalanced operands: head fields only.
  auto a = ParseHloInstructionText("%a = f32[] add(%x, {%y, metadata={op_name=\"no\"}");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->opcode, "add");
  EXPECT_EQ(a->op_name, "");
  // Unterminated quote in an attribute: what precedes it is still read.
  auto b = ParseHloInstructionText("%b = f32[] custom-call(%x), custom_call_target=\"t\", metadata={op_name=\"un");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->custom_call_target, "t");
  EXPECT_EQ(b->op_name, "un");
  // Stray closers do not drive the depth negative.
  auto c = ParseHloInstructionText("%c = f32[] negate(%x)), }}], kind=kLoop, metadata={source_line=-3}");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->source_line, -1);
  // Integer past int64 in source_line is ignored.
  auto d = ParseHloInstructionText("%d = f32[] negate(%x), metadata={source_line=99999999999999999999999}");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source_line, -1);
  // Trailing backslash in an unterminated quoted value.
  auto e = ParseHloInstructionText("%e = f32[] custom-call(), custom_call_target=\"abc\\");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->custom_call_target, "abc\\");
}

TEST(HloInstructionText, UnescapeCString) {
  EXPECT_EQ(UnescapeCString(""), "");
  EXPECT_EQ(UnescapeCString("plain"), "plain");
  EXPECT_EQ(UnescapeCString("a\\\"b\\\\c\\nd\\te"), "a\"b\\c\nd\te");
  EXPECT_EQ(UnescapeCString("\\303\\227"), "\xc3\x97");
  EXPECT_EQ(UnescapeCString("\\0"), std::string(1, '\0'));
  EXPECT_EQ(UnescapeCString("\\101\\1012"), "AA2");  // octal takes at most three digits
  EXPECT_EQ(UnescapeCString("\\x41\\xg"), "A\\xg");
  EXPECT_EQ(UnescapeCString("\\q"), "\\q");          // unknown escape kept as written
  EXPECT_EQ(UnescapeCString("end\\"), "end\\");      // lone trailing backslash kept
}

TEST(HloInstructionText, TopLevelItemsSplitOutsideBracketsAndQuotes) {
  std::vector<std::string> items;
  TopLevelItems it(" a={1, 2}, b=\"x, y\\\", z\",, c=(f32[], s32[]), d", ',');
  std::string_view item;
  while (it.Next(&item)) items.emplace_back(item);
  EXPECT_EQ(items, (std::vector<std::string>{"a={1, 2}", "b=\"x, y\\\", z\"", "c=(f32[], s32[])", "d"}));
}

TEST(HloInstructionText, SplitPiecesGivesOperandsAndAttributes) {
  auto p = SplitHloInstructionText("ROOT %r = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b), sharding={replicated}");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->is_root);
  EXPECT_TRUE(p->operands_closed);
  EXPECT_EQ(p->operands, "f32[2]{0} %a, f32[2]{0} %b");
  EXPECT_EQ(p->attributes, "sharding={replicated}");
}

}  // namespace
}  // namespace xladb::ingest
