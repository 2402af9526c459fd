// ingest/text/entry_sharding.h and what HloModuleParser makes of it: the ENTRY parameters' and ROOT's
// `sharding={…}` values as printed, by parameter number, `none` where one has none, "" for an unsharded
// module; other computations' shardings are not the entry's. Expected strings are the instruction texts'
// own `sharding=` values, written out by hand.
#include "ingest/text/entry_sharding.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "ingest/formats/hlo_module/hlo_module_parser.h"
#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

std::string ShardingOf(std::initializer_list<std::string_view> instructions) {
  EntrySharding sharding;
  for (std::string_view text : instructions) {
    auto pieces = SplitHloInstructionText(text);
    EXPECT_TRUE(pieces.has_value()) << text;
    if (pieces) sharding.Add(*pieces);
  }
  return sharding.Text();
}

TEST(EntrySharding, AnUnshardedEntryHasNone) {
  EXPECT_EQ(ShardingOf({"%p = f32[8]{0} parameter(0), metadata={op_name=\"x\"}",
                        "ROOT %n = f32[8]{0} negate(%p)"}),
            "");
}

TEST(EntrySharding, ParametersByNumberNoneWhereMissingRootLast) {
  EXPECT_EQ(ShardingOf({"ROOT %a = f32[8]{0} add(%q, %p), sharding={replicated}",
                        "%q = f32[8]{0} parameter(1), sharding={devices=[2]0,1}, metadata={op_name=\"y\"}",
                        "%p = f32[8]{0} parameter(0)"}),
            "(none, {devices=[2]0,1}) -> {replicated}");
  // Numbers with a gap (not XLA's printing) are written with their numbers; an instruction that is neither a
  // parameter nor the ROOT is ignored. A huge number costs no more text than a small one (a fuzzer's find).
  EXPECT_EQ(ShardingOf({"%r = f32[] parameter(2), sharding={maximal device=0}",
                        "%c = f32[] constant(1), sharding={replicated}",
                        "ROOT %t = f32[] add(%r, %c)"}),
            "(2: {maximal device=0}) -> none");
  EXPECT_EQ(ShardingOf({"%p = f32[] parameter(0)", "%q = f32[] parameter(99999999999), sharding={replicated}",
                        "ROOT %t = f32[] add(%p, %q)"}),
            "(0: none, 99999999999: {replicated}) -> none");
}

TEST(EntrySharding, TupleAndIotaShardingsAreKeptWhole) {
  EXPECT_EQ(ShardingOf({"Arg_0.1 = c128[9,80,2,640]{3,2,1,0} parameter(0), "
                        "sharding={devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}, metadata={op_name=\"x\"}",
                        "ROOT tuple.5 = (f32[4]{0}, f32[4]{0}) tuple(a, b), "
                        "sharding={{replicated}, {devices=[2]0,1 metadata={op_name=\"o\"}}}"}),
            "({devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}) -> "
            "{{replicated}, {devices=[2]0,1 metadata={op_name=\"o\"}}}");
}

TEST(EntrySharding, TheParserReadsTheEntryComputationOnly) {
  constexpr std::string_view kText =
      "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}\n"
      "\n"
      "%body (x: f32[8]) -> f32[8] {\n"
      "  %x = f32[8]{0} parameter(0), sharding={devices=[4]0,1,2,3}\n"
      "  ROOT %n = f32[8]{0} negate(%x), sharding={devices=[4]0,1,2,3}\n"
      "}\n"
      "\n"
      "ENTRY %main (p: f32[8]) -> f32[8] {\n"
      "  %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}\n"
      "  ROOT %c = f32[8]{0} call(%p), to_apply=%body\n"
      "}\n";
  VectorSink sink;
  HloModuleParser parser(&sink);
  ASSERT_TRUE(ParseText(parser, kText).ok());
  ASSERT_EQ(sink.modules.size(), 1u);
  EXPECT_EQ(sink.modules[0].entry_sharding, "({devices=[2]0,1}) -> none");
}

}  // namespace
}  // namespace xladb::ingest
