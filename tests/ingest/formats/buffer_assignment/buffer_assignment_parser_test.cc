// The buffer-assignment parser on real dumps (the seeds, the public corpus) and on fixtures of every era
// (docs/formats.md §2); its damaged and odd inputs are in buffer_assignment_bad_input_test.cc.
#include "tests/ingest/formats/buffer_assignment/buffer_assignment_parse.h"

namespace xladb::ingest::testing {
namespace {

// ---------------------------------------------------------------------------------------------------
// Seeds (real dumps)

TEST(BufferAssignmentParserSeed, Seed000TpuV3PeakList) {
  Parsed p = ParseBufferAssignment(ReadTestFile(SeedPath("000")));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 0) << IssueText(s);
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 8u);
  EXPECT_EQ(s.allocated_values.size(), 11u);
  EXPECT_EQ(s.value_details.size(), 11u);
  ASSERT_EQ(s.totals.size(), 1u);
  EXPECT_EQ(s.totals[0].total_bytes, 18629632);
  // 7 distinct instructions among the 11 from-instruction lines (the custom-call defines 5 values).
  EXPECT_EQ(s.instructions.size(), 7u);
  ASSERT_EQ(s.live_range_headers.size(), 1u);
  EXPECT_EQ(s.live_range_headers[0].schedule_end_time, 8);
  EXPECT_EQ(s.schedule.size(), 8u);
  EXPECT_EQ(s.live_ranges.size(), 11u);
  ASSERT_EQ(s.peak_moments.size(), 1u);
  EXPECT_EQ(s.peak_moments[0].time, 6);
  ASSERT_EQ(s.peak_buffers.size(), 11u);
  EXPECT_EQ(s.peak_buffers.back().cumulative_bytes, 18612288);
  EXPECT_EQ(SumOfPeakBytes(s), 18612288);
  EXPECT_TRUE(s.peak_buffers[3].index_printed);
  EXPECT_EQ(s.peak_buffers[3].instruction, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(s.peak_buffers[3].shape_index, "{3}");

  // Allocation 6: `size 1048576, color 1, preallocated-temp`.
  const AllocationRecord& a6 = s.allocations[6];
  EXPECT_EQ(a6.index, 6);
  EXPECT_EQ(a6.size_bytes, 1048576);
  EXPECT_EQ(a6.color, 1);
  EXPECT_TRUE(a6.is_preallocated_temp);
  EXPECT_FALSE(a6.is_maybe_live_out);
  // Allocation 1: output + maybe-live-out.
  EXPECT_TRUE(s.allocations[1].is_output);
  EXPECT_EQ(s.allocations[1].output_shape, "bf16[8,2048,128]");
  EXPECT_TRUE(s.allocations[1].is_maybe_live_out);
  // Allocation 2: parameter 0.
  EXPECT_EQ(s.allocations[2].parameter_number, 0);
  EXPECT_EQ(s.allocations[2].parameter_shape, "bf16[8,2048,128]");
  EXPECT_EQ(s.allocations[2].parameter_shape_index, "{}");

  // ` value: <7 splash_mha_fwd_e9701070.1{0} @0> (size=262144,offset=16384): f32[512,128]{1,0:T(8,128)}`
  const AllocatedValueRecord& v = s.allocated_values[8];
  EXPECT_EQ(v.value.id, 7);
  EXPECT_EQ(v.value.instruction, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(v.value.shape_index, "{0}");
  EXPECT_TRUE(v.value.index_printed);
  EXPECT_EQ(v.value.color, 0);
  EXPECT_EQ(v.allocation_index, 7);
  EXPECT_EQ(v.size_bytes, 262144);
  EXPECT_EQ(v.offset_bytes, 16384);
  EXPECT_EQ(v.shape, "f32[512,128]{1,0:T(8,128)}");

  // Value 10: two positions, one use with an index.
  const ValueDetailRecord& d = s.value_details[10];
  EXPECT_EQ(d.value.id, 10);
  ASSERT_EQ(d.positions.size(), 2u);
  EXPECT_EQ(d.positions[0].instruction, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(d.positions[0].shape_index, "{3}");
  EXPECT_EQ(d.positions[1].instruction, "get-tuple-element.0");
  EXPECT_EQ(d.positions[1].shape_index, "{}");
  ASSERT_EQ(d.uses.size(), 1u);
  EXPECT_EQ(d.uses[0].instruction, "get-tuple-element.0");
  EXPECT_EQ(d.uses[0].operand, 0);
  EXPECT_EQ(d.uses[0].shape_index, "{3}");
  EXPECT_EQ(d.defining_instruction, "splash_mha_fwd_e9701070.1");

  size_t positions = 0, uses = 0;
  for (const auto& vd : s.value_details) {
    positions += vd.positions.size();
    uses += vd.uses.size();
  }
  EXPECT_EQ(positions, 12u);
  EXPECT_EQ(uses, 8u);
}

TEST(BufferAssignmentParserSeed, Seed002ThreadLocalValuesHaveNoLiveRange) {
  Parsed p = ParseBufferAssignment(ReadTestFile(SeedPath("002")));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 0) << IssueText(s);
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 14u);
  EXPECT_EQ(s.allocated_values.size(), 24u);
  EXPECT_EQ(s.value_details.size(), 24u);
  EXPECT_EQ(s.instructions.size(), 16u);
  EXPECT_EQ(s.live_ranges.size(), 18u);
  EXPECT_EQ(s.schedule.size(), 15u);
  ASSERT_EQ(s.peak_moments.size(), 1u);
  EXPECT_EQ(s.peak_moments[0].time, 12);
  EXPECT_EQ(s.peak_buffers.size(), 10u);
  EXPECT_EQ(SumOfPeakBytes(s), 184680476);
  EXPECT_EQ(s.peak_buffers.back().cumulative_bytes, 184680476);
  // `allocation 11: size 8, color 2, preallocated-temp` holds `<64 copy-start.2{2} @2>`.
  EXPECT_EQ(s.allocations[11].color, 2);
  EXPECT_EQ(s.allocated_values[11].value.color, 2);
  EXPECT_EQ(s.allocated_values[11].allocation_index, 11);
  EXPECT_TRUE(s.allocations[0].is_thread_local);
  EXPECT_TRUE(s.allocations[1].is_constant);
}

TEST(BufferAssignmentParserSeed, Seed004GpuV1PeakListIsReKeyed) {
  Parsed p = ParseBufferAssignment(ReadTestFile(SeedPath("004")));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 0) << IssueText(s);
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 26u);
  EXPECT_EQ(s.allocated_values.size(), 49u);
  EXPECT_EQ(s.value_details.size(), 49u);
  EXPECT_EQ(s.instructions.size(), 39u);
  EXPECT_EQ(s.schedule.size(), 66u);
  EXPECT_EQ(s.live_ranges.size(), 46u);
  ASSERT_EQ(s.peak_moments.size(), 1u);
  EXPECT_EQ(s.peak_moments[0].time, 58);
  ASSERT_EQ(s.peak_buffers.size(), 22u);
  EXPECT_EQ(SumOfPeakBytes(s), 931536164);
  for (const auto& peak : s.peak_buffers) {
    EXPECT_FALSE(peak.index_printed);
    EXPECT_EQ(peak.cumulative_bytes, -1);
    EXPECT_EQ(peak.shape_index, "{}") << peak.instruction;  // every V1 line re-keyed to its `{}` range
  }
  EXPECT_EQ(s.peak_buffers[4].instruction, "tuple");
  EXPECT_EQ(s.peak_buffers[4].logical_bytes, 32);
  // Allocation 20's output shape is the whole root tuple, with ", " inside the |…| span.
  EXPECT_EQ(s.allocations[20].output_shape,
            "(bf16[128,8,128], bf16[128,8,128], bf16[4233,16,8,128], bf16[4233,16,8,128])");
  EXPECT_TRUE(s.allocations[20].is_maybe_live_out);
  // Operand shapes in the from-instruction text (2024-11 … 2025-03).
  bool found_add = false;
  for (const auto& instruction : s.instructions) {
    if (instruction.name == "add.39") {
      found_add = true;
      EXPECT_EQ(instruction.opcode, "add");
      EXPECT_EQ(instruction.text, "%add.39 = f32[] add(f32[] %x.51, f32[] %y.52)");
    }
  }
  EXPECT_TRUE(found_add);
}

// ---------------------------------------------------------------------------------------------------
// Hand-written fixtures, one per era (tests/fixtures/buffer_assignment)

const ValueDetailRecord* FindDetail(const VectorSink& s, int64_t id) {
  for (const auto& d : s.value_details) {
    if (d.value.id == id) return &d;
  }
  return nullptr;
}

const InstructionRecord* FindInstruction(const VectorSink& s, const std::string& name) {
  for (const auto& i : s.instructions) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

TEST(BufferAssignmentParserFixture, Era2019ParameterWithoutShapeAndNoFromInstruction) {
  Parsed p = ParseBufferAssignment(ReadFixture("2019_11_cpu-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  ASSERT_EQ(s.allocations.size(), 3u);
  EXPECT_EQ(s.allocations[0].address, "0x55d0c8a0e2c0");
  EXPECT_EQ(s.allocations[0].parameter_number, 0);
  EXPECT_EQ(s.allocations[0].parameter_shape, "");
  EXPECT_EQ(s.allocations[0].parameter_shape_index, "{}");
  EXPECT_FALSE(s.allocations[1].is_output);  // `output shape is` came on 2019-12-13
  ASSERT_EQ(s.totals.size(), 1u);
  EXPECT_EQ(s.totals[0].total_bytes, 48);
  ASSERT_EQ(s.value_details.size(), 3u);
  EXPECT_EQ(s.value_details[0].uses.size(), 2u);
  EXPECT_EQ(s.value_details[2].uses.size(), 0u);
  EXPECT_EQ(s.value_details[2].uses_state, ValueDetailRecord::UsesState::kListed);
  for (const auto& d : s.value_details) EXPECT_EQ(d.defining_instruction, "");
  EXPECT_TRUE(s.instructions.empty());
  EXPECT_TRUE(s.live_range_headers.empty());  // the HloLiveRange tail came on 2021-04-07
}

TEST(BufferAssignmentParserFixture, Era2021AddressNoHumanTotalUnknownShapeV1Peak) {
  Parsed p = ParseBufferAssignment(ReadFixture("2021_06_cpu-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  ASSERT_EQ(s.allocations.size(), 4u);
  EXPECT_EQ(s.allocations[3].address, "0x55f1c2a3b7f0");
  EXPECT_EQ(s.allocations[1].parameter_shape, "<unknown shape>");
  EXPECT_EQ(s.allocations[1].parameter_number, 1);
  EXPECT_TRUE(s.allocations[3].is_preallocated_temp);
  ASSERT_EQ(s.totals.size(), 1u);
  EXPECT_EQ(s.totals[0].total_bytes, 112);
  EXPECT_EQ(s.value_details.size(), 4u);
  EXPECT_TRUE(s.instructions.empty());  // ` from instruction:` came on 2021-09-23
  ASSERT_EQ(s.peak_buffers.size(), 4u);
  EXPECT_EQ(s.peak_moments.at(0).time, 3);
  for (const auto& peak : s.peak_buffers) {
    EXPECT_FALSE(peak.index_printed);
    EXPECT_EQ(peak.shape_index, "{}");
    EXPECT_EQ(peak.logical_bytes, 16);
  }
}

TEST(BufferAssignmentParserFixture, Era2022FromInstructionWithoutSpaceAndV1TupleReKeying) {
  Parsed p = ParseBufferAssignment(ReadFixture("2022_06_gpu-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 9u);
  EXPECT_EQ(s.allocated_values.size(), 10u);
  EXPECT_EQ(s.value_details.size(), 10u);
  EXPECT_EQ(s.totals.at(0).total_bytes, 148);
  EXPECT_TRUE(s.allocations[2].is_thread_local);
  EXPECT_TRUE(s.allocations[4].is_thread_local);
  EXPECT_EQ(s.allocations[5].output_shape, "(f32[], f32[8])");
  // 8 distinct instructions behind 10 from-instruction lines; custom-call.4 is printed three times.
  EXPECT_EQ(s.instructions.size(), 8u);
  const InstructionRecord* reduce = FindInstruction(s, "reduce.3");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->opcode, "reduce");
  EXPECT_EQ(reduce->op_type, "reduce_sum");
  EXPECT_EQ(reduce->source_line, 3);
  const InstructionRecord* custom_call = FindInstruction(s, "custom-call.4");
  ASSERT_NE(custom_call, nullptr);
  EXPECT_EQ(custom_call->custom_call_target, "my_kernel");
  for (int64_t id : {6, 7, 8}) EXPECT_EQ(FindDetail(s, id)->defining_instruction, "custom-call.4");
  const ValueDetailRecord* v7 = FindDetail(s, 7);
  ASSERT_EQ(v7->positions.size(), 3u);
  EXPECT_EQ(v7->positions[0].shape_index, "{0}");
  EXPECT_EQ(v7->positions[1].instruction, "gte.5");
  EXPECT_EQ(v7->positions[1].shape_index, "{}");
  EXPECT_EQ(v7->positions[2].instruction, "tuple.6");
  EXPECT_EQ(v7->positions[2].shape_index, "{1}");
  const ValueDetailRecord* v6 = FindDetail(s, 6);
  ASSERT_EQ(v6->uses.size(), 1u);
  EXPECT_EQ(v6->uses[0].instruction, "gte.5");
  EXPECT_EQ(v6->uses[0].operand, 0);
  EXPECT_EQ(v6->uses[0].shape_index, "{}");
  // V1: custom-call.4 printed three times; alignment with BufferLiveRange gives {}, {0}, {1}.
  ASSERT_EQ(s.peak_buffers.size(), 6u);
  EXPECT_EQ(s.peak_buffers[3].instruction, "custom-call.4");
  EXPECT_EQ(s.peak_buffers[3].shape_index, "{}");
  EXPECT_EQ(s.peak_buffers[4].shape_index, "{0}");
  EXPECT_EQ(s.peak_buffers[5].shape_index, "{1}");
  EXPECT_EQ(s.peak_buffers[5].ordinal, 5);
  EXPECT_EQ(s.peak_buffers[5].logical_bytes, 16);
}

TEST(BufferAssignmentParserFixture, GluedNewlineEraRecoversEveryValue) {
  Parsed p = ParseBufferAssignment(ReadFixture("2024_06_glued_newline-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_EQ(p.unknown_lines, 0);
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  ASSERT_EQ(s.value_details.size(), 6u);
  const std::vector<std::string> defining = {"p0", "p1", "fusion.1", "fusion.1", "fusion.1", "add.7"};
  const std::vector<size_t> positions = {1, 1, 1, 2, 2, 1};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.value_details[i].value.id, static_cast<int64_t>(i));
    EXPECT_EQ(s.value_details[i].defining_instruction, defining[i]) << i;
    EXPECT_EQ(s.value_details[i].positions.size(), positions[i]) << i;
  }
  EXPECT_EQ(s.value_details[3].value.shape_index, "{0}");
  EXPECT_TRUE(s.value_details[3].value.index_printed);
  EXPECT_EQ(s.value_details[2].uses.size(), 2u);
  EXPECT_EQ(s.value_details[4].uses_state, ValueDetailRecord::UsesState::kNotInitialized);
  EXPECT_EQ(s.value_details[5].value.instruction, "add.7");
  // Instruction texts lose the glued value-short.
  ASSERT_EQ(s.instructions.size(), 4u);
  EXPECT_EQ(FindInstruction(s, "p0")->text, "%p0 = f32[4]{0} parameter(0), metadata={op_name=\"a\"}");
  const InstructionRecord* fusion = FindInstruction(s, "fusion.1");
  ASSERT_NE(fusion, nullptr);
  EXPECT_TRUE(fusion->text.ends_with("calls=%fused_computation")) << fusion->text;
  EXPECT_EQ(fusion->fusion_kind, "kLoop");
  EXPECT_EQ(FindInstruction(s, "add.7")->text, "%add.7 = f32[4]{0} add(f32[4]{0} %gte.2, f32[4]{0} %gte.3)");
  // Only one empty line before HloLiveRange in this era; the tail is read all the same.
  EXPECT_EQ(s.schedule.size(), 6u);
  ASSERT_EQ(s.peak_buffers.size(), 5u);
  EXPECT_EQ(s.peak_buffers[2].shape_index, "{0}");
  EXPECT_EQ(s.peak_buffers[3].shape_index, "{1}");
}

TEST(BufferAssignmentParserFixture, ValueShortAtEndOfLineIsNotSplitWithoutPositionsLine) {
  const std::string text =
      "Used values:\n"
      "<0 c @0>\n"
      " positions:\n"
      "  c\n"
      " uses:\n"
      " from instruction: %c = s32[] custom-call(), custom_call_target=<1 x @0>\n"
      "\n";
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_TRUE(p.sink.issues.empty()) << IssueText(p.sink);
  ASSERT_EQ(p.sink.value_details.size(), 1u);
  ASSERT_EQ(p.sink.instructions.size(), 1u);
  EXPECT_EQ(p.sink.instructions[0].text, "%c = s32[] custom-call(), custom_call_target=<1 x @0>");
}

TEST(BufferAssignmentParserFixture, GluedPhiValueShortWithIndexIsRecovered) {
  const std::string text =
      "Used values:\n"
      "<3 p @0>\n"
      " positions:\n"
      "  p\n"
      " uses:\n"
      "  while.4, operand 0\n"
      " from instruction: %p = (s32[], f32[2]{0}) parameter(0)<5 while.4{1} (phi) @2>\n"
      " positions:\n"
      "  while.4 {1}\n"
      " uses:\n"
      " from instruction: %while.4 = (s32[], f32[2]{0}) while(%p), condition=%cond, body=%body\n"
      "\n";
  Parsed p = ParseBufferAssignment(text);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_TRUE(p.sink.issues.empty()) << IssueText(p.sink);
  ASSERT_EQ(p.sink.value_details.size(), 2u);
  const ValueRef& v = p.sink.value_details[1].value;
  EXPECT_EQ(v.id, 5);
  EXPECT_EQ(v.instruction, "while.4");
  EXPECT_EQ(v.shape_index, "{1}");
  EXPECT_TRUE(v.is_phi);
  EXPECT_EQ(v.color, 2);
  EXPECT_EQ(p.sink.value_details[0].uses.size(), 1u);
  EXPECT_EQ(p.sink.instructions.at(0).text, "%p = (s32[], f32[2]{0}) parameter(0)");
}

TEST(BufferAssignmentParserFixture, Era2025V2PeakListKeepsPrintedIndices) {
  Parsed p = ParseBufferAssignment(ReadFixture("2025_04_gpu_v2_peak-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.totals.at(0).total_bytes, 4112);
  EXPECT_EQ(s.instructions.size(), 3u);
  EXPECT_EQ(FindInstruction(s, "custom-call.2")->custom_call_target, "__cublas$gemm");
  ASSERT_EQ(s.peak_buffers.size(), 4u);
  const std::vector<std::string> indices = {"{}", "{}", "{0}", "{1}"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(s.peak_buffers[i].index_printed);
    EXPECT_EQ(s.peak_buffers[i].shape_index, indices[i]);
    EXPECT_EQ(s.peak_buffers[i].cumulative_bytes, -1);
  }
  EXPECT_EQ(SumOfPeakBytes(s), 3088);
}

TEST(BufferAssignmentParserFixture, Era2025V3StackTraceInBufferAssignmentFile) {
  Parsed p = ParseBufferAssignment(ReadFixture("2025_09_cpu_v3_stack_trace-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  // Donated parameter that is also the whole output.
  const AllocationRecord& a0 = s.allocations.at(0);
  EXPECT_EQ(a0.parameter_number, 0);
  EXPECT_TRUE(a0.is_output);
  EXPECT_TRUE(a0.is_maybe_live_out);
  EXPECT_FALSE(a0.is_preallocated_temp);
  // Since 2025-08-20 a tuple parameter's header shows the subshape at its index.
  EXPECT_EQ(s.allocations.at(3).parameter_shape, "s32[]");
  EXPECT_EQ(s.allocations.at(3).parameter_shape_index, "{1}");
  EXPECT_EQ(s.totals.at(0).total_bytes, 8224);
  EXPECT_EQ(FindInstruction(s, "params.2")->op_name, "params['opt']");
  ASSERT_EQ(s.peak_buffers.size(), 7u);
  EXPECT_EQ(s.peak_buffers.back().cumulative_bytes, 12320);
  EXPECT_EQ(SumOfPeakBytes(s), 12320);
  ASSERT_EQ(s.stack_trace_headers.size(), 1u);
  EXPECT_EQ(s.stack_trace_headers[0].peak_bytes, 12320);
  ASSERT_EQ(s.stack_trace_nodes.size(), 9u);
  const std::vector<int32_t> depths = {0, 1, 1, 1, 1, 2, 2, 2, 1};
  for (size_t i = 0; i < depths.size(); ++i) {
    EXPECT_EQ(s.stack_trace_nodes[i].depth, depths[i]) << i;
    EXPECT_EQ(s.stack_trace_nodes[i].ordinal, static_cast<int64_t>(i));
  }
  const StackTraceNodeRecord& add = s.stack_trace_nodes[1];
  EXPECT_EQ(add.name, "jit(step)/add (out)");
  EXPECT_DOUBLE_EQ(add.percent, 33.2);
  EXPECT_EQ(add.total_bytes, 4096);
  EXPECT_EQ(add.current_bytes, 4096);
  EXPECT_EQ(add.remaining_bytes, 8224);
  EXPECT_EQ(s.stack_trace_nodes[0].name, "main.7");
  EXPECT_EQ(s.stack_trace_nodes[0].total_bytes, 12320);
  EXPECT_EQ(s.stack_trace_nodes[6].name, "opt{0}");
  EXPECT_EQ(s.stack_trace_nodes[8].remaining_bytes, 0);
}

TEST(BufferAssignmentParserFixture, Era2026DietHeadHasOnlyAllocations) {
  Parsed p = ParseBufferAssignment(ReadFixture("2026_04_diet-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 2u);
  EXPECT_EQ(s.allocated_values.size(), 2u);
  EXPECT_TRUE(s.totals.empty());
  EXPECT_TRUE(s.value_details.empty());
  EXPECT_TRUE(s.live_range_headers.empty());
}

TEST(BufferAssignmentParserFixture, Era2026CrossColorValuesAreNotEmittedTwice) {
  Parsed p = ParseBufferAssignment(ReadFixture("2026_07_gpu-buffer-assignment.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_EQ(s.allocations.size(), 3u);
  EXPECT_EQ(s.allocated_values.size(), 5u);  // not 7
  ASSERT_EQ(s.cross_color.size(), 2u);
  EXPECT_EQ(s.cross_color[0].allocation_index, 2);
  EXPECT_EQ(s.cross_color[0].value.id, 2);
  EXPECT_EQ(s.cross_color[0].value.instruction, "fusion.3");
  EXPECT_EQ(s.cross_color[0].color, 0);
  EXPECT_EQ(s.cross_color[1].value.id, 3);
  EXPECT_EQ(s.allocations[2].color, 1);
  EXPECT_EQ(s.allocated_values[2].value.color, 1);  // fusion.2 @1 in the color-1 allocation
  EXPECT_EQ(s.allocated_values[3].value.color, 0);  // fusion.3 @0 reusing it
}

TEST(BufferAssignmentParserFixture, Era2026ValuesFile) {
  Parsed p = ParseBufferAssignment(ReadFixture("2026_07_gpu-buffer-assignment-values.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const VectorSink& s = p.sink;
  EXPECT_TRUE(s.issues.empty()) << IssueText(s);
  EXPECT_TRUE(s.allocations.empty());
  ASSERT_EQ(s.totals.size(), 1u);
  EXPECT_EQ(s.totals[0].total_bytes, 16384);
  ASSERT_EQ(s.value_details.size(), 5u);
  EXPECT_EQ(s.value_details[4].uses_state, ValueDetailRecord::UsesState::kNone);
  EXPECT_TRUE(s.value_details[4].uses.empty());
  EXPECT_EQ(s.value_details[2].uses.size(), 2u);
  EXPECT_EQ(s.value_details[1].value.color, 1);
  EXPECT_EQ(s.instructions.size(), 5u);
  EXPECT_EQ(FindInstruction(s, "add.5")->source_line, 12);
}

TEST(BufferAssignmentParserFixture, LiveRangeFileIsReadByDelegation) {
  Parsed p = ParseBufferAssignment(ReadFixture("2026_07_gpu-live-range.txt"));
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_TRUE(p.sink.issues.empty()) << IssueText(p.sink);
  EXPECT_EQ(p.sink.schedule.size(), 5u);
  EXPECT_EQ(p.sink.peak_buffers.size(), 4u);
  EXPECT_EQ(p.sink.stack_trace_nodes.size(), 7u);
}

TEST(BufferAssignmentParserFixture, Pre2019FormatIsRejected) {
  Parsed p = ParseBufferAssignment(ReadFixture("2018_logical_buffers-buffer-assignment.txt"));
  EXPECT_EQ(p.status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(p.sink.CountIssues(Severity::kError), 1u) << IssueText(p.sink);
  EXPECT_TRUE(p.sink.allocated_values.empty());
}

// ---------------------------------------------------------------------------------------------------
// The shared corpus (absent on users' machines): every real buffer-assignment file reads cleanly.

TEST(BufferAssignmentParserCorpus, EveryPublicAndRunFileParsesWithoutUnknownLinesOrInvariantIssues) {
  namespace fs = std::filesystem;
  const fs::path corpus(XLADB_CORPUS_DIR);
  if (!fs::is_directory(corpus / "public")) {
    GTEST_SKIP() << "shared corpus not found at " << corpus.string()
                 << " (only present on development machines)";
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(corpus / "public")) {
    if (entry.path().filename().string().ends_with("buffer-assignment.txt")) files.push_back(entry.path());
  }
  const size_t public_files = files.size();
  if (fs::is_directory(corpus / "runs")) {
    for (const auto& run : fs::directory_iterator(corpus / "runs")) {
      if (!fs::is_directory(run.path() / "xla_dump")) continue;
      for (const auto& entry : fs::directory_iterator(run.path() / "xla_dump")) {
        if (entry.path().filename().string().ends_with("-buffer-assignment.txt"))
          files.push_back(entry.path());
      }
    }
  }
  EXPECT_EQ(public_files, 258u);
  EXPECT_EQ(files.size() - public_files, 986u);
  for (const fs::path& file : files) {
    Parsed p = ParseBufferAssignment(ReadTestFile(file.string()));
    EXPECT_TRUE(p.status.ok()) << file << ": " << p.status.ToString();
    EXPECT_EQ(p.unknown_lines, 0) << file << "\n" << IssueText(p.sink);
    EXPECT_TRUE(p.sink.issues.empty()) << file << "\n" << IssueText(p.sink);
    EXPECT_FALSE(p.sink.allocations.empty()) << file;
    EXPECT_EQ(p.sink.allocated_values.size(), p.sink.value_details.size()) << file;
    EXPECT_EQ(p.sink.peak_moments.size(), 1u) << file;
  }
}

}  // namespace
}  // namespace xladb::ingest::testing
