// Reshaped pairs (store/compare/reshaped_pairs.h): which leftover module pairs with which, on signatures written here.
#include "store/compare/reshaped_pairs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/compare/module_match.h"

namespace xladb::store {
namespace {

ModuleRow Row(int64_t module_id, int64_t xla_id, const std::string& name, const std::string& signature) {
  ModuleRow r;
  r.module_id = module_id;
  r.xla_module_id = xla_id;
  r.name = name;
  r.stage = "after_optimizations";
  r.entry_signature = signature;
  return r;
}

TEST(ReshapedPairs, DistanceOrdersDtypesThenDimensionsThenElements) {
  // The same parameter count and dtypes; two dimensions differ in the parameter and two in the output.
  const SignatureDistance shrink =
      EntrySignatureDistance("(c128[21,9,80,80]) -> c128[21,9,80,80]", "(c128[21,9,40,40]) -> c128[21,9,40,40]");
  EXPECT_EQ(shrink.mismatched_parameters, 0);
  EXPECT_EQ(shrink.differing_dimensions, 4);
  // 21*9*80*80 - 21*9*40*40 = 1209600 - 302400 = 907200 elements, on each side of the arrow.
  EXPECT_EQ(shrink.element_difference, 2 * 907200);
  // A tuple output: f32[1024] against (f32[512], f32[512]): one dimension differs, the second element's one
  // dimension is extra; elements 1024 + 1024 against 1024 + 512 + 512: no difference.
  const SignatureDistance tuple =
      EntrySignatureDistance("(f32[1024]) -> f32[1024]", "(f32[1024]) -> (f32[512], f32[512])");
  EXPECT_EQ(tuple.mismatched_parameters, 0);
  EXPECT_EQ(tuple.differing_dimensions, 2);
  EXPECT_EQ(tuple.element_difference, 0);
  // Another dtype is farther than any number of differing dimensions.
  const SignatureDistance dtype = EntrySignatureDistance("(f32[8]) -> f32[8]", "(bf16[8]) -> f32[8]");
  EXPECT_EQ(dtype.mismatched_parameters, 1);
  EXPECT_TRUE(shrink < dtype);
  EXPECT_TRUE(tuple < shrink);
  // Text without shapes compares as no shapes, never a crash.
  EXPECT_EQ(EntrySignatureDistance("", "garbage [ ] ->").mismatched_parameters, 0);
}

TEST(ReshapedPairs, MostSimilarFirstTiesInModuleNumberOrderOnePairEach) {
  const ModuleRow b1 = Row(1, 10, "jit_f", "(f32[8,8]) -> f32[8]");
  const ModuleRow b2 = Row(2, 11, "jit_f", "(f32[4,4]) -> f32[4]");
  const ModuleRow b3 = Row(3, 12, "jit_g", "(f32[4,4]) -> f32[4]");
  const ModuleRow c1 = Row(4, 20, "jit_f", "(f32[4,5]) -> f32[4]");   // 1 dimension from b2, 3 from b1
  const ModuleRow c2 = Row(5, 21, "jit_f", "(f32[8,9]) -> f32[8]");   // 1 dimension from b1
  const ModuleRow c3 = Row(6, 22, "jit_f", "(s32[8,8]) -> f32[8]");   // another dtype: nothing left for it
  const ModuleRow c4 = Row(7, 23, "jit_h", "(f32[4,4]) -> f32[4]");   // another name: never pairs with jit_g
  const auto pairs = PairReshaped({&b1, &b2, &b3}, {&c1, &c2, &c3, &c4});
  ASSERT_EQ(pairs.size(), 2u);
  // Both pairs are at distance (0, 1, …): b2-c1 differs by 4 elements, b1-c2 by 8; the smaller first.
  EXPECT_EQ(pairs[0].first->module_id, 2);
  EXPECT_EQ(pairs[0].second->module_id, 4);
  EXPECT_EQ(pairs[1].first->module_id, 1);
  EXPECT_EQ(pairs[1].second->module_id, 5);
  // Equal distances: the lower module numbers pair first.
  const ModuleRow x1 = Row(1, 1, "jit_x", "(f32[2]) -> f32[2]");
  const ModuleRow x2 = Row(2, 2, "jit_x", "(f32[2]) -> f32[2]");
  const ModuleRow y1 = Row(3, 5, "jit_x", "(f32[3]) -> f32[3]");
  const auto tie = PairReshaped({&x2, &x1}, {&y1});
  ASSERT_EQ(tie.size(), 1u);
  EXPECT_EQ(tie[0].first->xla_module_id, 1);
}

}  // namespace
}  // namespace xladb::store
