// ParseDumpName: every file-name shape of §1 (FilenameFor in xla/service/dump.cc, libtpu LLO dumps).
#include "ingest/text/dump_name.h"

#include <gtest/gtest.h>

namespace xladb::ingest {
namespace {

TEST(DumpName, CudaStageWithBufferAssignment) {
  DumpName n = ParseDumpName("module_0007.jit__identity_fn.sm_8.0_gpu_after_optimizations-buffer-assignment.txt");
  EXPECT_TRUE(n.xla_naming);
  EXPECT_EQ(n.timestamp_us, -1);
  EXPECT_EQ(n.xla_module_id, 7);
  EXPECT_EQ(n.module_name, "jit__identity_fn");
  EXPECT_EQ(n.stage, "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(n.backend, "cuda");
  EXPECT_EQ(n.changelist, "");
  EXPECT_EQ(n.artifact, "-buffer-assignment.txt");
  EXPECT_FALSE(n.is_pass_dump);
  EXPECT_EQ(n.compression, "");
}

TEST(DumpName, TimestampPrefix) {
  DumpName n = ParseDumpName("1700000000123456.module_0042.jit_f.before_optimizations.txt");
  EXPECT_TRUE(n.xla_naming);
  EXPECT_EQ(n.timestamp_us, 1700000000123456);
  EXPECT_EQ(n.xla_module_id, 42);
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, "before_optimizations");
  EXPECT_EQ(n.backend, "");
  EXPECT_EQ(n.artifact, ".txt");
}

TEST(DumpName, DotsInModuleName) {
  DumpName n = ParseDumpName("module_0012.SyncTensorsGraph.105381.sm_8.0_gpu_after_optimizations.txt");
  EXPECT_EQ(n.xla_module_id, 12);
  EXPECT_EQ(n.module_name, "SyncTensorsGraph.105381");
  EXPECT_EQ(n.stage, "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(n.backend, "cuda");
  EXPECT_EQ(n.artifact, ".txt");

  DumpName m =
      ParseDumpName("module_0003.add_one_shard_parallel.7.sm_7.0_gpu_after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(m.module_name, "add_one_shard_parallel.7");
  EXPECT_EQ(m.stage, "sm_7.0_gpu_after_optimizations");
}

TEST(DumpName, CudaArchitectureSuffixes) {
  DumpName a = ParseDumpName("module_0003.jit_f.sm_9.0a_gpu_after_optimizations-memory-usage-report.txt");
  EXPECT_EQ(a.module_name, "jit_f");
  EXPECT_EQ(a.stage, "sm_9.0a_gpu_after_optimizations");
  EXPECT_EQ(a.backend, "cuda");
  EXPECT_EQ(a.artifact, "-memory-usage-report.txt");

  DumpName f = ParseDumpName("module_0003.jit.f.sm_10.0f_gpu_after_optimizations.txt");
  EXPECT_EQ(f.module_name, "jit.f");
  EXPECT_EQ(f.stage, "sm_10.0f_gpu_after_optimizations");
  EXPECT_EQ(f.backend, "cuda");
}

TEST(DumpName, RocmStage) {
  DumpName n = ParseDumpName("module_0004.jit_f.gfx90a_gpu_after_optimizations.txt");
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, "gfx90a_gpu_after_optimizations");
  EXPECT_EQ(n.backend, "rocm");
}

TEST(DumpName, GpuStageWithoutCapability) {
  DumpName n = ParseDumpName("module_0005.jit_f._gpu_after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, "_gpu_after_optimizations");
  EXPECT_EQ(n.backend, "gpu");
  EXPECT_EQ(n.artifact, "-buffer-assignment.txt");
}

TEST(DumpName, CpuStage) {
  DumpName n = ParseDumpName("module_0006.jit_f.cpu_after_optimizations-buffer-assignment-values.txt");
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, "cpu_after_optimizations");
  EXPECT_EQ(n.backend, "cpu");
  EXPECT_EQ(n.artifact, "-buffer-assignment-values.txt");
}

TEST(DumpName, ValuesAndLiveRangeArtifactsAreNotBufferAssignment) {
  EXPECT_EQ(ParseDumpName("module_0001.f.after_optimizations-buffer-assignment-values.txt").artifact,
            "-buffer-assignment-values.txt");
  EXPECT_EQ(ParseDumpName("module_0001.f.after_optimizations-buffer-assignment.txt").artifact,
            "-buffer-assignment.txt");
  DumpName lr = ParseDumpName("module_0001.f.after_optimizations-live-range.txt");
  EXPECT_EQ(lr.artifact, "-live-range.txt");
  EXPECT_EQ(lr.stage, "after_optimizations");
  EXPECT_EQ(lr.module_name, "f");
}

TEST(DumpName, Changelist) {
  DumpName n =
      ParseDumpName("module_0001.jit_convert_element_type.cl_772339112.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(n.xla_module_id, 1);
  EXPECT_EQ(n.module_name, "jit_convert_element_type");
  EXPECT_EQ(n.changelist, "772339112");
  EXPECT_EQ(n.stage, "after_optimizations");
  EXPECT_EQ(n.backend, "");

  DumpName small = ParseDumpName("module_0002.f.cl_123.after_optimizations.txt");
  EXPECT_EQ(small.changelist, "123");
  EXPECT_EQ(small.module_name, "f");
}

TEST(DumpName, ModuleNameDroppedForLength) {
  DumpName n = ParseDumpName("module_0009.after_optimizations-buffer-assignment.txt");
  EXPECT_TRUE(n.xla_naming);
  EXPECT_EQ(n.xla_module_id, 9);
  EXPECT_EQ(n.module_name, "");
  EXPECT_EQ(n.stage, "after_optimizations");
  EXPECT_EQ(n.artifact, "-buffer-assignment.txt");

  DumpName cl = ParseDumpName("module_0009.cl_123.sm_8.0_gpu_after_optimizations.txt");
  EXPECT_EQ(cl.module_name, "");
  EXPECT_EQ(cl.changelist, "123");
  EXPECT_EQ(cl.stage, "sm_8.0_gpu_after_optimizations");

  DumpName thunk = ParseDumpName("module_0009.thunk_sequence.txt");
  EXPECT_EQ(thunk.module_name, "");
  EXPECT_EQ(thunk.artifact, ".thunk_sequence.txt");
  EXPECT_EQ(thunk.stage, "");
}

TEST(DumpName, PassDumpBetweenPasses) {
  DumpName n = ParseDumpName(
      "module_0007.jit__identity_fn.0001.spmd-partitioner.after_sharding-propagation.before_spmd-partitioning.txt");
  EXPECT_TRUE(n.is_pass_dump);
  EXPECT_EQ(n.module_name, "jit__identity_fn");
  EXPECT_EQ(n.stage, "0001.spmd-partitioner.after_sharding-propagation.before_spmd-partitioning");
  EXPECT_EQ(n.artifact, ".txt");
  EXPECT_FALSE(IsModuleTextStage(n));
}

TEST(DumpName, PassDumpWithDotsInModuleAndPassNames) {
  DumpName n = ParseDumpName("module_0012.SyncTensorsGraph.1234.0003.pipe.after_simplify.v2.before_dce.txt");
  EXPECT_TRUE(n.is_pass_dump);
  EXPECT_EQ(n.module_name, "SyncTensorsGraph.1234");
  EXPECT_EQ(n.stage, "0003.pipe.after_simplify.v2.before_dce");
}

TEST(DumpName, PassDumpDuringPass) {
  DumpName n = ParseDumpName("module_0002.jit_f.0005.layout-assignment.before-assigning-layouts.txt");
  EXPECT_TRUE(n.is_pass_dump);
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, "0005.layout-assignment.before-assigning-layouts");
}

TEST(DumpName, LibtpuBundleProfile) {
  DumpName n = ParseDumpName("1766453540309905585-TLP-82-hlo-static-bundle-profile.txt");
  EXPECT_TRUE(n.xla_naming);
  EXPECT_EQ(n.timestamp_us, 1766453540309905);  // the prefix is in nanoseconds
  EXPECT_EQ(n.xla_module_id, -1);
  EXPECT_EQ(n.module_name, "TLP");
  EXPECT_EQ(n.libtpu_step, 82);
  EXPECT_EQ(n.artifact, "-hlo-static-bundle-profile.txt");
  EXPECT_EQ(n.stage, "");

  DumpName u = ParseDumpName(
      "1768084151761831794-splash_mha_fwd_e9701070.1-77-final_hlo-static-per-bundle-utilization.txt");
  EXPECT_TRUE(u.xla_naming);
  EXPECT_EQ(u.module_name, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(u.libtpu_step, 77);
  EXPECT_EQ(u.artifact, "-final_hlo-static-per-bundle-utilization.txt");
}

TEST(DumpName, RenamedFilesAreNotXlaNaming) {
  DumpName n = ParseDumpName("cpu_fme_m0001_jit_convert_element_type__buffer-assignment.txt");
  EXPECT_FALSE(n.xla_naming);
  EXPECT_EQ(n.xla_module_id, -1);
  EXPECT_EQ(n.module_name, "");
  EXPECT_EQ(n.stage, "");
  EXPECT_EQ(n.artifact, ".txt");  // `__buffer-assignment.txt` is not XLA's `-buffer-assignment.txt`

  DumpName dash = ParseDumpName("my_run-buffer-assignment.txt");
  EXPECT_FALSE(dash.xla_naming);
  EXPECT_EQ(dash.artifact, "-buffer-assignment.txt");

  DumpName stage_only = ParseDumpName("jit_f.sm_8.0_gpu_after_optimizations.txt");
  EXPECT_FALSE(stage_only.xla_naming);
  EXPECT_EQ(stage_only.stage, "");  // stages are read only on XLA names
}

TEST(DumpName, NonMemoryArtifacts) {
  EXPECT_EQ(ParseDumpName("module_0001.SyncTensorsGraph.68.ir-no-opt.ll").artifact, ".ir-no-opt.ll");
  EXPECT_EQ(ParseDumpName("module_0001.SyncTensorsGraph.68.ir-no-opt.ll").module_name, "SyncTensorsGraph.68");
  EXPECT_EQ(ParseDumpName("module_0001.SyncTensorsGraph.68.ir-with-opt.ll").artifact, ".ir-with-opt.ll");
  EXPECT_EQ(ParseDumpName("module_0001.f.ptx").artifact, ".ptx");
  EXPECT_EQ(ParseDumpName("module_0001.SyncTensorsGraph.68.autotune_results.pbtxt").artifact,
            ".autotune_results.pbtxt");
  EXPECT_EQ(ParseDumpName("module_0001.SyncTensorsGraph.68.gpu_target_config.pbtxt").module_name,
            "SyncTensorsGraph.68");
  EXPECT_EQ(ParseDumpName("module_0001.f.sm_8.0_gpu_after_optimizations.dot").artifact, ".dot");
  EXPECT_EQ(ParseDumpName("module_0001.f.sm_8.0_gpu_after_optimizations.dot").stage,
            "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(ParseDumpName("module_0001.f.after_optimizations.top_level.html").stage, "after_optimizations");

  DumpName options = ParseDumpName("module_0021.jit_train_step.debug_options");
  EXPECT_EQ(options.artifact, ".debug_options");
  EXPECT_EQ(options.module_name, "jit_train_step");
  EXPECT_EQ(ParseDumpName("module_0021.jit_train_step.flagfile").artifact, ".flagfile");

  DumpName env = ParseDumpName("module_0021.jit_train_step.tpu_comp_env.txt");
  EXPECT_EQ(env.stage, "tpu_comp_env");
  EXPECT_EQ(env.module_name, "jit_train_step");
}

TEST(DumpName, CompressedProto) {
  DumpName n = ParseDumpName("module_0001.f.before_optimizations.hlo.pb.gz");
  EXPECT_EQ(n.compression, ".gz");
  EXPECT_EQ(n.artifact, ".hlo.pb");
  EXPECT_EQ(n.stage, "before_optimizations");
  EXPECT_EQ(n.module_name, "f");

  DumpName report = ParseDumpName("module_0001.f.after_optimizations-memory-usage-report.pb");
  EXPECT_EQ(report.artifact, "-memory-usage-report.pb");
  EXPECT_EQ(report.compression, "");

  DumpName zst = ParseDumpName("module_0001.f.cpu_after_optimizations-buffer-assignment.txt.zst");
  EXPECT_EQ(zst.compression, ".zst");
  EXPECT_EQ(zst.artifact, "-buffer-assignment.txt");
}

TEST(DumpName, LibtpuStagesAroundBufferAssignment) {
  DumpName after = ParseDumpName("module_0023.jit_train_step.after_optimizations_after_buffer_assignment.txt");
  EXPECT_EQ(after.stage, "after_optimizations_after_buffer_assignment");
  EXPECT_EQ(after.module_name, "jit_train_step");
  EXPECT_FALSE(IsModuleTextStage(after));
  DumpName before = ParseDumpName("module_0023.jit_train_step.after_optimizations_before_buffer_assignment.txt");
  EXPECT_EQ(before.stage, "after_optimizations_before_buffer_assignment");
  EXPECT_FALSE(IsModuleTextStage(before));
  EXPECT_TRUE(IsModuleTextStage(ParseDumpName("module_0023.jit_train_step.after_optimizations.txt")));
  EXPECT_TRUE(IsModuleTextStage(ParseDumpName("module_0021.jit_train_step.before_optimizations.txt")));
  EXPECT_TRUE(IsModuleTextStage(ParseDumpName("module_0001.f.gfx90a_gpu_after_optimizations.txt")));
  EXPECT_FALSE(IsModuleTextStage(ParseDumpName("module_0001.f.thunk_sequence.txt")));
}

TEST(DumpName, OddInputsDoNotCrash) {
  for (const char* s : {"", ".", "module_", "module_0001", "module_0001.", "module_001.f.txt", "12345.",
                        "12345.module_", "-", "1-2-3-", "1-a-2-", ".txt", "module_0001..txt",
                        "module_0001.sm_8.0_gpu_after_optimizations", "module_0001._gpu_after_optimizations"}) {
    SCOPED_TRACE(s);
    DumpName n = ParseDumpName(s);
    EXPECT_LE(n.module_name.size(), std::string_view(s).size());
  }
  DumpName overflow = ParseDumpName("module_99999999999999999999.f.txt");
  EXPECT_FALSE(overflow.xla_naming);
  EXPECT_EQ(overflow.xla_module_id, -1);
  DumpName three_digits = ParseDumpName("module_001.f.txt");  // %04d: at least four digits
  EXPECT_FALSE(three_digits.xla_naming);
  DumpName bare = ParseDumpName("module_0001.sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(bare.stage, "sm_8.0_gpu_after_optimizations");  // no artifact: ".0_gpu_…" is not an extension
  EXPECT_EQ(bare.module_name, "");
}

}  // namespace
}  // namespace xladb::ingest
