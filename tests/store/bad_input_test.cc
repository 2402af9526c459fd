// The bad-input catalog: what xladb does with every kind of broken, hostile or odd input a CI artifact folder
// can hold. Each case ingests a folder (or archive) holding the bad input next to a good file (seed 002 as
// module_0002.jit_train_step) into a database that already holds an earlier run (the seed run), with the real
// DumpIngester and RunWriter on a SQLite file, and checks three things:
//   1. the bad input's own outcome: a recorded error whose reason names the problem, or acceptance (with the
//      exact numbers where the input still carries them);
//   2. the rest of the folder is still ingested: the good neighbour has seed 002's exact numbers;
//   3. earlier data is untouched: the earlier run keeps its row counts, and the database stays consistent
//      (PRAGMA integrity_check, no file left half-written).
// docs/RELIABILITY.md lists these cases; keep the two in step.
#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/database.h"
#include "store/run_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::SeedFile;
using testing::TempDir;
using testing::WriteFile;

// The good neighbour every bad folder holds: seed 002 under a realistic name. Its numbers, counted from the
// dump: 14 `allocation N:` headers, 24 ` value:` lines, the peak list `Live ranges at 12 (peak)` whose last
// cumulative is 184680476 bytes, and 18 BufferLiveRange lines.
constexpr char kNeighbourName[] = "module_0002.jit_train_step.after_optimizations-buffer-assignment.txt";
// Seed 000 (jit_splash_attention_kernel): 8 allocations, 11 values, `Total bytes used: 18629632`, peak
// 18612288 bytes at time 6 (`Live ranges at 6 (peak)`).
constexpr char kSeed000Name[] = "module_0001.jit_splash_attention_kernel.after_optimizations-buffer-assignment.txt";

int64_t Scalar(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -1;
  return q.getColumn(0).getInt64();
}

std::string Text(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return "<null>";
  return q.getColumn(0).getString();
}

std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("''") : std::string(1, c);
  return out + "'";
}

// One dump_files row.
struct FileRow {
  std::string verdict = "<missing>";
  std::string reason;
  std::string kind;
  int64_t rows_written = -1;
  int64_t module_id = -1;
};

// Drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from this thread's effective capabilities while alive, so a
// process running as root obeys file modes like any user (the tests run as root in CI containers). They stay
// in the permitted set and are restored on destruction.
class WithoutFileCapabilities {
 public:
  WithoutFileCapabilities() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    if (syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct reduced[2] = {saved_[0], saved_[1]};
    reduced[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    dropped_ = syscall(SYS_capset, &header_, reduced) == 0;
  }
  ~WithoutFileCapabilities() {
    if (dropped_) syscall(SYS_capset, &header_, saved_);
  }
  bool dropped() const { return dropped_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
  bool dropped_ = false;
};

// A RunWriter that runs `hook` at a chosen moment of one file's ingest: between the hash pass and the parse
// pass (BeginFile), or during the parse (at its first allocation record). For files that change under xladb.
class InterferingWriter : public store::RunWriter {
 public:
  enum class When { kBetweenPasses, kDuringParse };
  InterferingWriter(store::Database* db, std::string path, When when, std::function<void()> hook)
      : RunWriter(db), path_(std::move(path)), when_(when), hook_(std::move(hook)) {}

  Status BeginFile(const ingest::FileSpec& spec) override {
    armed_ = spec.path == path_;
    if (armed_ && when_ == When::kBetweenPasses) Fire();
    return RunWriter::BeginFile(spec);
  }
  void OnAllocation(ingest::AllocationRecord&& r) override {
    if (armed_ && when_ == When::kDuringParse) Fire();
    RunWriter::OnAllocation(std::move(r));
  }
  bool fired() const { return fired_; }

 private:
  void Fire() {
    if (fired_) return;
    fired_ = true;
    hook_();
  }
  std::string path_;
  When when_;
  std::function<void()> hook_;
  bool armed_ = false;
  bool fired_ = false;
};

// A ustar archive built in memory, for archives that lie.
class TarBuilder {
 public:
  // Adds a member header declaring `declared_size` bytes (the real size when -1) and then `data`.
  void Add(const std::string& name, const std::string& data, char type = '0', const std::string& link = "",
           int64_t declared_size = -1) {
    std::string header(512, '\0');
    auto put = [&](size_t offset, size_t width, const std::string& value) {
      header.replace(offset, std::min(width, value.size()), value.substr(0, width));
    };
    auto octal = [](int64_t value, int width) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%0*llo", width - 1, static_cast<unsigned long long>(value));
      return std::string(buf);
    };
    put(0, 100, name);
    put(100, 8, octal(0644, 8));
    put(108, 8, octal(0, 8));
    put(116, 8, octal(0, 8));
    put(124, 12, octal(declared_size >= 0 ? declared_size : static_cast<int64_t>(data.size()), 12));
    put(136, 12, octal(1767225600, 12));
    put(148, 8, std::string(8, ' '));
    header[156] = type;
    put(157, 100, link);
    put(257, 6, std::string("ustar\0", 6));
    put(263, 2, "00");
    unsigned sum = 0;
    for (unsigned char c : header) sum += c;
    put(148, 8, octal(sum, 7) + std::string(1, '\0'));
    bytes_ += header;
    bytes_ += data;
    bytes_.append((512 - data.size() % 512) % 512, '\0');
  }
  std::string Finish() const { return bytes_ + std::string(1024, '\0'); }
  // The bytes so far, with no end-of-archive blocks: an archive cut short.
  const std::string& Unfinished() const { return bytes_; }

 private:
  std::string bytes_;
};

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = tmp_ / "xladb.db";
    testing::MakeSeedRun(tmp_ / "earlier");
    ingest::IngestSummary earlier = Ingest(tmp_ / "earlier");
    ASSERT_EQ(earlier.files_by_verdict["ingested"], 5);
    earlier_rows_ = RunRowCounts("earlier");
    ASSERT_NE(earlier_rows_.find("allocations=48 "), std::string::npos) << earlier_rows_;
  }

  // A new run folder `name` holding the good neighbour; returns its path.
  std::string NewRun(const std::string& name) {
    std::string dir = tmp_ / name;
    WriteFile(dir + "/" + kNeighbourName, ReadFile(SeedFile("002")));
    return dir;
  }

  ingest::IngestSummary Ingest(const std::string& path, const std::string& run_name = "") {
    auto db = store::Database::Open(db_path_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return {};
    store::RunWriter writer(db.value().get());
    return IngestWith(&writer, path, run_name);
  }

  ingest::IngestSummary IngestWith(ingest::IngestTarget* target, const std::string& path,
                                   const std::string& run_name = "") {
    ingest::DumpIngester ingester(target);
    ingest::IngestOptions options;
    options.run_name = run_name;
    auto summary = ingester.Ingest(path, options);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? summary.value() : ingest::IngestSummary{};
  }

  SQLite::Database Db() { return SQLite::Database(db_path_, SQLite::OPEN_READONLY); }

  FileRow File(const std::string& run, const std::string& path) {
    SQLite::Database db = Db();
    SQLite::Statement q(db,
                        "SELECT f.verdict, f.reason, f.kind, f.rows_written, f.module_id FROM dump_files f "
                        "JOIN runs r USING(run_id) WHERE r.name = ? AND f.path = ?");
    q.bind(1, run);
    q.bind(2, path);
    FileRow row;
    if (q.executeStep()) {
      row.verdict = q.getColumn(0).getString();
      row.reason = q.getColumn(1).isNull() ? "" : q.getColumn(1).getString();
      row.kind = q.getColumn(2).getString();
      row.rows_written = q.getColumn(3).isNull() ? -1 : q.getColumn(3).getInt64();
      row.module_id = q.getColumn(4).isNull() ? -1 : q.getColumn(4).getInt64();
    }
    return row;
  }

  // Row counts of everything a run owns, as one comparable string.
  std::string RunRowCounts(const std::string& run) {
    SQLite::Database db = Db();
    const std::string run_id = "(SELECT run_id FROM runs WHERE name = " + Quoted(run) + ")";
    const std::string files = "(SELECT file_id FROM dump_files WHERE run_id = " + run_id + ")";
    std::string out = "dump_files=" + std::to_string(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE run_id = " +
                                                                    run_id)) +
                      " modules=" + std::to_string(Scalar(db, "SELECT COUNT(*) FROM modules WHERE run_id = " + run_id)) +
                      " module_summary=" +
                      std::to_string(Scalar(db, "SELECT COUNT(*) FROM module_summary WHERE module_id IN "
                                                "(SELECT module_id FROM modules WHERE run_id = " +
                                                    run_id + ")")) +
                      " ";
    for (const char* t : {"allocations", "buffer_values", "instructions", "computations", "peak_buffers",
                          "stack_trace_nodes", "memory_report_rows", "memory_report_totals", "utilization_counters",
                          "oom_stats", "oom_buffers", "ingest_issues"}) {
      out += std::string(t) + "=" +
             std::to_string(Scalar(db, std::string("SELECT COUNT(*) FROM ") + t + " WHERE file_id IN " + files)) + " ";
    }
    out += "peak_sum=" + std::to_string(Scalar(db, "SELECT SUM(peak_bytes) FROM module_memory WHERE run_name = " +
                                                       Quoted(run)));
    return out;
  }

  // Checks 2 and 3 of the file comment for run `run`.
  void ExpectNeighbourIngestedAndEarlierUntouched(const std::string& run) {
    SQLite::Database db = Db();
    const std::string where = " FROM module_memory WHERE run_name = " + Quoted(run) +
                              " AND module_name = 'jit_train_step'";
    EXPECT_EQ(Scalar(db, "SELECT COUNT(*)" + where), 1) << run;
    EXPECT_EQ(Scalar(db, "SELECT allocations" + where), 14) << run;
    EXPECT_EQ(Scalar(db, "SELECT value_count" + where), 24) << run;
    EXPECT_EQ(Scalar(db, "SELECT peak_bytes" + where), 184680476) << run;
    EXPECT_EQ(Scalar(db, "SELECT peak_time" + where), 12) << run;
    EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM live_ranges WHERE module_id = (SELECT module_id" + where + ")"), 18)
        << run;
    EXPECT_EQ(File(run, kNeighbourName).verdict, "ingested") << run;
    EXPECT_EQ(RunRowCounts("earlier"), earlier_rows_) << "the earlier run changed while ingesting " << run;
    EXPECT_EQ(Text(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE verdict NOT IN ('ingested','not_ingested','error')"),
              0);
  }

  // Rows stored for the module of the file at `path` in `run` (0 when the file has no module).
  int64_t ModuleAllocations(const std::string& run, const std::string& path) {
    FileRow row = File(run, path);
    if (row.module_id < 0) return 0;
    SQLite::Database db = Db();
    return Scalar(db, "SELECT COUNT(*) FROM allocations WHERE module_id = " + std::to_string(row.module_id));
  }

  TempDir tmp_;
  std::string db_path_;
  std::string earlier_rows_;
};

// ---------------------------------------------------------------------------------------------------------
// Empty, garbage, binary

TEST_F(BadInput, EmptyFileIsCataloguedAsNotIngested) {
  std::string run = NewRun("empty");
  WriteFile(run + "/module_0009.empty.after_optimizations-buffer-assignment.txt", "");
  WriteFile(run + "/notes.txt", "");
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files_by_verdict["not_ingested"], 2);
  EXPECT_TRUE(s.errors.empty());
  FileRow row = File("empty", "module_0009.empty.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(row.verdict, "not_ingested");
  EXPECT_EQ(row.reason, "empty file");
  ExpectNeighbourIngestedAndEarlierUntouched("empty");
}

TEST_F(BadInput, BinaryGarbageUnderADumpNameIsAnErrorAndElsewhereNotIngested) {
  std::string run = NewRun("garbage");
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>(x >> 24);
  }
  WriteFile(run + "/module_0009.garbage.after_optimizations-buffer-assignment.txt", garbage);
  WriteFile(run + "/blob.bin", garbage);
  WriteFile(run + "/nuls.txt", std::string(4096, '\0'));
  ingest::IngestSummary s = Ingest(run);
  FileRow claimed = File("garbage", "module_0009.garbage.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(claimed.verdict, "error");
  EXPECT_NE(claimed.reason.find("name says"), std::string::npos) << claimed.reason;
  EXPECT_EQ(ModuleAllocations("garbage", "module_0009.garbage.after_optimizations-buffer-assignment.txt"), 0);
  FileRow blob = File("garbage", "blob.bin");
  EXPECT_EQ(blob.verdict, "not_ingested") << blob.reason;
  EXPECT_NE(blob.reason.find("binary"), std::string::npos) << blob.reason;
  FileRow nuls = File("garbage", "nuls.txt");
  EXPECT_EQ(nuls.verdict, "not_ingested") << nuls.reason;
  EXPECT_NE(nuls.reason.find("binary"), std::string::npos) << nuls.reason;
  ExpectNeighbourIngestedAndEarlierUntouched("garbage");
}

TEST_F(BadInput, NulBytesInsideADumpAreReported) {
  std::string run = NewRun("nul");
  std::string seed = ReadFile(SeedFile("000"));
  // A NUL in the middle of the `Total bytes used:` number's line, as a disk error or a bad copy leaves.
  size_t at = seed.find("Total bytes used: ");
  ASSERT_NE(at, std::string::npos);
  seed.insert(at + 20, std::string("\0\0\0", 3));
  WriteFile(run + "/" + kSeed000Name, seed);
  Ingest(run);
  FileRow row = File("nul", kSeed000Name);
  // PRINT
  std::printf("NUL: verdict=%s reason=%s rows=%lld\n", row.verdict.c_str(), row.reason.c_str(),
              static_cast<long long>(row.rows_written));
  ExpectNeighbourIngestedAndEarlierUntouched("nul");
}


std::string Issues(SQLite::Database& db, const std::string& run, const std::string& path) {
  SQLite::Statement q(db, "SELECT i.line, i.severity, i.reason FROM ingest_issues i JOIN dump_files f USING(file_id) "
                          "JOIN runs r USING(run_id) WHERE r.name = ? AND f.path = ? ORDER BY i.issue_id");
  q.bind(1, run);
  q.bind(2, path);
  std::string out;
  while (q.executeStep()) {
    out += "  [" + std::to_string(q.getColumn(0).getInt64()) + " " + q.getColumn(1).getString() + "] " +
           q.getColumn(2).getString().substr(0, 200) + "\n";
  }
  return out;
}
#define OBSERVE(run, path)                                                                              \
  do {                                                                                                   \
    FileRow r_ = File(run, path);                                                                        \
    std::printf("OBSERVE %s %s: verdict=%s kind=%s rows=%lld reason=%.300s\n", run, std::string(path).c_str(), \
                r_.verdict.c_str(), r_.kind.c_str(), static_cast<long long>(r_.rows_written), r_.reason.c_str()); \
    SQLite::Database db_ = Db(); std::printf("%s", Issues(db_, run, path).c_str()); \
  } while (0)

TEST_F(BadInput, ObserveLongLine) {
  std::string run = NewRun("long");
  std::string hlo = ReadFile(SeedFile("003"));
  std::string anchor = "copy(%input.2)";
  size_t at = hlo.find(anchor);
  ASSERT_NE(at, std::string::npos);
  hlo.insert(at + anchor.size(), ", backend_config=\"" + std::string(64 << 20, 'x') + "\"");
  WriteFile(run + "/module_0004.long.after_optimizations.txt", hlo);
  WriteFile(run + "/module_0005.oneline.after_optimizations-buffer-assignment.txt", std::string(64 << 20, 'A'));
  auto t0 = std::chrono::steady_clock::now();
  rusage ru; getrusage(RUSAGE_SELF, &ru); long before = ru.ru_maxrss;
  Ingest(run);
  getrusage(RUSAGE_SELF, &ru);
  std::printf("long: %.2fs maxrss %ld -> %ld KB\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), before, ru.ru_maxrss);
  OBSERVE("long", "module_0004.long.after_optimizations.txt");
  OBSERVE("long", "module_0005.oneline.after_optimizations-buffer-assignment.txt");
  SQLite::Database db = Db();
  std::printf("instr=%lld len=%lld\n", (long long)Scalar(db, "SELECT COUNT(*) FROM instructions i JOIN modules m USING(module_id) WHERE m.name='long'"),
    (long long)Scalar(db, "SELECT length(t.text) FROM instructions i JOIN long_texts t ON t.text_id = i.text_id WHERE i.name = 'copy.4' AND i.module_id = (SELECT module_id FROM modules WHERE name='long')"));
  ExpectNeighbourIngestedAndEarlierUntouched("long");
}

TEST_F(BadInput, ObserveFs) {
  std::string run = NewRun("fs");
  std::string s000 = ReadFile(SeedFile("000"));
  WriteFile(run + "/module_0006.locked.after_optimizations-buffer-assignment.txt", s000);
  ::chmod((run + "/module_0006.locked.after_optimizations-buffer-assignment.txt").c_str(), 0);
  WriteFile(run + "/lockeddir/module_0007.inside.after_optimizations-buffer-assignment.txt", s000);
  ::chmod((run + "/lockeddir").c_str(), 0);
  ::mkfifo((run + "/module_0008.fifo.after_optimizations-buffer-assignment.txt").c_str(), 0644);
  fs::create_directories(run + "/module_0009.dir.after_optimizations-buffer-assignment.txt");
  fs::create_directory_symlink(".", run + "/loop");
  fs::create_symlink("b", run + "/a");
  fs::create_symlink("a", run + "/b");
  WriteFile(tmp_ / "outside/module_0010.outside.after_optimizations-buffer-assignment.txt", s000);
  fs::create_symlink(tmp_ / "outside/module_0010.outside.after_optimizations-buffer-assignment.txt", run + "/module_0010.outside.after_optimizations-buffer-assignment.txt");
  fs::create_directory_symlink(tmp_ / "outside", run + "/outside_dir");
  {
    WithoutFileCapabilities nocap;
    std::printf("dropped=%d\n", nocap.dropped());
    ingest::IngestSummary s = Ingest(run);
    std::printf("files=%lld errors=%zu\n", (long long)s.files, s.errors.size());
    for (auto& e : s.errors) std::printf("  ERR %s: %s\n", e.path.c_str(), e.reason.c_str());
  }
  ::chmod((run + "/lockeddir").c_str(), 0755);
  SQLite::Database db = Db();
  SQLite::Statement q(db, "SELECT path, verdict, reason FROM dump_files f JOIN runs r USING(run_id) WHERE r.name='fs'");
  while (q.executeStep()) std::printf("ROW %s %s %s\n", q.getColumn(0).getString().c_str(), q.getColumn(1).getString().c_str(), q.getColumn(2).isNull() ? "" : q.getColumn(2).getString().c_str());
  fs::create_symlink("selfloop", tmp_ / "selfloop");
  auto db2 = store::Database::Open(db_path_);
  store::RunWriter w(db2.value().get());
  ingest::DumpIngester ing(&w);
  auto r = ing.Ingest(tmp_ / "selfloop", {});
  std::printf("selfloop: %s\n", r.status().ToString().c_str());
  ExpectNeighbourIngestedAndEarlierUntouched("fs");
}

TEST_F(BadInput, ObserveArchives) {
  std::string s000 = ReadFile(SeedFile("000"));
  std::string s002 = ReadFile(SeedFile("002"));
  auto gz = [&](const std::string& name, const std::string& bytes) {
    std::string path = tmp_ / name;
    WriteFile(path.substr(0, path.size() - 3), bytes);
    EXPECT_EQ(std::system(("gzip -n -f " + path.substr(0, path.size() - 3)).c_str()), 0);
    return path;
  };
  {
    TarBuilder t;
    t.Add(std::string("liar/") + kNeighbourName, s002);
    t.Add("liar/module_0005.liar.after_optimizations-buffer-assignment.txt", s000.substr(0, 4096), '0', "", int64_t{1} << 30);
    std::string p = gz("liar.tar.gz", t.Unfinished());
    ingest::IngestSummary s = Ingest(p);
    std::printf("liar: files=%lld\n", (long long)s.files);
    for (auto& e : s.errors) std::printf("  ERR %s: %s\n", e.path.c_str(), e.reason.c_str());
  }
  {
    TarBuilder t;
    t.Add(std::string("short/") + kNeighbourName, s002);
    t.Add("short/module_0005.short.after_optimizations-buffer-assignment.txt", s000, '0', "", 100);
    std::string p = gz("short.tar.gz", t.Finish());
    ingest::IngestSummary s = Ingest(p);
    std::printf("short: files=%lld\n", (long long)s.files);
    for (auto& e : s.errors) std::printf("  ERR %s: %s\n", e.path.c_str(), e.reason.c_str());
  }
  {
    TarBuilder t;
    t.Add(std::string("isize/") + kNeighbourName, s002);
    std::string p = gz("isize.tar.gz", t.Finish());
    std::string bytes = ReadFile(p);
    bytes[bytes.size() - 1] ^= 0x55;
    WriteFile(p, bytes);
    ingest::IngestSummary s = Ingest(p);
    std::printf("isize: files=%lld\n", (long long)s.files);
    for (auto& e : s.errors) std::printf("  ERR %s: %s\n", e.path.c_str(), e.reason.c_str());
  }
  {
    TarBuilder t;
    t.Add(std::string("evil/") + kNeighbourName, s002);
    t.Add("../escape-buffer-assignment.txt", s000);
    t.Add("evil/../../escape2-buffer-assignment.txt", s000);
    t.Add("/tmp/xladb-abs-buffer-assignment.txt", s000);
    t.Add("evil/module_0006.symlink.after_optimizations-buffer-assignment.txt", "", '2', "/etc/passwd");
    t.Add("evil/module_0007.hardlink.after_optimizations-buffer-assignment.txt", "", '1', "/etc/passwd");
    t.Add("evil/module_0008.dirlink.after_optimizations-buffer-assignment.txt", "", '2', "../../..");
    std::string p = gz("evil.tar.gz", t.Finish());
    ingest::IngestSummary s = Ingest(p);
    std::printf("evil: files=%lld\n", (long long)s.files);
    for (auto& e : s.errors) std::printf("  ERR %s: %s\n", e.path.c_str(), e.reason.c_str());
    SQLite::Database db = Db();
    SQLite::Statement q(db, "SELECT path, verdict, reason FROM dump_files f JOIN runs r USING(run_id) WHERE r.name='evil'");
    while (q.executeStep()) std::printf("ROW %s %s %s\n", q.getColumn(0).getString().c_str(), q.getColumn(1).getString().c_str(), q.getColumn(2).isNull() ? "" : q.getColumn(2).getString().c_str());
  }
  SQLite::Database db = Db();
  SQLite::Statement q(db, "SELECT r.name, path, verdict, reason, f.size_bytes FROM dump_files f JOIN runs r USING(run_id) WHERE r.name IN ('short','isize','liar')");
  while (q.executeStep()) std::printf("ROW %s %s %s %s %lld\n", q.getColumn(0).getString().c_str(), q.getColumn(1).getString().c_str(), q.getColumn(2).getString().c_str(), q.getColumn(3).isNull() ? "" : q.getColumn(3).getString().c_str(), (long long)q.getColumn(4).getInt64());
  OBSERVE("short", "short/module_0005.short.after_optimizations-buffer-assignment.txt");
}

TEST_F(BadInput, Observe100k) {
  std::string run = NewRun("many_files");
  auto t0 = std::chrono::steady_clock::now();
  for (int d = 0; d < 100; ++d) {
    std::string sub = run + "/d" + std::to_string(d);
    fs::create_directories(sub);
    for (int i = 0; i < 1000; ++i) {
      std::string p = sub + "/f" + std::to_string(i) + ".txt";
      int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::write(fd, "x\n", 2);
      ::close(fd);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  rusage ru; getrusage(RUSAGE_SELF, &ru); long before = ru.ru_maxrss;
  ingest::IngestSummary s = Ingest(run);
  auto t2 = std::chrono::steady_clock::now();
  getrusage(RUSAGE_SELF, &ru);
  std::printf("100k: make %.2fs ingest %.2fs maxrss %ld -> %ld KB files=%lld\n", std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(), before, ru.ru_maxrss, (long long)s.files);
  for (auto& [k, v] : s.files_by_verdict) std::printf("  %s=%lld\n", k.c_str(), (long long)v);
  ExpectNeighbourIngestedAndEarlierUntouched("many_files");
}

}  // namespace
}  // namespace xladb
