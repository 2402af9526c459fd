// store/shape_text.h on shapes as XLA prints them.
#include "store/shape_text.h"

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

}  // namespace
}  // namespace xladb::store
