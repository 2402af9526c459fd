// SniffFile: one test per rule, with tiny inline heads and the hand-written fixtures of tests/fixtures/sniff
// (one per format variant and era, written from docs/formats.md).
#include "ingest/source/sniff.h"

#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ingest/vector_sink.h"

namespace xladb::ingest {
namespace {

std::string Fixture(const std::string& name) {
  return ReadTestFile(std::string(XLADB_FIXTURE_DIR) + "/sniff/" + name);
}

struct FixtureCase {
  const char* fixture;     // file under tests/fixtures/sniff
  const char* dump_name;   // the name XLA gives such a file
  FileKind kind;
  const char* reason_part;  // substring of the reason ("" when none is expected)
  const char* backend_hint;
  bool claims;
};

TEST(Sniff, EveryFixtureVariantGetsItsKind) {
  const FixtureCase cases[] = {
      {"buffer_assignment_2022_0x_era.txt",
       "module_0001.jit_prim_fun.0.sm_7.0_gpu_after_optimizations-buffer-assignment.txt",
       FileKind::kBufferAssignment, "", "", true},
      {"buffer_assignment_2024_glued_newline.txt",
       "module_0004.jit_add.sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
       FileKind::kBufferAssignment, "", "", true},
      {"buffer_assignment_2025_tpu_cumulative.txt",
       "module_0002.jit_f.cl_772339112.after_optimizations-buffer-assignment.txt",
       FileKind::kBufferAssignment, "", "tpu", true},
      {"buffer_assignment_2026_diet.txt", "module_0003.jit_f.cpu_after_optimizations-buffer-assignment.txt",
       FileKind::kBufferAssignment, "", "", true},
      {"buffer_assignment_values_2026.txt", "module_0003.jit_f.cpu_after_optimizations-buffer-assignment-values.txt",
       FileKind::kBufferAssignmentValues, "", "", true},
      {"live_range_2026.txt", "module_0003.jit_f.cpu_after_optimizations-live-range.txt", FileKind::kLiveRange, "", "",
       true},
      {"live_range_not_available.txt", "module_0003.jit_f.cpu_after_optimizations-live-range.txt",
       FileKind::kLiveRange, "", "", true},
      {"memory_usage_report_v1.txt", "module_0003.jit_f.sm_8.0_gpu_after_optimizations-memory-usage-report.txt",
       FileKind::kMemoryUsageReport, "", "", true},
      {"memory_usage_report_v2.txt", "module_0003.jit_f.after_optimizations-memory-usage-report.txt",
       FileKind::kMemoryUsageReport, "", "", true},
      {"hlo_module_2025_long_gpu.txt", "module_0005.jit_matmul.sm_8.0_gpu_after_optimizations.txt",
       FileKind::kHloModule, "", "gpu", true},
      {"hlo_module_2023_short_parsable_cpu.txt", "module_0006.jit_add.before_optimizations.txt",
       FileKind::kHloModule, "", "", true},
      {"tpu_bundle_profile.txt", "1766453540309905585-TLP-82-hlo-static-bundle-profile.txt",
       FileKind::kTpuBundleProfile, "", "tpu", true},
      {"tpu_per_bundle_utilization.txt",
       "1766453541462737132-TLP-77-final_hlo-static-per-bundle-utilization.txt",
       FileKind::kTpuPerBundleUtilization, "", "", true},
      {"oom_report_after_log_lines.txt", "jax_oom.log", FileKind::kOomReport, "", "", false},
      {"oom_report_peak_buffers_excerpt.txt", "t5x_oom_excerpt.txt", FileKind::kOomReport, "", "", false},
      {"thunk_sequence.txt", "module_0005.jit_add.thunk_sequence.txt", FileKind::kNotIngested,
       "GPU thunk sequence", "", false},
      {"ir_no_opt.ll", "module_0001.SyncTensorsGraph.68.ir-no-opt.ll", FileKind::kNotIngested, "LLVM IR", "", false},
      {"kernel.ptx", "module_0001.SyncTensorsGraph.68.ptx", FileKind::kNotIngested, "PTX", "gpu", false},
      {"autotune_results.pbtxt", "module_0001.SyncTensorsGraph.68.autotune_results.pbtxt", FileKind::kNotIngested,
       "text protobuf", "", false},
      {"hlo_graph.dot", "module_0001.f.sm_8.0_gpu_after_optimizations.dot", FileKind::kNotIngested, "DOT", "", false},
      {"hlo_graph.html", "module_0001.f.sm_8.0_gpu_after_optimizations.html", FileKind::kNotIngested, "HTML", "",
       false},
      {"hlo_graph.url", "module_0001.f.sm_8.0_gpu_after_optimizations.url", FileKind::kNotIngested, "URL", "", false},
      {"debug_options.txt", "module_0001.f.debug_options", FileKind::kNotIngested, "text protobuf", "", false},
  };
  for (const FixtureCase& c : cases) {
    SCOPED_TRACE(c.fixture);
    std::string head = Fixture(c.fixture);
    ASSERT_FALSE(head.empty()) << "missing fixture";
    SniffResult r = SniffFile(c.dump_name, head);
    EXPECT_EQ(FileKindName(r.kind), FileKindName(c.kind)) << r.reason;
    EXPECT_NE(r.reason.find(c.reason_part), std::string::npos) << r.reason;
    if (IsIngestedKind(c.kind)) {
      EXPECT_EQ(r.reason, "");
    }
    EXPECT_EQ(r.backend_hint, c.backend_hint);
    EXPECT_EQ(r.name_claims_ingested_kind, c.claims);
    // The content alone decides: a name that says nothing gives the same verdict.
    SniffResult anonymous = SniffFile("renamed_file.txt", head);
    EXPECT_EQ(FileKindName(anonymous.kind), FileKindName(c.kind)) << anonymous.reason;
    EXPECT_FALSE(anonymous.name_claims_ingested_kind);
  }
}

TEST(Sniff, SeedsGetTheirKindAndBackend) {
  struct SeedCase {
    const char* seed;
    FileKind kind;
    const char* backend;
  };
  // §0: 000/002 TPU buffer assignments, 004 GPU (torch_xla), 003 TPU module text, 001 libtpu bundle profile.
  for (const SeedCase& c : {SeedCase{"000", FileKind::kBufferAssignment, "tpu"},
                            SeedCase{"001", FileKind::kTpuBundleProfile, "tpu"},
                            SeedCase{"002", FileKind::kBufferAssignment, "tpu"},
                            SeedCase{"003", FileKind::kHloModule, "tpu"},
                            SeedCase{"004", FileKind::kBufferAssignment, "gpu"}}) {
    SCOPED_TRACE(c.seed);
    std::string text = ReadTestFile(SeedPath(c.seed));
    ASSERT_FALSE(text.empty());
    SniffResult r = SniffFile("seed.txt", std::string_view(text).substr(0, kSniffBytes));
    EXPECT_EQ(FileKindName(r.kind), FileKindName(c.kind)) << r.reason;
    EXPECT_EQ(r.backend_hint, c.backend);
  }
}

TEST(Sniff, EmptyFileIsNotIngestedWhateverTheName) {
  for (const char* name : {"module_0001.f.cpu_after_optimizations-buffer-assignment.txt", "notes.txt"}) {
    SniffResult r = SniffFile(name, "");
    EXPECT_EQ(r.kind, FileKind::kNotIngested) << name;
    EXPECT_EQ(r.reason, "empty file");
  }
  EXPECT_TRUE(SniffFile("module_0001.f.cpu_after_optimizations-buffer-assignment.txt", "").name_claims_ingested_kind);
  SniffResult blank = SniffFile("notes.txt", "\n  \n\t\n");
  EXPECT_EQ(blank.kind, FileKind::kNotIngested);
  EXPECT_NE(blank.reason.find("blank"), std::string::npos) << blank.reason;
}

TEST(Sniff, ValuesFileAndMemoryReportV1AreToldApartByTheirNextLines) {
  EXPECT_EQ(SniffFile("x.txt", "\nTotal bytes used: 32 (32B)\n\nUsed values:\n<0 p0.1 @0>\n").kind,
            FileKind::kBufferAssignmentValues);
  EXPECT_EQ(SniffFile("x.txt", "Total bytes used: 32 (32B)\n\nAllocations sorted by size:\n\n").kind,
            FileKind::kMemoryUsageReport);
  // Only the total line: the leading empty line of §3 decides, unless the name claims one of the two.
  EXPECT_EQ(SniffFile("x.txt", "\nTotal bytes used: 0 (0B)\n").kind, FileKind::kBufferAssignmentValues);
  EXPECT_EQ(SniffFile("x.txt", "Total bytes used: 0 (0B)\n").kind, FileKind::kMemoryUsageReport);
  EXPECT_EQ(SniffFile("module_0001.f.after_optimizations-buffer-assignment-values.txt", "Total bytes used: 0 (0B)\n")
                .kind,
            FileKind::kBufferAssignmentValues);
  EXPECT_EQ(SniffFile("module_0001.f.after_optimizations-memory-usage-report.txt", "\nTotal bytes used: 0 (0B)\n")
                .kind,
            FileKind::kMemoryUsageReport);
  SniffResult odd = SniffFile("x.txt", "Total bytes used: 32 (32B)\n\nSomething else\n");
  EXPECT_EQ(odd.kind, FileKind::kUnknown);
  EXPECT_NE(odd.reason.find("Something else"), std::string::npos) << odd.reason;
}

TEST(Sniff, NameClaimingAnotherKindIsUnknownNamingWhatWasExpected) {
  SniffResult r = SniffFile("module_0001.f.sm_8.0_gpu_after_optimizations-memory-usage-report.txt",
                            "\nTotal bytes used: 32 (32B)\n\nUsed values:\n");
  EXPECT_EQ(r.kind, FileKind::kUnknown);
  EXPECT_TRUE(r.name_claims_ingested_kind);
  EXPECT_NE(r.reason.find("memory-usage report"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("buffer-assignment values"), std::string::npos) << r.reason;

  SniffResult hlo = SniffFile("module_0001.f.cpu_after_optimizations-buffer-assignment.txt", "HloModule f\n");
  EXPECT_EQ(hlo.kind, FileKind::kUnknown);
  EXPECT_NE(hlo.reason.find("buffer assignment"), std::string::npos) << hlo.reason;
}

TEST(Sniff, NameClaimingAKindWithUnrecognisedContentIsUnknown) {
  SniffResult r = SniffFile("module_0001.f.cpu_after_optimizations-buffer-assignment.txt", "garbage line\nmore\n");
  EXPECT_EQ(r.kind, FileKind::kUnknown);
  EXPECT_TRUE(r.name_claims_ingested_kind);
  EXPECT_NE(r.reason.find("buffer assignment"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("garbage line"), std::string::npos) << r.reason;

  SniffResult module_text = SniffFile("module_0001.f.before_optimizations.txt", "kCopy\t\n");
  EXPECT_EQ(module_text.kind, FileKind::kUnknown);
  EXPECT_NE(module_text.reason.find("HLO module text"), std::string::npos) << module_text.reason;
  EXPECT_NE(module_text.reason.find("thunk sequence"), std::string::npos) << module_text.reason;

  SniffResult binary = SniffFile("1-TLP-82-hlo-static-bundle-profile.txt", std::string_view("\x08\x01\x12\x00", 4));
  EXPECT_EQ(binary.kind, FileKind::kUnknown);
  EXPECT_NE(binary.reason.find("bundle profile"), std::string::npos) << binary.reason;
}

TEST(Sniff, UnrecognisedContentWithoutClaimIsUnknownQuotingTheFirstLine) {
  SniffResult r = SniffFile("notes.txt", "\nHello there, this is not XLA\n");
  EXPECT_EQ(r.kind, FileKind::kUnknown);
  EXPECT_FALSE(r.name_claims_ingested_kind);
  EXPECT_NE(r.reason.find("Hello there, this is not XLA"), std::string::npos) << r.reason;
  std::string long_line(500, 'x');
  EXPECT_LT(SniffFile("notes.txt", long_line).reason.size(), 200u);
}

TEST(Sniff, HloModuleByStage) {
  const std::string text = "HloModule jit_f, entry_computation_layout={()->f32[]}\n\nENTRY %main.1 () -> f32[] {\n";
  EXPECT_EQ(SniffFile("module_0007.jit_f.before_optimizations.txt", text).kind, FileKind::kHloModule);
  EXPECT_EQ(SniffFile("module_0007.jit_f.sm_8.0_gpu_after_optimizations.txt", text).kind, FileKind::kHloModule);
  EXPECT_EQ(SniffFile("module_0007.jit_f.after_optimizations.txt", text).kind, FileKind::kHloModule);
  EXPECT_EQ(SniffFile("module_0007.jit_f.cpu_after_optimizations.txt", text).kind, FileKind::kHloModule);
  EXPECT_EQ(SniffFile("cpu_fme_m0001_jit_f__hlo-after-opt.txt", text).kind, FileKind::kHloModule);

  SniffResult pass = SniffFile(
      "module_0007.jit_f.0001.spmd-partitioner.after_sharding-propagation.before_spmd-partitioning.txt", text);
  EXPECT_EQ(pass.kind, FileKind::kNotIngested);
  EXPECT_EQ(pass.reason, "per-pass HLO dump (intermediate pass state)");
  EXPECT_FALSE(pass.name_claims_ingested_kind);

  SniffResult during = SniffFile("module_0007.jit_f.0004.layout-assignment.before-assigning-layouts.txt", text);
  EXPECT_EQ(during.kind, FileKind::kNotIngested);
  EXPECT_EQ(during.reason, "per-pass HLO dump (intermediate pass state)");

  SniffResult snapshot = SniffFile("module_0023.jit_f.after_optimizations_after_buffer_assignment.txt", text);
  EXPECT_EQ(snapshot.kind, FileKind::kNotIngested);
  EXPECT_NE(snapshot.reason.find("after_optimizations_after_buffer_assignment"), std::string::npos);
  EXPECT_EQ(SniffFile("module_0001.f.after_spmd_partitioner.txt", text).kind, FileKind::kNotIngested);
}

TEST(Sniff, HeadCutInsideAVeryLongFirstLineStillSniffs) {
  std::string header = "HloModule jit_big, entry_computation_layout={(";
  while (header.size() < kSniffBytes) header += "f32[128,1024]{1,0}, ";
  header.resize(kSniffBytes);
  EXPECT_EQ(SniffFile("module_0001.jit_big.before_optimizations.txt", header).kind, FileKind::kHloModule);

  std::string profile = "HLO: %fusion.1 = f32[8,128]{1,0:T(8,128)} fusion(), backend_config=\"";
  profile.append(kSniffBytes - profile.size(), 'A');
  SniffResult r = SniffFile("x.txt", profile);
  EXPECT_EQ(r.kind, FileKind::kTpuBundleProfile);
  EXPECT_EQ(r.backend_hint, "tpu");
}

TEST(Sniff, CrlfLinesAreRead) {
  EXPECT_EQ(SniffFile("x.txt", "BufferAssignment:\r\nallocation 0: size 4, constant:\r\n").kind,
            FileKind::kBufferAssignment);
  EXPECT_EQ(SniffFile("x.txt", "\r\nTotal bytes used: 4 (4B)\r\n\r\nUsed values:\r\n").kind,
            FileKind::kBufferAssignmentValues);
}

TEST(Sniff, OomReport) {
  SniffResult later = SniffFile("log.txt", "I0000 some log\nW0000 another\nBufferAssignment OOM Debugging.\n");
  EXPECT_EQ(later.kind, FileKind::kOomReport);
  EXPECT_EQ(SniffFile("log.txt", "Peak buffers:\n\tBuffer 1:\n\t\tSize: 1.00MiB\n").kind, FileKind::kOomReport);
  EXPECT_EQ(SniffFile("log.txt", "        Buffer 13:\n                Size: 96.00MiB\n").kind, FileKind::kOomReport);
  // A `Buffer N:` line alone, or with no number, is not enough.
  EXPECT_EQ(SniffFile("log.txt", "Buffer 13:\nsomething\n").kind, FileKind::kUnknown);
  EXPECT_EQ(SniffFile("log.txt", "Buffer x:\n Size: 1B\n").kind, FileKind::kUnknown);
  EXPECT_EQ(SniffFile("log.txt", "Buffer 99999999999999999999999:\n Size: 1B\n").kind, FileKind::kUnknown);
}

TEST(Sniff, BinaryAndCompressedData) {
  const std::string_view proto("\x0a\x05jit_f\x12\x00\x1a", 10);
  SniffResult pb = SniffFile("module_0001.jit_f.before_optimizations.hlo.pb", proto);
  EXPECT_EQ(pb.kind, FileKind::kNotIngested);
  EXPECT_EQ(pb.reason, "binary protobuf");
  EXPECT_FALSE(pb.name_claims_ingested_kind);
  EXPECT_EQ(SniffFile("blob", proto).reason, "binary data");
  SniffResult gz = SniffFile("blob", std::string_view("\x1f\x8b\x08\x00\x00\x00", 6));
  EXPECT_EQ(gz.kind, FileKind::kNotIngested);
  EXPECT_NE(gz.reason.find("gzip"), std::string::npos) << gz.reason;
  EXPECT_NE(SniffFile("blob", std::string_view("\x28\xb5\x2f\xfd\x00", 5)).reason.find("zstd"), std::string::npos);
  // UTF-8 text (× and box drawing) is text.
  EXPECT_EQ(SniffFile("x.txt", "Memory Space: default (color=0)\n  \xe2\x94\x9c\xe2\x94\x80 2\xc3\x97" "f32[4]\n").kind,
            FileKind::kMemoryUsageReport);
}

TEST(Sniff, NonMemoryArtifactsByNameWhenTheContentSaysNothing) {
  struct NameCase {
    const char* name;
    const char* reason_part;
  };
  for (const NameCase& c : {NameCase{"module_0001.f.thunk_sequence.txt", "thunk sequence"},
                            NameCase{"module_0001.f.ir-with-opt.ll", "LLVM IR"},
                            NameCase{"module_0001.f.ptx", "PTX"},
                            NameCase{"module_0001.f.gpu_target_config.pbtxt", "text protobuf"},
                            NameCase{"module_0001.f.debug_options", "debug options"},
                            NameCase{"module_0021.jit_train_step.flagfile", "flag file"},
                            NameCase{"module_0021.jit_train_step.tpu_comp_env.txt", "tpu_comp_env"},
                            NameCase{"module_0021.jit_train_step.target_arguments.txt", "target_arguments"}}) {
    SCOPED_TRACE(c.name);
    SniffResult r = SniffFile(c.name, "Some Free Text\n");
    EXPECT_EQ(r.kind, FileKind::kNotIngested);
    EXPECT_NE(r.reason.find(c.reason_part), std::string::npos) << r.reason;
  }
  // Content markers need no name.
  EXPECT_EQ(SniffFile("x", "--xla_dump_to=/tmp/d\n").reason, "XLA flag file");
  EXPECT_EQ(SniffFile("x", "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n").reason, "MLIR");
  EXPECT_EQ(SniffFile("x", "{\"a\": 1}\n").reason, "JSON");
  EXPECT_NE(SniffFile("x", "buffer_id,buffer_name,offset,size,definition_time\n").reason.find("CSV"),
            std::string::npos);
  EXPECT_EQ(SniffFile("x", "kKernel        \t, kernel = loop_add_fusion\n").reason,
            "GPU thunk sequence: not memory data");
}

TEST(Sniff, ContentWinsOverANameThatSaysNothingOfItsKind) {
  // A thunk-sequence name with HLO text in it is HLO text; a renamed buffer assignment is a buffer assignment.
  EXPECT_EQ(SniffFile("module_0001.f.thunk_sequence.txt", "HloModule f\n").kind, FileKind::kHloModule);
  EXPECT_EQ(SniffFile("cpu_fme_m0001_f__buffer-assignment.txt", "BufferAssignment:\n").kind,
            FileKind::kBufferAssignment);
}

TEST(Sniff, BackendHints) {
  EXPECT_EQ(BackendHintFromContent("f32[8,128]{1,0:T(8,128)}"), "tpu");
  EXPECT_EQ(BackendHintFromContent("custom_call_target=\"tpu_custom_call\""), "tpu");
  EXPECT_EQ(BackendHintFromContent("u32[]{:S(2)}"), "tpu");
  EXPECT_EQ(BackendHintFromContent("f32[4]{0:T(256)S(1)}"), "tpu");
  EXPECT_EQ(BackendHintFromContent("custom_call_target=\"__cublas$gemm\""), "gpu");
  EXPECT_EQ(BackendHintFromContent("calls=%__triton_gemm"), "gpu");
  EXPECT_EQ(BackendHintFromContent(".target sm_90a"), "gpu");
  EXPECT_EQ(BackendHintFromContent("backend_config={\"outer_dimension_partitions\":[\"2\"]}"), "cpu");
  // GPU markers win over the memory-space marker (GPU uses S(1) for collective memory).
  EXPECT_EQ(BackendHintFromContent("f32[4]{0:S(1)} custom_call_target=\"__cublas$gemm\""), "gpu");
  // Names that merely contain "sm_" are not CUDA architectures.
  EXPECT_EQ(BackendHintFromContent("%rsm_1 = f32[] parameter(0), %sm_x = f32[] add()"), "");
  EXPECT_EQ(BackendHintFromContent("HloModule jit_f\n"), "");
}

// The hint's rule asked one marker at a time (as sniff.h states it), against the one pass that finds them all:
// every marker and every pair of markers, at the text's start and end, run together, glued to identifier bytes
// and cut short by the end of the text.
std::string_view HintByEachMarker(std::string_view text) {
  auto any = [&](std::initializer_list<std::string_view> markers) {
    for (std::string_view m : markers) {
      if (text.find(m) != std::string_view::npos) return true;
    }
    return false;
  };
  bool cuda_arch = false;
  for (size_t at = text.find("sm_"); at != std::string_view::npos && !cuda_arch; at = text.find("sm_", at + 1)) {
    const bool token_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    cuda_arch = token_start && at + 3 < text.size() && std::isdigit(static_cast<unsigned char>(text[at + 3]));
  }
  if (cuda_arch || any({"__cublas$", "__cudnn$", "__triton", "operation_queue_id", "gemm_backend_config",
                        "fusion_backend_config", "force_earliest_schedule"})) {
    return "gpu";
  }
  if (any({"tpu_custom_call", ":T(", "scoped_memory_configs"})) return "tpu";
  if (any({"outer_dimension_partitions", "__xla_cpu_"})) return "cpu";
  if (any({":S(1)", ":S(2)", ")S(1)", ")S(2)"})) return "tpu";
  return "";
}

TEST(Sniff, BackendHintsInOnePassAgreeWithEachMarkerAskedInTurn) {
  const std::vector<std::string> markers = {
      "__cublas$", "__cudnn$", "__triton", "operation_queue_id", "gemm_backend_config", "fusion_backend_config",
      "force_earliest_schedule", "sm_8", "sm_", "xsm_9", "tpu_custom_call", ":T(", "scoped_memory_configs",
      "outer_dimension_partitions", "__xla_cpu_", ":S(1)", ":S(2)", ")S(1)", ")S(2)", "_", "(", "__", "(("};
  std::vector<std::string> texts;
  for (const std::string& a : markers) {
    for (std::string_view cut = a; !cut.empty(); cut.remove_suffix(1)) {
      texts.push_back(std::string(cut));
      texts.push_back("x_(" + std::string(cut));
    }
    for (const std::string& b : markers) {
      texts.push_back(a + b);
      texts.push_back(a + " f32[8]{0} " + b);
      texts.push_back("_" + a + "(" + b + "_");
    }
  }
  int gpu = 0, tpu = 0, cpu = 0;
  for (const std::string& text : texts) {
    const std::string_view want = HintByEachMarker(text);
    EXPECT_EQ(BackendHintFromContent(text), want) << "text: " << text;
    gpu += want == "gpu";
    tpu += want == "tpu";
    cpu += want == "cpu";
  }
  // Every class of answer came up, so the comparison covered each.
  EXPECT_GT(gpu, 0);
  EXPECT_GT(tpu, 0);
  EXPECT_GT(cpu, 0);
  EXPECT_GT(static_cast<int>(texts.size()) - gpu - tpu - cpu, 0);
}

}  // namespace
}  // namespace xladb::ingest
