// SniffFile and ParseDumpName over the shared corpus of real dumps (../shared/corpus): the 707 public files
// against the format column of public/SOURCES.md, and the two whole dump folders of runs/. Skips cleanly when
// the corpus is absent (it is not shipped to users).
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/text/dump_name.h"
#include "ingest/source/sniff.h"

namespace xladb::ingest {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = XLADB_CORPUS_DIR;

#define SKIP_WITHOUT(dir)                                                                          \
  if (!fs::is_directory(dir)) GTEST_SKIP() << "shared corpus not present at " << (dir).string() \
                                           << " (it is only on development machines and in CI)"

// The first kSniffBytes of a file, as the driver passes them.
std::string ReadHead(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// The first line of a file (the HloModule header can be long: read it whole).
std::string ReadFirstLine(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::getline(in, line);
  return line;
}

// `HloModule <name>[, …]` → name.
std::string HloModuleName(const std::string& first_line) {
  std::string_view s = first_line;
  if (!s.starts_with("HloModule ")) return {};
  s.remove_prefix(10);
  return std::string(s.substr(0, s.find(',')));
}

std::string Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

struct SourceRow {
  std::string file;           // name in corpus/public
  std::string original_name;  // base name of the `path` column (what XLA or libtpu called it)
  std::string format;
  std::string backend;
};

// The `## Files` table of SOURCES.md: | file | repository | path | commit | format | backend | lines | … |
std::vector<SourceRow> ReadSources(const fs::path& sources_md) {
  std::vector<SourceRow> rows;
  std::ifstream in(sources_md);
  std::string line;
  bool in_files = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_files = line == "## Files";
    if (!in_files || !line.starts_with("| ")) continue;
    std::vector<std::string> cells;
    size_t start = 1;
    for (size_t bar = line.find('|', start); bar != std::string::npos; bar = line.find('|', start)) {
      cells.push_back(Trim(std::string_view(line).substr(start, bar - start)));
      start = bar + 1;
    }
    if (cells.size() < 6 || cells[0] == "file" || cells[0].starts_with("---")) continue;
    std::string path = cells[2];
    rows.push_back({cells[0], path.substr(path.rfind('/') + 1), cells[4], cells[5]});
  }
  return rows;
}

FileKind KindOfSourcesFormat(const std::string& format) {
  if (format == "buffer-assignment") return FileKind::kBufferAssignment;
  if (format == "hlo-module") return FileKind::kHloModule;
  if (format == "memory-usage-report") return FileKind::kMemoryUsageReport;
  if (format == "oom-report") return FileKind::kOomReport;
  if (format == "tpu-per-bundle-utilization") return FileKind::kTpuPerBundleUtilization;
  if (format == "tpu-utilization-report") return FileKind::kTpuBundleProfile;
  return FileKind::kUnknown;
}

TEST(SniffCorpus, PublicFilesGetTheFormatSourcesMdGives) {
  const fs::path public_dir = kCorpus / "public";
  SKIP_WITHOUT(public_dir);
  std::vector<SourceRow> rows = ReadSources(public_dir / "SOURCES.md");
  ASSERT_EQ(rows.size(), 707u) << "SOURCES.md lists 707 files";

  std::map<FileKind, int> counts;
  int with_hint = 0;
  for (const SourceRow& row : rows) {
    SCOPED_TRACE(row.file);
    const FileKind expected = KindOfSourcesFormat(row.format);
    ASSERT_NE(expected, FileKind::kUnknown) << "format column: " << row.format;
    const std::string head = ReadHead(public_dir / row.file);
    ASSERT_FALSE(head.empty());

    SniffResult r = SniffFile(row.file, head);
    EXPECT_EQ(FileKindName(r.kind), FileKindName(expected)) << r.reason;
    ++counts[r.kind];
    // The hint, when content gives one, agrees with the backend column.
    if (!r.backend_hint.empty()) {
      ++with_hint;
      EXPECT_EQ(r.backend_hint, row.backend);
    }
    // Under the name XLA (or libtpu) wrote, the verdict is the same.
    if (row.original_name.find(' ') == std::string::npos) {
      SniffResult original = SniffFile(row.original_name, head);
      EXPECT_EQ(FileKindName(original.kind), FileKindName(expected)) << row.original_name << ": " << original.reason;
    }
  }
  // The "Counts by format/backend" table of SOURCES.md, summed over backends.
  EXPECT_EQ(counts[FileKind::kBufferAssignment], 68 + 161 + 29);
  EXPECT_EQ(counts[FileKind::kHloModule], 26 + 82 + 32);
  EXPECT_EQ(counts[FileKind::kMemoryUsageReport], 68 + 176 + 31);
  EXPECT_EQ(counts[FileKind::kOomReport], 2);
  EXPECT_EQ(counts[FileKind::kTpuPerBundleUtilization], 2);
  EXPECT_EQ(counts[FileKind::kTpuBundleProfile], 30);
  EXPECT_EQ(with_hint, 219);  // counted when this test was written: files whose first 64 KiB carry a marker
}

TEST(SniffCorpus, PublicOriginalNamesYieldTheModuleNameOfTheirText) {
  const fs::path public_dir = kCorpus / "public";
  SKIP_WITHOUT(public_dir);
  int checked = 0;
  int with_changelist = 0;
  int with_dotted_name = 0;
  for (const SourceRow& row : ReadSources(public_dir / "SOURCES.md")) {
    if (row.format != "hlo-module" || !row.original_name.starts_with("module_")) continue;
    SCOPED_TRACE(row.original_name);
    DumpName name = ParseDumpName(row.original_name);
    EXPECT_TRUE(name.xla_naming);
    EXPECT_EQ(name.artifact, ".txt");
    EXPECT_TRUE(IsModuleTextStage(name)) << name.stage;
    EXPECT_EQ(name.module_name, HloModuleName(ReadFirstLine(public_dir / row.file)));
    EXPECT_EQ(KindClaimedByName(name), FileKind::kHloModule);
    ++checked;
    with_changelist += !name.changelist.empty();
    with_dotted_name += name.module_name.find('.') != std::string::npos;
  }
  // Counted from SOURCES.md: 138 module-text files keep XLA names (2 hlo-visualizer ones do not); 30 carry
  // `.cl_772339112`, and 60 module names contain dots (jit_prim_fun.0, SyncTensorsGraph.N, …).
  EXPECT_EQ(checked, 138);
  EXPECT_EQ(with_changelist, 30);
  EXPECT_EQ(with_dotted_name, 60);
}

struct RunCounts {
  int buffer_assignment = 0;
  int memory_usage_report = 0;
  int hlo_module = 0;
  int thunk_sequence = 0;
  int per_pass = 0;
  int other = 0;
};

class SniffRuns : public ::testing::TestWithParam<const char*> {};

TEST_P(SniffRuns, EveryFileGetsAKindConsistentWithItsName) {
  const fs::path dir = kCorpus / "runs" / GetParam() / "xla_dump";
  SKIP_WITHOUT(dir);
  RunCounts counts;
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    ++files;
    SniffResult r = SniffFile(file, ReadHead(entry.path()));
    DumpName name = ParseDumpName(file);
    EXPECT_NE(r.kind, FileKind::kUnknown) << r.reason;
    if (r.name_claims_ingested_kind) {
      EXPECT_EQ(FileKindName(r.kind), FileKindName(KindClaimedByName(name)));
    }
    switch (r.kind) {
      case FileKind::kBufferAssignment:
        ++counts.buffer_assignment;
        EXPECT_EQ(name.artifact, "-buffer-assignment.txt");
        break;
      case FileKind::kMemoryUsageReport:
        ++counts.memory_usage_report;
        EXPECT_EQ(name.artifact, "-memory-usage-report.txt");
        break;
      case FileKind::kHloModule:
        ++counts.hlo_module;
        EXPECT_TRUE(IsModuleTextStage(name)) << name.stage;
        break;
      case FileKind::kNotIngested:
        if (r.reason == "GPU thunk sequence: not memory data") {
          ++counts.thunk_sequence;
          EXPECT_EQ(name.artifact, ".thunk_sequence.txt");
        } else if (r.reason == "per-pass HLO dump (intermediate pass state)") {
          ++counts.per_pass;
          EXPECT_TRUE(name.is_pass_dump);
        } else {
          ++counts.other;
          ADD_FAILURE() << "unexpected reason: " << r.reason;
        }
        break;
      default:
        ++counts.other;
        ADD_FAILURE() << "unexpected kind " << FileKindName(r.kind);
    }
  }
  // Counted with ls | grep when this test was written; both runs compile the same 493 modules.
  EXPECT_EQ(files, 2965);
  EXPECT_EQ(counts.buffer_assignment, 493);
  EXPECT_EQ(counts.memory_usage_report, 493);
  EXPECT_EQ(counts.hlo_module, 986);  // 493 before_optimizations + 493 sm_8.0_gpu_after_optimizations
  EXPECT_EQ(counts.thunk_sequence, 493);
  EXPECT_EQ(counts.per_pass, 500);  // 250 modules × 2 spmd-partitioner steps
  EXPECT_EQ(counts.other, 0);
}

TEST_P(SniffRuns, FileNamesYieldTheModuleIdAndNameTheyContain) {
  const fs::path dir = kCorpus / "runs" / GetParam() / "xla_dump";
  SKIP_WITHOUT(dir);
  std::set<std::pair<int64_t, std::string>> modules;
  std::set<int64_t> ids;
  int hlo_headers_checked = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    DumpName name = ParseDumpName(file);
    ASSERT_TRUE(name.xla_naming);
    // Independently: module_<digits>.<name>.<rest>, where these module names have no dots.
    ASSERT_TRUE(file.starts_with("module_"));
    const size_t dot1 = file.find('.');
    const size_t dot2 = file.find('.', dot1 + 1);
    EXPECT_EQ(name.xla_module_id, std::stoll(file.substr(7, dot1 - 7)));
    EXPECT_EQ(name.module_name, file.substr(dot1 + 1, dot2 - dot1 - 1));
    EXPECT_EQ(name.timestamp_us, -1);
    EXPECT_EQ(name.changelist, "");
    if (!name.stage.empty() && !name.is_pass_dump) {
      EXPECT_TRUE(name.stage == "before_optimizations" || name.stage == "sm_8.0_gpu_after_optimizations")
          << name.stage;
    }
    if (name.stage == "sm_8.0_gpu_after_optimizations") {
      EXPECT_EQ(name.backend, "cuda");
    }
    modules.emplace(name.xla_module_id, name.module_name);
    ids.insert(name.xla_module_id);
    // The module text says the same name.
    if (name.artifact == ".txt" && !name.stage.empty()) {
      EXPECT_EQ(name.module_name, HloModuleName(ReadFirstLine(entry.path())));
      ++hlo_headers_checked;
    }
  }
  // Several processes dumped flat into one folder, so module ids collide (§1.1): 493 modules share 344 ids
  // (module_0267 is both jit_broadcast_in_dim and jit_fft_and_weight). Counted with ls | awk.
  EXPECT_EQ(modules.size(), 493u);
  EXPECT_EQ(ids.size(), 344u);
  EXPECT_EQ(hlo_headers_checked, 986 + 500);
}

INSTANTIATE_TEST_SUITE_P(Sniff, SniffRuns, ::testing::Values("21_lorrax_scan_C", "22_lorrax_scan_cached_C"));

}  // namespace
}  // namespace xladb::ingest
