#include "ingest/formats/hlo_module/hlo_module_parser.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

std::string Fixture(std::string_view name) {
  return ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/hlo_module/" + std::string(name));
}

// Parses `text`; returns Finish()'s status and fills `sink`; `unknown` gets the unknown-line count.
Status Parse(std::string_view text, VectorSink* sink, int64_t* unknown = nullptr) {
  HloModuleParser parser(sink);
  Status status = ParseText(parser, text);
  if (unknown != nullptr) *unknown = parser.unknown_lines();
  return status;
}

// Parses a fixture that must be clean: OK, one module record, no issues of any kind.
VectorSink ParseClean(std::string_view fixture) {
  std::string text = Fixture(fixture);
  EXPECT_FALSE(text.empty()) << fixture;
  VectorSink sink;
  int64_t unknown = -1;
  Status status = Parse(text, &sink, &unknown);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(unknown, 0) << fixture;
  for (const auto& issue : sink.issues) ADD_FAILURE() << fixture << ":" << issue.line << ": " << issue.reason;
  EXPECT_EQ(sink.modules.size(), 1u);
  return sink;
}

const InstructionRecord* Find(const VectorSink& sink, std::string_view name) {
  for (const auto& r : sink.instructions) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::vector<std::string> ComputationNames(const VectorSink& sink) {
  std::vector<std::string> names;
  for (const auto& c : sink.computations) names.push_back(c.name);
  return names;
}

uint64_t FingerprintOf(std::string_view text) {
  VectorSink sink;
  EXPECT_TRUE(Parse(text, &sink).ok());
  EXPECT_EQ(sink.modules.size(), 1u);
  return sink.modules.empty() ? 0 : sink.modules[0].program_fingerprint;
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

TEST(HloModuleParser, Seed003LongFormWithoutOperandShapes) {
  std::string text = ReadTestFile(SeedPath("003"));
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  int64_t unknown = -1;
  ASSERT_TRUE(Parse(text, &sink, &unknown).ok());
  EXPECT_EQ(unknown, 0);
  EXPECT_TRUE(sink.issues.empty());

  // 13 computation blocks, callees first, ENTRY last (grep '^}' and the block headers of the seed).
  EXPECT_EQ(ComputationNames(sink),
            (std::vector<std::string>{"copy_fusion.2", "fused_computation.1", "bitcast_fusion.1", "fused_computation",
                                      "region_1.36", "copy_fusion.1", "fused_computation.3", "region_0.25",
                                      "bitcast_fusion", "bitcast_fusion.2", "copy_fusion", "fused_computation.7",
                                      "main.47"}));
  ASSERT_EQ(sink.computations.size(), 13u);
  const ComputationRecord& entry = sink.computations.back();
  EXPECT_TRUE(entry.is_entry);
  EXPECT_EQ(entry.instruction_count, 15);
  EXPECT_EQ(entry.execution_thread, "");
  for (size_t i = 0; i + 1 < sink.computations.size(); ++i) EXPECT_FALSE(sink.computations[i].is_entry);
  EXPECT_EQ(sink.computations[1].instruction_count, 13);  // fused_computation.1

  ASSERT_EQ(sink.instructions.size(), 79u);
  ASSERT_EQ(sink.modules.size(), 1u);
  const HloModuleRecord& module = sink.modules[0];
  EXPECT_EQ(module.name, "jit_reference_attention");
  EXPECT_TRUE(module.is_scheduled);
  EXPECT_EQ(module.computation_count, 13);
  EXPECT_EQ(module.instruction_count, 79);
  EXPECT_EQ(module.entry_computation_layout,
            "(bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}, bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}, "
            "bf16[8,2048,128]{2,1,0:T(8,128)(2,1)})->f32[8,2048,128]{2,1,0:T(8,128)}");
  EXPECT_EQ(module.replica_count, -1);
  EXPECT_EQ(module.num_partitions, -1);
  EXPECT_NE(module.program_fingerprint, 0u);
  EXPECT_EQ(module.header_text.rfind("HloModule jit_reference_attention, is_scheduled=true", 0), 0u);

  // %fusion.5 is the 8th instruction of ENTRY: a kOutput fusion with a dot_general op_name at line 184.
  const InstructionRecord* fusion = Find(sink, "fusion.5");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->computation, "main.47");
  EXPECT_EQ(fusion->sequence_index, 7);
  EXPECT_EQ(fusion->fusion_kind, "kOutput");
  EXPECT_EQ(fusion->op_name,
            "jit(reference_attention)/jit(main)/reference_attention/reference_attention_h8_s2048/jit(_wrapped)/"
            "vmap(sd,td->st)/dot_general");
  EXPECT_EQ(fusion->source_line, 184);
  EXPECT_EQ(fusion->source_file,
            "/home/ptoulme/miniconda3/envs/vllm/lib/python3.12/site-packages/jax/experimental/pallas/ops/tpu/"
            "splash_attention/splash_attention_kernel.py");

  const InstructionRecord* root = Find(sink, "fusion");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->is_root);
  EXPECT_EQ(root->sequence_index, 14);
  EXPECT_EQ(root->text.rfind("%fusion = f32[8,2048,128]{2,1,0:T(8,128)} fusion(", 0), 0u);

  // 8 kLoop and 2 kOutput fusions; the seed has no custom-call at all.
  int loops = 0, outputs = 0, targets = 0, roots = 0;
  for (const auto& r : sink.instructions) {
    loops += r.fusion_kind == "kLoop";
    outputs += r.fusion_kind == "kOutput";
    targets += !r.custom_call_target.empty();
    roots += r.is_root;
  }
  EXPECT_EQ(loops, 8);
  EXPECT_EQ(outputs, 2);
  EXPECT_EQ(targets, 0);
  EXPECT_EQ(roots, 13);
}

// A name printed twice (invalid HLO) is reported and its second instruction dropped: the writer relies on
// one record per name in a file (records.h).
TEST(HloModuleParser, ARepeatedInstructionNameIsOneRecordAndAnIssue) {
  VectorSink sink;
  ASSERT_TRUE(Parse("HloModule m\n\n"
                    "ENTRY main {\n"
                    "  p = f32[2]{0} parameter(0)\n"
                    "  p = f32[4]{0} parameter(1)\n"
                    "  ROOT add = f32[2]{0} add(p, p)\n"
                    "}\n",
                    &sink)
                  .ok());
  ASSERT_EQ(sink.instructions.size(), 2u);
  EXPECT_EQ(sink.instructions[0].name, "p");
  EXPECT_EQ(sink.instructions[0].shape, "f32[2]{0}");
  EXPECT_EQ(sink.instructions[1].name, "add");
  ASSERT_EQ(sink.CountIssues(Severity::kInvariant), 1u);
  EXPECT_NE(sink.issues[0].reason.find("instruction name p repeated"), std::string::npos) << sink.issues[0].reason;
}

TEST(HloModuleParser, ShortParsable2022WithoutSigilsOrSignatures) {
  VectorSink sink = ParseClean("short_parsable_2022.txt");
  EXPECT_EQ(ComputationNames(sink), (std::vector<std::string>{"fused_computation", "scale_and_pack.9_spmd"}));
  ASSERT_EQ(sink.computations.size(), 2u);
  EXPECT_FALSE(sink.computations[0].is_entry);
  EXPECT_EQ(sink.computations[0].instruction_count, 4);
  EXPECT_TRUE(sink.computations[1].is_entry);
  EXPECT_EQ(sink.computations[1].instruction_count, 7);

  const HloModuleRecord& module = sink.modules[0];
  EXPECT_EQ(module.name, "scale_and_pack.9");
  EXPECT_FALSE(module.is_scheduled);
  EXPECT_EQ(module.entry_computation_layout, "");
  EXPECT_EQ(module.replica_count, -1);
  EXPECT_EQ(module.instruction_count, 11);

  const InstructionRecord* fusion = Find(sink, "fusion");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->computation, "scale_and_pack.9_spmd");
  EXPECT_EQ(fusion->sequence_index, 2);
  EXPECT_EQ(fusion->fusion_kind, "kLoop");
  EXPECT_EQ(fusion->op_type, "mul");
  EXPECT_EQ(fusion->source_file, "scale.py");
  EXPECT_EQ(fusion->source_line, 14);

  const InstructionRecord* tuple = Find(sink, "tuple.8");
  ASSERT_NE(tuple, nullptr);
  EXPECT_TRUE(tuple->is_root);
  EXPECT_EQ(tuple->shape, "(f32[32,128]{1,0}, s32[], pred[], f32[2]{0}, u8[], /*index=5*/f32[32,128]{1,0})");
  EXPECT_EQ(tuple->text.rfind("tuple.8 = (", 0), 0u);
}

TEST(HloModuleParser, LongFormWithOperandShapes2021) {
  VectorSink sink = ParseClean("long_operand_shapes_2021.txt");
  EXPECT_EQ(ComputationNames(sink), (std::vector<std::string>{"add.5", "main.12"}));
  ASSERT_EQ(sink.instructions.size(), 10u);
  EXPECT_EQ(sink.modules[0].name, "jit_loss.12");
  EXPECT_EQ(sink.modules[0].header_text, "HloModule jit_loss.12");

  const InstructionRecord* gemm = Find(sink, "custom-call.3");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->opcode, "custom-call");
  EXPECT_EQ(gemm->custom_call_target, "__cublas$gemm");
  EXPECT_EQ(gemm->op_name, "jit(loss)/dot_general[dimension_numbers=(([1], [0]), ([], []))]");
  EXPECT_EQ(gemm->source_line, 11);
  EXPECT_EQ(gemm->shape, "(f32[16,8]{1,0}, s8[4194304]{0})");

  const InstructionRecord* add = Find(sink, "add.8");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->is_root);
  EXPECT_EQ(add->computation, "add.5");
  EXPECT_EQ(add->text, "%add.8 = f32[] add(f32[] %x.6, f32[] %y.7)");
}

TEST(HloModuleParser, CompactGetTupleElementOperandsAndExecutionThread2026) {
  VectorSink sink = ParseClean("compact_gte_2026.txt");
  ASSERT_EQ(sink.computations.size(), 3u);
  EXPECT_EQ(sink.computations[0].instruction_count, 6);
  EXPECT_EQ(sink.computations[1].name, "host_computation");
  EXPECT_EQ(sink.computations[1].execution_thread, "host");
  EXPECT_EQ(sink.computations[2].name, "main.9");
  EXPECT_TRUE(sink.computations[2].is_entry);
  EXPECT_EQ(sink.computations[2].execution_thread, "");
  EXPECT_EQ(sink.computations[2].instruction_count, 6);

  const HloModuleRecord& module = sink.modules[0];
  EXPECT_EQ(module.replica_count, 2);
  EXPECT_EQ(module.num_partitions, 4);
  EXPECT_TRUE(module.is_scheduled);

  const InstructionRecord* subtract = Find(sink, "subtract.4");
  ASSERT_NE(subtract, nullptr);
  EXPECT_EQ(subtract->text, "%subtract.4 = f32[8]{0} subtract(%fusion.3#0#0, %fusion.3#0#1)");
  const InstructionRecord* gte = Find(sink, "get-tuple-element.6");
  ASSERT_NE(gte, nullptr);
  EXPECT_TRUE(gte->is_root);  // only ROOT get-tuple-elements are printed in this era

  // The tuple index after '#' is part of the program.
  std::string text = Fixture("compact_gte_2026.txt");
  EXPECT_NE(FingerprintOf(text), FingerprintOf(Replace(text, "%fusion.3#0#1)", "%fusion.3#1)")));
}

TEST(HloModuleParser, StackFrameTablesAreKnownLines2025) {
  VectorSink sink = ParseClean("stack_frame_tables_2025.txt");
  ASSERT_EQ(sink.computations.size(), 1u);
  EXPECT_EQ(sink.computations[0].name, "main.4");
  EXPECT_EQ(sink.instructions.size(), 3u);
  EXPECT_EQ(sink.modules[0].header_text.find("FileNames"), std::string::npos);

  // A computation right after the last row, without the blank lines, still opens.
  VectorSink tight = [] {
    VectorSink s;
    std::string text =
        Replace(Fixture("stack_frame_tables_2025.txt"), "parent_frame_id=2}\n\n\n", "parent_frame_id=2}\n");
    int64_t unknown = -1;
    EXPECT_TRUE(Parse(text, &s, &unknown).ok());
    EXPECT_EQ(unknown, 0);
    return s;
  }();
  EXPECT_EQ(tight.instructions.size(), 3u);

  // A malformed row inside a table is unknown, not silently skipped.
  std::string bad = Replace(Fixture("stack_frame_tables_2025.txt"), "2 \"f\"", "2 f");
  VectorSink bad_sink;
  int64_t unknown = -1;
  ASSERT_TRUE(Parse(bad, &bad_sink, &unknown).ok());
  EXPECT_EQ(unknown, 1);
}

TEST(HloModuleParser, MultiLineHeaderAttributesWithEmbeddedRecoveryModule) {
  VectorSink sink = ParseClean("origin_recovery_table_2026.txt");
  // The recovery module inside the quoted table is part of the header, not of this module.
  EXPECT_EQ(ComputationNames(sink), (std::vector<std::string>{"main.6_spmd"}));
  EXPECT_EQ(sink.instructions.size(), 3u);
  EXPECT_EQ(Find(sink, "all-gather"), nullptr);
  const HloModuleRecord& module = sink.modules[0];
  EXPECT_EQ(module.num_partitions, 4);
  EXPECT_EQ(module.entry_computation_layout, "(s32[2,8]{1,0}, s32[2,8]{1,0})->s32[2,8]{1,0}");
  EXPECT_NE(module.header_text.find("origin_recovery_table={\n  {\"add.3\"} : {\"add.3__ovp0\"},"), std::string::npos);
  EXPECT_NE(module.header_text.find("\n, debug_attributes={\n"), std::string::npos);
  EXPECT_EQ(module.header_text.back(), '}');

  // Same, with the block continued as `},` + `debug_attributes={` on its own line.
  const std::string fixture = Fixture("origin_recovery_table_2026.txt");
  std::string text = Replace(fixture, "}\n, debug_attributes={", "},\ndebug_attributes={");
  VectorSink other;
  int64_t unknown = -1;
  ASSERT_TRUE(Parse(text, &other, &unknown).ok());
  EXPECT_EQ(unknown, 0);
  EXPECT_TRUE(other.issues.empty());
  EXPECT_EQ(other.instructions.size(), 3u);
  ASSERT_EQ(other.modules.size(), 1u);
  EXPECT_NE(other.modules[0].header_text.find("\ndebug_attributes={\n"), std::string::npos);

  // Attributes printed after the closing brace of a block still count.
  VectorSink after;
  ASSERT_TRUE(
      Parse(Replace(fixture, "}\n, debug_attributes={", "}, replica_count=3\n, debug_attributes={"), &after).ok());
  ASSERT_EQ(after.modules.size(), 1u);
  EXPECT_EQ(after.modules[0].replica_count, 3);
  EXPECT_TRUE(after.issues.empty());
}

TEST(HloModuleParser, UnclosedHeaderBlockEndsAtAComputation) {
  std::string text =
      "HloModule m, origin_recovery_table={\n"
      "  {\"a\"} : {\"b\"},\n"
      "ENTRY %main (x: f32[]) -> f32[] {\n"
      "  ROOT %x = f32[] parameter(0)\n"
      "}\n";
  VectorSink sink;
  ASSERT_TRUE(Parse(text, &sink).ok());
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 1u);
  EXPECT_EQ(sink.instructions.size(), 1u);
  ASSERT_EQ(sink.computations.size(), 1u);
  EXPECT_TRUE(sink.computations[0].is_entry);
}

TEST(HloModuleParser, CommentTrailersAfterComputations2023) {
  VectorSink sink = ParseClean("comment_trailers_2023.txt");
  EXPECT_EQ(ComputationNames(sink), (std::vector<std::string>{"region_0.5", "fused_computation", "main.20"}));
  EXPECT_EQ(sink.instructions.size(), 16u);
  const InstructionRecord* gemm = Find(sink, "custom-call.3");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->custom_call_target, "__cublas$gemm");
  EXPECT_EQ(gemm->source_line, 31);
  const InstructionRecord* exp = Find(sink, "exponential.1");
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(exp->computation, "fused_computation");
  EXPECT_EQ(exp->sequence_index, 5);

  // A trailer naming another computation is an invariant violation, the block still closes.
  std::string text = Replace(Fixture("comment_trailers_2023.txt"), "} // main.20", "} // main.21");
  VectorSink bad;
  ASSERT_TRUE(Parse(text, &bad).ok());
  EXPECT_EQ(bad.CountIssues(Severity::kInvariant), 1u);
  EXPECT_EQ(bad.computations.size(), 3u);
}

TEST(HloModuleParser, GarbageLinesAreCountedAsUnknown) {
  std::string text = Fixture("garbage_lines.txt");
  ASSERT_FALSE(text.empty());
  VectorSink sink;
  int64_t unknown = -1;
  ASSERT_TRUE(Parse(text, &sink, &unknown).ok());
  // `this is not…`, the unbalanced %a, the unterminated %b, the text between computations, `ENTRY {`, `}}}`.
  EXPECT_EQ(unknown, 6);
  EXPECT_EQ(sink.CountIssues(Severity::kUnknownLine), 6u);
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 0u);
  std::vector<std::string> names;
  for (const auto& r : sink.instructions) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"p", "r", "x", "c"}));
  EXPECT_EQ(ComputationNames(sink), (std::vector<std::string>{"comp", "main"}));
  ASSERT_EQ(sink.modules.size(), 1u);
  EXPECT_EQ(sink.modules[0].instruction_count, 4);
}

TEST(HloModuleParser, PrettyPrintedBackendConfigSpansLines) {
  VectorSink sink = ParseClean("multiline_backend_config.txt");
  ASSERT_EQ(sink.instructions.size(), 2u);
  const InstructionRecord& kernel = sink.instructions[1];
  EXPECT_EQ(kernel.name, "custom-call.2");
  EXPECT_TRUE(kernel.is_root);
  EXPECT_EQ(kernel.custom_call_target, "my_kernel");
  EXPECT_EQ(kernel.op_name, "jit(pretty)/k");
  EXPECT_EQ(kernel.source_line, 5);
  EXPECT_NE(kernel.text.find("backend_config={\n    \"name\""), std::string::npos);
  ASSERT_EQ(sink.computations.size(), 1u);
  EXPECT_EQ(sink.computations[0].instruction_count, 2);
}

TEST(HloModuleParser, FingerprintIgnoresNamesAndSourcePaths) {
  uint64_t a = FingerprintOf(Fixture("fingerprint_run_a.txt"));
  uint64_t b = FingerprintOf(Fixture("fingerprint_run_b.txt"));
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a, b) << "renumbered names and other source paths must not change the fingerprint";
}

TEST(HloModuleParser, FingerprintSeesProgramChanges) {
  std::string a = Fixture("fingerprint_run_a.txt");
  uint64_t base = FingerprintOf(a);
  EXPECT_NE(base, FingerprintOf(Fixture("fingerprint_swapped_operands.txt")));
  EXPECT_NE(base, FingerprintOf(Replace(a, "constant(0)", "constant(1)")));
  EXPECT_NE(base, FingerprintOf(Replace(a, "dimensions={0}", "dimensions={}")));
  EXPECT_NE(base, FingerprintOf(Replace(a, "%constant.8 = f32[] constant(0)", "%constant.8 = f64[] constant(0)")));
  EXPECT_NE(base, FingerprintOf(Replace(a, "kind=kLoop", "kind=kInput")));
  // The reducer called by to_apply= is the first computation; pointing at the fusion body is another program.
  EXPECT_NE(base, FingerprintOf(Replace(a, "to_apply=%region_0.4", "to_apply=%fused_computation")));
  // Metadata alone does not count.
  EXPECT_EQ(base, FingerprintOf(Replace(a, "metadata={op_name=\"x\"}", "metadata={op_name=\"renamed\"}")));
}

TEST(HloModuleParser, NotHloModuleTextIsDataLoss) {
  VectorSink sink;
  Status status = Parse("ENTRY %main (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n", &sink);
  EXPECT_EQ(status.code(), Status::Code::kDataLoss);
  EXPECT_EQ(sink.CountIssues(Severity::kError), 1u);
  EXPECT_TRUE(sink.instructions.empty());
  EXPECT_TRUE(sink.modules.empty());

  VectorSink empty;
  EXPECT_EQ(Parse("", &empty).code(), Status::Code::kDataLoss);
  EXPECT_TRUE(empty.modules.empty());

  VectorSink lookalike;
  EXPECT_EQ(Parse("HloModuleX m\n", &lookalike).code(), Status::Code::kDataLoss);
}

TEST(HloModuleParser, InvariantsAreReportedNotFatal) {
  std::string text =
      "HloModule m, replica_count=99999999999999999999, num_partitions=-2\n"
      "\n"
      "%c (p: f32[]) -> f32[] {\n"
      "  %p = f32[] parameter(0)\n"
      "  %p = f32[] negate(%p)\n"
      "}\n"
      "\n"
      "ENTRY %e (x: f32[]) -> f32[] {\n"
      "  ROOT %x = f32[] parameter(0)\n"
      "}\n"
      "\n"
      "ENTRY %e2 (y: f32[]) -> f32[] {\n"
      "  ROOT %y = f32[] parameter(0)\n"
      "  ROOT %z = f32[] negate(%y)\n";
  VectorSink sink;
  ASSERT_TRUE(Parse(text, &sink).ok());
  // replica_count overflow, negative num_partitions, duplicate %p, %c without ROOT, %e2 with two ROOTs,
  // two ENTRY computations.
  EXPECT_EQ(sink.CountIssues(Severity::kInvariant), 6u);
  EXPECT_EQ(sink.CountIssues(Severity::kWarning), 1u);  // ends inside %e2
  ASSERT_EQ(sink.modules.size(), 1u);
  EXPECT_EQ(sink.modules[0].replica_count, -1);
  EXPECT_EQ(sink.modules[0].num_partitions, -1);
  EXPECT_EQ(sink.modules[0].computation_count, 3);
  EXPECT_EQ(sink.modules[0].instruction_count, 4);
  ASSERT_EQ(sink.computations.size(), 3u);
  EXPECT_EQ(sink.computations[2].name, "e2");
  EXPECT_EQ(sink.computations[2].instruction_count, 2);
}

TEST(HloModuleParser, HugeHeaderLine) {
  std::string layout = "(";
  for (int i = 0; i < 20000; ++i) layout += (i ? ", " : "") + std::string("f32[128,256]{1,0:T(8,128)}");
  layout += ")->f32[]";
  std::string text = "HloModule big, is_scheduled=true, entry_computation_layout={" + layout +
                     "}, frontend_attributes={k=\"a, b}\"}, replica_count=8\n\nENTRY %main () -> f32[] {\n"
                     "  ROOT %c = f32[] constant(0)\n}\n\n";
  ASSERT_GT(text.size(), 500000u);
  VectorSink sink;
  ASSERT_TRUE(Parse(text, &sink).ok());
  ASSERT_EQ(sink.modules.size(), 1u);
  EXPECT_EQ(sink.modules[0].entry_computation_layout, layout);
  EXPECT_EQ(sink.modules[0].replica_count, 8);
  EXPECT_EQ(sink.instructions.size(), 1u);
  EXPECT_TRUE(sink.issues.empty());
}

// Every HLO module text file of the shared corpus: no unknown lines, no issues, and the block and
// instruction counts that `grep -c '^}'` and the instruction-line pattern give over the same files.
TEST(HloModuleParser, CorpusHasNoUnknownLines) {
  namespace fs = std::filesystem;
  const fs::path corpus(XLADB_CORPUS_DIR);
  if (!fs::is_directory(corpus / "public") || !fs::is_directory(corpus / "runs")) {
    GTEST_SKIP() << "shared corpus not found at " << corpus << " (it exists only on the developers' machines)";
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(corpus / "public")) {
    if (e.path().filename().string().ends_with("__hlo-after-opt.txt")) files.push_back(e.path());
  }
  const size_t public_files = files.size();
  for (const auto& run : fs::directory_iterator(corpus / "runs")) {
    if (!fs::is_directory(run.path() / "xla_dump")) continue;
    for (const auto& e : fs::directory_iterator(run.path() / "xla_dump")) {
      const std::string name = e.path().filename().string();
      if (!name.ends_with(".txt") || name.find("-buffer-assignment") != std::string::npos ||
          name.find("-memory-usage-report") != std::string::npos || name.find("-live-range") != std::string::npos ||
          name.find("thunk_sequence") != std::string::npos) {
        continue;
      }
      files.push_back(e.path());
    }
  }
  EXPECT_EQ(public_files, 140u);
  EXPECT_EQ(files.size(), 140u + 2972u);
  int64_t computations = 0, instructions = 0, unknown = 0, issues = 0;
  for (const auto& path : files) {
    VectorSink sink;
    int64_t file_unknown = 0;
    Status status = Parse(ReadTestFile(path.string()), &sink, &file_unknown);
    EXPECT_TRUE(status.ok()) << path << ": " << status.ToString();
    for (const auto& issue : sink.issues) ADD_FAILURE() << path << ":" << issue.line << ": " << issue.reason;
    unknown += file_unknown;
    issues += static_cast<int64_t>(sink.issues.size());
    computations += static_cast<int64_t>(sink.computations.size());
    instructions += static_cast<int64_t>(sink.instructions.size());
  }
  EXPECT_EQ(unknown, 0);
  EXPECT_EQ(issues, 0);
  EXPECT_EQ(computations, 7174);
  EXPECT_EQ(instructions, 79443);
}

}  // namespace
}  // namespace xladb::ingest
