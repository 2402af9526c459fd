// store/facts/shape_text.h on shapes as XLA prints them.
#include "store/facts/shape_text.h"

#include <gtest/gtest.h>

namespace xladb::store {
namespace {

TEST(ShapeText, LayoutsGo) {
  EXPECT_EQ(ShapeWithoutLayout("f32[8,128]{1,0}"), "f32[8,128]");
  EXPECT_EQ(ShapeWithoutLayout("(f32[2]{0}, s32[])"), "(f32[2], s32[])");
  EXPECT_EQ(ShapeWithoutLayout("s32[2048,128]{1,0:T(8,128)S(1)}"), "s32[2048,128]");
  EXPECT_EQ(ShapeWithoutLayout("bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}"), "bf16[8,2048,128]");
  EXPECT_EQ(ShapeWithoutLayout("((f32[1]{0}), pred[])"), "((f32[1]), pred[])");
  EXPECT_EQ(ShapeWithoutLayout("token[]"), "token[]");
  EXPECT_EQ(ShapeWithoutLayout("(f32[1]{0}, /*index=5*/f64[])"), "(f32[1], f64[])");
}

// The buffer assignment's signature and the HLO header's entry_computation_layout of corpus module 257
// (runs/21_lorrax_scan_C, jit__broadcast_arrays) compare equal.
TEST(ShapeText, SignaturesOfBothPrintersCompareEqual) {
  EXPECT_EQ(CompactSignature("(f64[24,1,1]{2,1,0}, f64[1,24,1]{2,1,0}, f64[1,1,80]{2,1,0})->(f64[24,24,80]{2,1,0}, "
                             "f64[24,24,80]{2,1,0}, f64[24,24,80]{2,1,0})"),
            CompactSignature("(f64[24,1,1], f64[1,24,1], f64[1,1,80]) -> (f64[24,24,80], f64[24,24,80], "
                             "f64[24,24,80])"));
  EXPECT_NE(CompactSignature("(f32[8]) -> f32[8]"), CompactSignature("(f32[16]) -> f32[8]"));
}

// Sizes printed in seed 000's `Live ranges at 6 (peak)` list beside the value shapes of its `value:` lines:
// tiling and memory space do not count, a tuple is 8 bytes a pointer.
TEST(ShapeText, LogicalSizesAsXlaPrintsThem) {
  EXPECT_EQ(LogicalByteSize("bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}"), 4194304);          // Arg_0.1{}
  EXPECT_EQ(LogicalByteSize("s32[2048,128]{1,0:T(8,128)S(1)}"), 1048576);                // iota.1{}
  EXPECT_EQ(LogicalByteSize("f32[512,128]{1,0:T(8,128)}"), 262144);                       // splash…{0}
  EXPECT_EQ(LogicalByteSize("(f32[512,128]{1,0:T(8,128)}, f32[512,128]{1,0:T(8,128)}, f32[512,128]{1,0:T(8,128)}, "
                            "bf16[8,2048,128]{2,1,0:T(8,128)(2,1)})"),
            32);                                                                          // splash…{}
  EXPECT_EQ(LogicalByteSize("s8[1,4,4]{2,1,0:T(2,128)(4,1)}"), 16);                        // constant.4{}
}

TEST(ShapeText, LogicalSizesOfOtherShapes) {
  EXPECT_EQ(LogicalByteSize("pred[3]{0}"), 3);
  EXPECT_EQ(LogicalByteSize("f32[]"), 4);
  EXPECT_EQ(LogicalByteSize("c64[2]{0}"), 16);
  EXPECT_EQ(LogicalByteSize("c128[9,320,320]{2,1,0}"), 14745600);  // corpus module 73's output allocation size
  EXPECT_EQ(LogicalByteSize("f8e4m3fn[10]{0}"), 10);
  EXPECT_EQ(LogicalByteSize("s4[16]{0:E(4)}"), 8);
  EXPECT_EQ(LogicalByteSize("s4[16]{0}"), 16);
  EXPECT_EQ(LogicalByteSize("f32[<=10]{0}"), 40);
  EXPECT_EQ(LogicalByteSize("token[]"), 0);
  EXPECT_EQ(LogicalByteSize("()"), 0);
  EXPECT_EQ(LogicalByteSize("(f32[2], (s32[], pred[]), /*index=2*/f64[])"), 24);
  EXPECT_EQ(LogicalByteSize("f32[?]"), std::nullopt);
  EXPECT_EQ(LogicalByteSize("f32[99999999999,99999999999]"), std::nullopt);
  EXPECT_EQ(LogicalByteSize("nonsense"), std::nullopt);
  EXPECT_EQ(LogicalByteSize(""), std::nullopt);
}

}  // namespace
}  // namespace xladb::store
