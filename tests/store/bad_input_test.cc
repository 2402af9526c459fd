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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/facts/store_tables.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
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

// A RunWriter that changes files under the ingester at chosen moments of their ingest: between the hash pass
// and the parse pass (in BeginFile), or during the parse (at the file's first allocation record). For files
// that grow, shrink or vanish while xladb reads them, deterministically (no timing games).
class InterferingWriter : public store::RunWriter {
 public:
  enum class When { kBetweenPasses, kDuringParse };
  explicit InterferingWriter(store::Database* db) : RunWriter(db) {}

  // Runs `action` once, at `when` of the ingest of the file at run-relative `path`.
  void At(const std::string& path, When when, std::function<void()> action) {
    hooks_.push_back({path, when, std::move(action), false});
  }
  int fired() const {
    int n = 0;
    for (const Hook& h : hooks_) n += h.fired;
    return n;
  }

  StatusOr<ingest::RecordSink*> BeginFile(const ingest::FileSpec& spec) override {
    current_ = spec.path;
    Fire(When::kBetweenPasses);
    StatusOr<ingest::RecordSink*> sink = RunWriter::BeginFile(spec);
    if (!sink.ok()) return sink;
    watcher_ = std::make_unique<Watcher>(this, *sink);
    return watcher_.get();
  }

 private:
  // The file's sink, watched for its first allocation record.
  class Watcher : public ingest::ForwardingSink {
   public:
    Watcher(InterferingWriter* writer, ingest::RecordSink* next) : ForwardingSink(next), writer_(writer) {}
    void OnAllocation(ingest::AllocationRecord&& r) override {
      writer_->Fire(When::kDuringParse);
      ForwardingSink::OnAllocation(std::move(r));
    }

   private:
    InterferingWriter* writer_;
  };

  struct Hook {
    std::string path;
    When when;
    std::function<void()> action;
    bool fired;
  };
  void Fire(When when) {
    for (Hook& h : hooks_) {
      if (!h.fired && h.when == when && h.path == current_) {
        h.fired = true;
        h.action();
      }
    }
  }
  std::vector<Hook> hooks_;
  std::string current_;
  std::unique_ptr<Watcher> watcher_;
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
    // 8 + 14 + 26 allocations of seeds 000, 002 and 004.
    ASSERT_NE(earlier_rows_.find("allocations=48 "), std::string::npos) << earlier_rows_;
  }

  // A new run folder `name` holding the good neighbour; returns its path.
  std::string NewRun(const std::string& name) {
    std::string dir = tmp_ / name;
    WriteFile(dir + "/" + kNeighbourName, ReadFile(SeedFile("002")));
    return dir;
  }

  ingest::IngestSummary Ingest(const std::string& path) {
    auto db = store::Database::Open(db_path_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return {};
    store::RunWriter writer(db.value().get());
    return IngestWith(&writer, path);
  }

  ingest::IngestSummary IngestWith(ingest::IngestTarget* target, const std::string& path,
                                   const ingest::IngestOptions& options = {}) {
    ingest::DumpIngester ingester(target);
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
    auto count = [&](const std::string& from_where) {
      return std::to_string(Scalar(db, "SELECT COUNT(*) FROM " + from_where));
    };
    std::string out = "dump_files=" + count("dump_files WHERE run_id = " + run_id) +
                      " modules=" + count("modules WHERE run_id = " + run_id) + " module_summary=" +
                      count("module_summary WHERE module_id IN (SELECT module_id FROM modules WHERE run_id = " +
                            run_id + ")") +
                      " ";
    // Every table a file's rows live in, from the store's own list (a table added there is counted here too).
    std::vector<const char*> tables(std::begin(store::kModuleRowTables), std::end(store::kModuleRowTables));
    tables.insert(tables.end(), std::begin(store::kFileRowTables), std::end(store::kFileRowTables));
    for (const char* t : tables) {
      out += std::string(t) + "=" + count(std::string(t) + " WHERE file_id IN " + files) + " ";
    }
    out += "peak_sum=" + std::to_string(Scalar(db, "SELECT SUM(peak_bytes) FROM module_memory WHERE run_name = " +
                                                       Quoted(run)));
    return out;
  }

  // Checks 2 and 3 of the file comment for run `run`.
  void ExpectNeighbourIngestedAndEarlierUntouched(const std::string& run,
                                                  const std::string& neighbour_path = kNeighbourName) {
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
    EXPECT_EQ(File(run, neighbour_path).verdict, "ingested") << run;
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

  // Issues recorded for one file, as "severity: reason" lines.
  std::string Issues(const std::string& run, const std::string& path) {
    SQLite::Database db = Db();
    SQLite::Statement q(db, "SELECT i.severity, i.reason FROM ingest_issues i JOIN dump_files f USING(file_id) "
                            "JOIN runs r USING(run_id) WHERE r.name = ? AND f.path = ? ORDER BY i.issue_id");
    q.bind(1, run);
    q.bind(2, path);
    std::string out;
    while (q.executeStep()) out += q.getColumn(0).getString() + ": " + q.getColumn(1).getString() + "\n";
    return out;
  }

  // module_memory numbers of module `module` in run `run`: "allocations values total peak@time".
  std::string ModuleNumbers(const std::string& run, const std::string& module) {
    SQLite::Database db = Db();
    const std::string where = " FROM module_memory WHERE run_name = " + Quoted(run) + " AND module_name = " +
                              Quoted(module);
    return std::to_string(Scalar(db, "SELECT allocations" + where)) + " " +
           std::to_string(Scalar(db, "SELECT value_count" + where)) + " " +
           std::to_string(Scalar(db, "SELECT total_bytes" + where)) + " " +
           std::to_string(Scalar(db, "SELECT peak_bytes" + where)) + "@" +
           std::to_string(Scalar(db, "SELECT peak_time" + where));
  }

  TempDir tmp_;
  std::string db_path_;
  std::string earlier_rows_;
};

// Seed 000's module_memory numbers, counted from the dump (see testing::kSeed000FileName).
constexpr char kSeed000Numbers[] = "8 11 18629632 18612288@6";

// A folder for many small files: on tmpfs (/dev/shm) when there is one, because creating 100,000 files on the
// CI machines' ext4 takes longer than the whole ingest; else under $TMPDIR. Removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                        ? fs::path("/dev/shm")
                        : fs::temp_directory_path();
    std::string tmpl = (base / "xladb_scratch_XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Resident memory of this process from /proc/self/status, in KiB: "VmRSS" now, or "VmHWM" (the peak since the
// last ResetPeakRss()); -1 when /proc cannot say.
int64_t ProcStatusKiB(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::strtoll(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return -1;
}
// Resets VmHWM to the current RSS (Linux 4.0+), so a test measures its own peak.
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// ---------------------------------------------------------------------------------------------------------
// Empty, garbage, NUL bytes

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

TEST_F(BadInput, BinaryGarbageIsAnErrorUnderADumpNameAndNotIngestedElsewhere) {
  std::string run = NewRun("garbage");
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>(x >> 24);
  }
  const std::string claimed_path = "module_0009.garbage.after_optimizations-buffer-assignment.txt";
  WriteFile(run + "/" + claimed_path, garbage);
  WriteFile(run + "/blob.bin", garbage);
  WriteFile(run + "/nuls.txt", std::string(4096, '\0'));
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files_by_verdict["error"], 1);
  FileRow claimed = File("garbage", claimed_path);
  EXPECT_EQ(claimed.verdict, "error");
  EXPECT_NE(claimed.reason.find("name says a buffer assignment"), std::string::npos) << claimed.reason;
  EXPECT_NE(claimed.reason.find("binary data"), std::string::npos) << claimed.reason;
  EXPECT_EQ(ModuleAllocations("garbage", claimed_path), 0);
  for (const char* path : {"blob.bin", "nuls.txt"}) {
    FileRow row = File("garbage", path);
    EXPECT_EQ(row.verdict, "not_ingested") << path;
    EXPECT_EQ(row.reason, "binary data") << path;
  }
  ExpectNeighbourIngestedAndEarlierUntouched("garbage");
}

TEST_F(BadInput, NulBytesAreAnErrorInTheHeadAndAWarningPastIt) {
  std::string run = NewRun("nul");
  // NULs inside the `Total bytes used:` line of seed 000, within the 64 KiB the sniffer reads.
  std::string seed = ReadFile(SeedFile("000"));
  size_t at = seed.find("Total bytes used: ");
  ASSERT_NE(at, std::string::npos);
  seed.insert(at + 20, std::string(3, '\0'));
  WriteFile(run + "/" + testing::kSeed000FileName, seed);
  // A zero-filled tail, as a crash leaves in a preallocated file: seed 003 (HLO text, 79 instructions) made
  // longer than the sniffed head by a 100 KB backend_config, then 4096 NULs and no final newline.
  std::string hlo = ReadFile(SeedFile("003"));
  const std::string anchor = "copy(%input.2)";
  at = hlo.find(anchor);
  ASSERT_NE(at, std::string::npos);
  hlo.insert(at + anchor.size(), ", backend_config=\"" + std::string(100000, 'b') + "\"");
  WriteFile(run + "/module_0004.zero_tail.after_optimizations.txt", hlo + std::string(4096, '\0'));
  Ingest(run);

  FileRow head = File("nul", testing::kSeed000FileName);
  EXPECT_EQ(head.verdict, "error");
  EXPECT_NE(head.reason.find("binary data"), std::string::npos) << head.reason;
  EXPECT_EQ(ModuleAllocations("nul", testing::kSeed000FileName), 0);

  FileRow tail = File("nul", "module_0004.zero_tail.after_optimizations.txt");
  EXPECT_EQ(tail.verdict, "ingested") << tail.reason;
  std::string issues = Issues("nul", "module_0004.zero_tail.after_optimizations.txt");
  EXPECT_NE(issues.find("warning: the file holds NUL bytes"), std::string::npos) << issues;
  EXPECT_NE(issues.find("warning: truncated file: no newline at the end"), std::string::npos) << issues;
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instructions WHERE module_id = " + std::to_string(tail.module_id)), 79);
  ExpectNeighbourIngestedAndEarlierUntouched("nul");
}

// ---------------------------------------------------------------------------------------------------------
// Truncation: seeds 000 and 002 cut at every line boundary (every section boundary among them) and in the middle
// of every line: 742 files in one folder.

TEST_F(BadInput, TruncatedAtEveryLineBoundaryAndMidLine) {
  std::string run = NewRun("cuts");
  struct Cut {
    std::string path;
    std::string prefix;
    bool mid_line;
  };
  std::vector<Cut> cuts;
  int id = 1000;
  for (const char* seed_no : {"000", "002"}) {
    const std::string seed = ReadFile(SeedFile(seed_no));
    ASSERT_FALSE(seed.empty());
    for (size_t start = 0; start < seed.size();) {
      size_t nl = seed.find('\n', start);
      if (nl == std::string::npos) nl = seed.size();
      std::vector<std::pair<size_t, bool>> points;
      if (start > 0) points.push_back({start, false});
      if (nl - start >= 2) points.push_back({start + (nl - start) / 2, true});
      for (auto [k, mid] : points) {
        std::string path = "module_" + std::to_string(++id) + ".cut_" + seed_no + "_" + std::to_string(k) +
                           ".after_optimizations-buffer-assignment.txt";
        WriteFile(run + "/" + path, seed.substr(0, k));
        cuts.push_back({path, seed.substr(0, k), mid});
      }
      start = nl + 1;
    }
  }
  ASSERT_EQ(cuts.size(), 742u);
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files, 743);
  // Only the two cuts inside the very first line (`BufferAs`) are not recognisable as buffer assignments.
  EXPECT_EQ(s.files_by_verdict["error"], 2);
  EXPECT_EQ(s.files_by_verdict["ingested"], 741);

  SQLite::Database db = Db();
  int unterminated_warnings = 0;
  for (const Cut& cut : cuts) {
    SCOPED_TRACE(cut.path);
    FileRow row = File("cuts", cut.path);
    // Complete `allocation N:` header lines in the prefix: a truncated file stores exactly those, never a
    // header cut short (it lacks its final ':' and is skipped with a warning).
    int complete_headers = 0;
    for (size_t pos = 0; (pos = cut.prefix.find("\nallocation ", pos)) != std::string::npos; ++pos) {
      if (cut.prefix.find('\n', pos + 1) != std::string::npos) ++complete_headers;
    }
    if (row.verdict == "error") {
      EXPECT_NE(row.reason.find("name says a buffer assignment"), std::string::npos) << row.reason;
      EXPECT_LT(cut.prefix.size(), sizeof("BufferAssignment:"));
      EXPECT_EQ(ModuleAllocations("cuts", cut.path), 0);
      continue;
    }
    ASSERT_EQ(row.verdict, "ingested") << row.reason;
    EXPECT_EQ(ModuleAllocations("cuts", cut.path), complete_headers);
    // A cut inside a line is always flagged; a cut at a line boundary is a shorter file that may be valid.
    const bool flagged = Scalar(db, "SELECT COUNT(*) FROM ingest_issues i JOIN dump_files f USING(file_id) "
                                    "WHERE f.path = " + Quoted(cut.path) +
                                    " AND i.severity = 'warning' AND i.reason LIKE 'truncated file: no newline%'") == 1;
    EXPECT_EQ(flagged, cut.mid_line);
    unterminated_warnings += flagged;
  }
  // 368 mid-line cuts (seed 000 has 120 lines of 2+ bytes, seed 002 248), less the two inside `BufferAssignment:`.
  EXPECT_EQ(unterminated_warnings, 366);
  ExpectNeighbourIngestedAndEarlierUntouched("cuts");
}

// ---------------------------------------------------------------------------------------------------------
// Long lines, odd numbers, odd bytes

TEST_F(BadInput, A64MiBLineIsReadWholeAndA64MiBFirstLineIsRefusedBriefly) {
  std::string run = NewRun("long");
  // Seed 003 (HLO text) with a 64 MiB backend_config on `ROOT %copy.4 = … copy(%input.2)`: one 64 MiB line.
  std::string hlo = ReadFile(SeedFile("003"));
  const std::string anchor = "copy(%input.2)";
  size_t at = hlo.find(anchor);
  ASSERT_NE(at, std::string::npos);
  const std::string config = ", backend_config=\"" + std::string(size_t{64} << 20, 'x') + "\"";
  hlo.insert(at + anchor.size(), config);
  size_t line_start = hlo.rfind('\n', at) + 1;
  const std::string root_prefix = "  ROOT ";
  ASSERT_EQ(hlo.compare(line_start, root_prefix.size(), root_prefix), 0);
  const size_t stored_text_size = hlo.find('\n', at) - line_start - root_prefix.size();
  WriteFile(run + "/module_0004.long_line.after_optimizations.txt", hlo);
  // 64 MiB of one unterminated line under a buffer-assignment name.
  WriteFile(run + "/module_0005.one_line.after_optimizations-buffer-assignment.txt",
            std::string(size_t{64} << 20, 'A'));

  ResetPeakRss();
  const int64_t rss_before = ProcStatusKiB("VmRSS");
  auto start = std::chrono::steady_clock::now();
  Ingest(run);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t growth = ProcStatusKiB("VmHWM") - rss_before;
  RecordProperty("ingest_seconds", std::to_string(seconds));
  RecordProperty("peak_rss_growth_kib", std::to_string(growth));
  std::printf("64 MiB line: ingested in %.1f s; peak RSS %lld KiB above the start\n", seconds,
              static_cast<long long>(growth));
  // The line reader's buffer (128 MiB for a 64 MiB line) plus a few copies of the line on its way to SQLite;
  // bounded by the line, not the folder.
  EXPECT_LT(growth, 1024 * 1024);

  FileRow long_line = File("long", "module_0004.long_line.after_optimizations.txt");
  EXPECT_EQ(long_line.verdict, "ingested") << long_line.reason;
  SQLite::Database db = Db();
  const std::string module = std::to_string(long_line.module_id);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instructions WHERE module_id = " + module), 79);
  EXPECT_EQ(Scalar(db, "SELECT length(t.text) FROM instructions i JOIN long_text_details t ON t.text_id = i.text_id "
                       "WHERE i.name = 'copy.4' AND i.module_id = " + module),
            static_cast<int64_t>(stored_text_size));

  FileRow one_line = File("long", "module_0005.one_line.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(one_line.verdict, "error");
  EXPECT_NE(one_line.reason.find("unrecognised content"), std::string::npos) << one_line.reason.substr(0, 300);
  EXPECT_LT(one_line.reason.size(), 400u) << "the reason quotes the 64 MiB line";
  ExpectNeighbourIngestedAndEarlierUntouched("long");
}

TEST_F(BadInput, NumbersPastInt64AndNegativeSizesAreReportedAndTheirLinesSkipped) {
  std::string run = NewRun("numbers");
  const std::string seed = ReadFile(SeedFile("000"));
  // `allocation 0: size 512, constant:` is seed 000's line 2; its value line 3 is `(size=512,offset=0)`.
  auto with = [&](const std::string& find, size_t skip, size_t erase, const std::string& insert) {
    std::string t = seed;
    size_t at = t.find(find);
    EXPECT_NE(at, std::string::npos) << find;
    t.replace(at + skip, erase, insert);
    return t;
  };
  const std::string huge_alloc = "module_0011.huge_alloc.after_optimizations-buffer-assignment.txt";
  const std::string huge_total = "module_0012.huge_total.after_optimizations-buffer-assignment.txt";
  const std::string neg_alloc = "module_0013.neg_alloc.after_optimizations-buffer-assignment.txt";
  const std::string neg_value = "module_0014.neg_value.after_optimizations-buffer-assignment.txt";
  WriteFile(run + "/" + huge_alloc, with("allocation 0: size 512,", 19, 3, "99999999999999999999"));
  WriteFile(run + "/" + huge_total, with("Total bytes used: 18629632", 18, 8, "99999999999999999999999"));
  WriteFile(run + "/" + neg_alloc, with("allocation 0: size 512,", 19, 0, "-"));
  WriteFile(run + "/" + neg_value, with("(size=512,", 6, 0, "-"));
  Ingest(run);

  for (const std::string& path : {huge_alloc, huge_total, neg_alloc, neg_value}) {
    EXPECT_EQ(File("numbers", path).verdict, "ingested") << path;
  }
  // The allocation line is skipped (7 of 8 stored) and the total no longer adds up: both said.
  std::string issues = Issues("numbers", huge_alloc);
  EXPECT_NE(issues.find("invariant: allocation size 99999999999999999999 does not fit in int64; line skipped"),
            std::string::npos)
      << issues;
  EXPECT_NE(issues.find("invariant: Total bytes used 18629632 but the 7 allocation sizes sum to 18629120"),
            std::string::npos)
      << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "huge_alloc"), "7 11 18629632 18612288@6");
  issues = Issues("numbers", neg_alloc);
  EXPECT_NE(issues.find("invariant: allocation size -512 is negative; line skipped"), std::string::npos) << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "neg_alloc"), "7 11 18629632 18612288@6");
  // The unreadable total is left unknown (NULL), not stored as a wrong number.
  issues = Issues("numbers", huge_total);
  EXPECT_NE(issues.find("Total bytes used 99999999999999999999999 does not fit in int64; line skipped"),
            std::string::npos)
      << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "huge_total"), "8 11 -1 18612288@6");
  issues = Issues("numbers", neg_value);
  EXPECT_NE(issues.find("invariant: value size -512 is negative; line skipped"), std::string::npos) << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "neg_value"), kSeed000Numbers);
  ExpectNeighbourIngestedAndEarlierUntouched("numbers");
}

TEST_F(BadInput, InvalidUtf8IsStoredByteForByte) {
  std::string run = NewRun("utf8");
  std::string seed = ReadFile(SeedFile("000"));
  size_t at = seed.find("op_name=\"");
  ASSERT_NE(at, std::string::npos);
  seed.insert(at + 9, "\xff\xfe\xc3\x28");  // two bytes never valid in UTF-8, then a broken 2-byte sequence
  WriteFile(run + "/" + std::string(testing::kSeed000FileName), seed);
  Ingest(run);
  FileRow row = File("utf8", testing::kSeed000FileName);
  EXPECT_EQ(row.verdict, "ingested");
  EXPECT_EQ(ModuleNumbers("utf8", "jit_splash_attention_kernel"), kSeed000Numbers);
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instruction_details WHERE module_id = " + std::to_string(row.module_id) +
                           " AND instr(op_name, CAST(X'FFFEC328' AS TEXT)) = 1"),
            1);
  ExpectNeighbourIngestedAndEarlierUntouched("utf8");
}

TEST_F(BadInput, CrlfCopyGivesTheSameNumbersAsTheOriginal) {
  std::string run = NewRun("crlf");
  const std::string seed = ReadFile(SeedFile("000"));
  std::string crlf;
  for (char c : seed) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  WriteFile(run + "/module_0001.original.after_optimizations-buffer-assignment.txt", seed);
  WriteFile(run + "/module_0002.crlf_copy.after_optimizations-buffer-assignment.txt", crlf);
  Ingest(run);
  EXPECT_EQ(ModuleNumbers("crlf", "original"), kSeed000Numbers);
  EXPECT_EQ(ModuleNumbers("crlf", "crlf_copy"), kSeed000Numbers);
  SQLite::Database db = Db();
  auto count = [&](const std::string& table, const std::string& module) {
    return Scalar(db, "SELECT COUNT(*) FROM " + table + " WHERE module_id = (SELECT module_id FROM modules WHERE "
                      "name = '" + module + "' AND run_id = (SELECT run_id FROM runs WHERE name = 'crlf'))");
  };
  for (const char* table : {"allocations", "buffer_values", "live_ranges", "instructions", "peak_buffers"}) {
    EXPECT_EQ(count(table, "crlf_copy"), count(table, "original")) << table;
    EXPECT_GT(count(table, "original"), 0) << table;
  }
  // Not a single '\r' reached the stored text.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM buffer_values WHERE instr(instruction, char(13)) > 0 OR "
                       "instr(shape_index, char(13)) > 0"),
            0);
  EXPECT_EQ(Issues("crlf", "module_0002.crlf_copy.after_optimizations-buffer-assignment.txt"),
            Issues("crlf", "module_0001.original.after_optimizations-buffer-assignment.txt"));
  ExpectNeighbourIngestedAndEarlierUntouched("crlf");
}

TEST_F(BadInput, DuplicatedSectionsAreMergedAndFlagged) {
  std::string run = NewRun("dups");
  const std::string seed = ReadFile(SeedFile("000"));
  const size_t values = seed.find("Used values:");
  const size_t live = seed.find("HloLiveRange");
  ASSERT_NE(values, std::string::npos);
  ASSERT_NE(live, std::string::npos);
  // The whole file twice (a log that captured it twice), the Used values section twice, the live range twice.
  WriteFile(run + "/module_0017.whole_twice.after_optimizations-buffer-assignment.txt", seed + seed);
  WriteFile(run + "/module_0018.values_twice.after_optimizations-buffer-assignment.txt",
            seed.substr(0, live) + seed.substr(values, live - values) + seed.substr(live));
  WriteFile(run + "/module_0019.live_range_twice.after_optimizations-buffer-assignment.txt", seed + seed.substr(live));
  Ingest(run);
  for (const char* module : {"whole_twice", "values_twice", "live_range_twice"}) {
    EXPECT_EQ(ModuleNumbers("dups", module), kSeed000Numbers) << module;  // merged by key: nothing counted twice
  }
  // A repeated value block is the same fact again; a repeated file or schedule is flagged.
  EXPECT_EQ(Issues("dups", "module_0018.values_twice.after_optimizations-buffer-assignment.txt"), "");
  std::string issues = Issues("dups", "module_0017.whole_twice.after_optimizations-buffer-assignment.txt");
  EXPECT_NE(issues.find("unknown_line: unrecognised line in peak list: BufferAssignment:"), std::string::npos)
      << issues;
  EXPECT_NE(issues.find("invariant: InstructionSequence entry 8 is printed with time 0"), std::string::npos) << issues;
  issues = Issues("dups", "module_0019.live_range_twice.after_optimizations-buffer-assignment.txt");
  EXPECT_NE(issues.find("invariant: InstructionSequence entry 8 is printed with time 0"), std::string::npos) << issues;
  ExpectNeighbourIngestedAndEarlierUntouched("dups");
}

// ---------------------------------------------------------------------------------------------------------
// The file system: unreadable files and folders, special files, files that change, symlink loops, 100,000 files

TEST_F(BadInput, UnreadableFileAndFolderAreErrorsAndAreIngestedOnceReadable) {
  const std::string locked_file = "module_0006.locked.after_optimizations-buffer-assignment.txt";
  std::string run = NewRun("locked");
  WriteFile(run + "/" + locked_file, ReadFile(SeedFile("000")));
  WriteFile(run + "/sub/module_0007.inside.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")));
  ASSERT_EQ(::chmod((run + "/" + locked_file).c_str(), 0), 0);
  ASSERT_EQ(::chmod((run + "/sub").c_str(), 0), 0);
  ingest::IngestSummary s;
  {
    // Root ignores file modes; the tests run as root in CI containers, so drop the capabilities that let it.
    WithoutFileCapabilities as_a_user;
    if (::geteuid() == 0 && !as_a_user.dropped()) {
      GTEST_SKIP() << "running as root and cannot drop CAP_DAC_OVERRIDE: no way to make a file unreadable here";
    }
    s = Ingest(run);
  }
  EXPECT_EQ(s.files_by_verdict["error"], 2);
  FileRow file = File("locked", locked_file);
  EXPECT_EQ(file.verdict, "error");
  EXPECT_NE(file.reason.find("Permission denied"), std::string::npos) << file.reason;
  EXPECT_NE(file.reason.find(locked_file), std::string::npos) << file.reason;
  FileRow folder = File("locked", "sub");
  EXPECT_EQ(folder.verdict, "error");
  EXPECT_NE(folder.reason.find("cannot read folder"), std::string::npos) << folder.reason;
  EXPECT_NE(folder.reason.find("Permission denied"), std::string::npos) << folder.reason;
  ExpectNeighbourIngestedAndEarlierUntouched("locked");

  // Fixed permissions: the next ingest reads both (the error was recorded under a hash of the reason).
  ASSERT_EQ(::chmod((run + "/" + locked_file).c_str(), 0644), 0);
  ASSERT_EQ(::chmod((run + "/sub").c_str(), 0755), 0);
  s = Ingest(run);
  EXPECT_EQ(s.files_by_verdict["ingested"], 2);
  EXPECT_EQ(ModuleNumbers("locked", "locked"), kSeed000Numbers);
  EXPECT_EQ(ModuleNumbers("locked", "inside"), kSeed000Numbers);
}

TEST_F(BadInput, FifoIsReportedNeverReadAndAFolderNamedLikeADumpIsJustAFolder) {
  std::string run = NewRun("special");
  const std::string fifo = "module_0008.fifo.after_optimizations-buffer-assignment.txt";
  ASSERT_EQ(::mkfifo((run + "/" + fifo).c_str(), 0644), 0);
  fs::create_directories(run + "/module_0009.dir.after_optimizations-buffer-assignment.txt");
  ingest::IngestSummary s = Ingest(run);  // returns: a FIFO with no writer would block a read() forever
  EXPECT_EQ(s.files, 2);
  FileRow row = File("special", fifo);
  EXPECT_EQ(row.verdict, "error");
  EXPECT_NE(row.reason.find("is not a regular file (a FIFO): not read"), std::string::npos) << row.reason;
  EXPECT_EQ(File("special", "module_0009.dir.after_optimizations-buffer-assignment.txt").verdict, "<missing>");
  ExpectNeighbourIngestedAndEarlierUntouched("special");
}

TEST_F(BadInput, FilesThatGrowShrinkOrVanishWhileBeingRead) {
  std::string run = NewRun("changing");
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string grows_between = "module_0021.grows_between.after_optimizations-buffer-assignment.txt";
  const std::string shrinks_between = "module_0022.shrinks_between.after_optimizations-buffer-assignment.txt";
  const std::string vanishes_between = "module_0023.vanishes_between.after_optimizations-buffer-assignment.txt";
  const std::string grows_during = "module_0024.grows_during.after_optimizations-buffer-assignment.txt";
  const std::string vanishes_during = "module_0025.vanishes_during.after_optimizations-buffer-assignment.txt";
  for (const std::string& path : {grows_between, shrinks_between, vanishes_between, grows_during, vanishes_during}) {
    WriteFile(run + "/" + path, seed);
  }
  auto append = [&](const std::string& path) {
    return [full = run + "/" + path] {
      FILE* f = std::fopen(full.c_str(), "ab");
      ASSERT_NE(f, nullptr);
      std::fputs("a line a still-running writer appended\n", f);
      std::fclose(f);
    };
  };
  auto db = store::Database::Open(db_path_);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ingest::IngestSummary s;
  {
    InterferingWriter writer(db.value().get());
    using When = InterferingWriter::When;
    writer.At(grows_between, When::kBetweenPasses, append(grows_between));
    writer.At(shrinks_between, When::kBetweenPasses,
              [&] { ASSERT_EQ(::truncate((run + "/" + shrinks_between).c_str(), 1000), 0); });
    writer.At(vanishes_between, When::kBetweenPasses, [&] { fs::remove(run + "/" + vanishes_between); });
    writer.At(grows_during, When::kDuringParse, append(grows_during));
    writer.At(vanishes_during, When::kDuringParse, [&] { fs::remove(run + "/" + vanishes_during); });
    // One thread, each file read in turn: the hooks act between the target's calls, which a read-ahead ingest
    // makes after both reads (read_ahead_test.cc holds the read-ahead's own check).
    ingest::IngestOptions one_thread;
    one_thread.read_ahead = false;
    s = IngestWith(&writer, run, one_thread);
    EXPECT_EQ(writer.fired(), 5);
  }
  db.value().reset();
  EXPECT_EQ(s.files_by_verdict["error"], 4);
  for (const std::string& path : {grows_between, shrinks_between, grows_during}) {
    FileRow row = File("changing", path);
    EXPECT_EQ(row.verdict, "error") << path;
    EXPECT_NE(row.reason.find("file changed while being read"), std::string::npos) << path << ": " << row.reason;
    EXPECT_EQ(ModuleAllocations("changing", path), 0) << path << ": nothing of a changed file is kept";
  }
  FileRow vanished = File("changing", vanishes_between);
  EXPECT_EQ(vanished.verdict, "error");
  EXPECT_NE(vanished.reason.find("No such file or directory"), std::string::npos) << vanished.reason;
  // Unlinked after it was opened: the open file is still whole, and what was read is consistent.
  EXPECT_EQ(File("changing", vanishes_during).verdict, "ingested");
  EXPECT_EQ(ModuleNumbers("changing", "vanishes_during"), kSeed000Numbers);
  ExpectNeighbourIngestedAndEarlierUntouched("changing");

  // Once the writers are done, the next ingest takes the grown and shrunk files as they now are.
  s = Ingest(run);
  EXPECT_EQ(File("changing", grows_between).verdict, "ingested");
  EXPECT_EQ(File("changing", grows_during).verdict, "ingested");
  EXPECT_EQ(ModuleNumbers("changing", "grows_between"), kSeed000Numbers);
  EXPECT_EQ(File("changing", shrinks_between).verdict, "ingested");
}

TEST_F(BadInput, SymlinkLoopsAndEscapesAreNotFollowed) {
  std::string run = NewRun("links");
  WriteFile(tmp_ / "outside/module_0010.outside.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")));
  fs::create_directory_symlink(".", run + "/loop");
  fs::create_directory_symlink("..", run + "/parent");
  fs::create_symlink("b", run + "/a");
  fs::create_symlink("a", run + "/b");
  fs::create_symlink(tmp_ / "outside/module_0010.outside.after_optimizations-buffer-assignment.txt",
                     run + "/module_0010.outside.after_optimizations-buffer-assignment.txt");
  fs::create_directory_symlink(tmp_ / "outside", run + "/outside_dir");
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files, 1);  // the neighbour; links are neither followed nor listed
  EXPECT_TRUE(s.errors.empty());
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules WHERE name = 'outside'"), 0);
  ExpectNeighbourIngestedAndEarlierUntouched("links");

  // A run path that is itself a symlink loop: a clear error, and nothing is created.
  fs::create_symlink("self", tmp_ / "self");
  auto database = store::Database::Open(db_path_);
  ASSERT_TRUE(database.ok());
  store::RunWriter writer(database.value().get());
  ingest::DumpIngester ingester(&writer);
  auto looped = ingester.Ingest(tmp_ / "self", {});
  ASSERT_FALSE(looped.ok());
  EXPECT_NE(looped.status().message().find("Too many levels of symbolic links"), std::string::npos)
      << looped.status().ToString();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM runs WHERE name = 'self'"), 0);
  EXPECT_EQ(RunRowCounts("earlier"), earlier_rows_);
}

TEST_F(BadInput, AFolderOf100000FilesCompletesInBoundedTimeAndMemory) {
  constexpr int kFolders = 100;
  constexpr int kFilesPerFolder = 1000;
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  const std::string run = (scratch.path() / "hundred_thousand").string();
  WriteFile(run + "/" + kNeighbourName, ReadFile(SeedFile("002")));
  // Tiny files (`x\n`), as hard links of one file: 100,000 directory entries at no cost in tmpfs pages.
  const std::string tiny = (scratch.path() / "tiny.txt").string();
  WriteFile(tiny, "x\n");
  for (int d = 0; d < kFolders; ++d) {
    const std::string folder = run + "/step_" + std::to_string(d);
    fs::create_directories(folder);
    for (int i = 0; i < kFilesPerFolder; ++i) {
      ASSERT_EQ(::link(tiny.c_str(), (folder + "/log_" + std::to_string(i) + ".txt").c_str()), 0) << strerror(errno);
    }
  }
  ResetPeakRss();
  const int64_t rss_before = ProcStatusKiB("VmRSS");
  auto start = std::chrono::steady_clock::now();
  ingest::IngestSummary s = Ingest(run);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t growth = ProcStatusKiB("VmHWM") - rss_before;
  RecordProperty("ingest_seconds", std::to_string(seconds));
  RecordProperty("peak_rss_growth_kib", std::to_string(growth));
  std::printf("100,000 files: ingested in %.1f s; peak RSS %lld KiB above the start\n", seconds,
              static_cast<long long>(growth));

  EXPECT_EQ(s.files, kFolders * kFilesPerFolder + 1);
  EXPECT_EQ(s.files_by_verdict["not_ingested"], kFolders * kFilesPerFolder);
  EXPECT_EQ(s.files_by_verdict["ingested"], 1);
  // Generous bounds that still catch a quadratic walk or per-file state that is never freed: about 6 s and
  // 35 MiB (the sorted list of paths) on a busy 2-core machine in a Debug build. Under ASan the quarantine of
  // freed blocks (256 MiB by default) fills with the per-file allocations and counts as resident.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int64_t kPeakRssBoundKiB = int64_t{1536} * 1024;
#else
  constexpr int64_t kPeakRssBoundKiB = int64_t{512} * 1024;
#endif
  EXPECT_LT(seconds, 120.0);
  EXPECT_LT(growth, kPeakRssBoundKiB);
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM dump_files WHERE run_id = (SELECT run_id FROM runs WHERE name = "
                       "'hundred_thousand')"),
            kFolders * kFilesPerFolder + 1);
  ExpectNeighbourIngestedAndEarlierUntouched("hundred_thousand");
}

// ---------------------------------------------------------------------------------------------------------
// Archives that lie about sizes or reach outside

class BadArchive : public BadInput {
 protected:
  // Writes `tar` gzip-compressed as `name` under the temp folder; returns its path.
  std::string WriteTarGz(const std::string& name, const std::string& tar) {
    std::string tar_path = tmp_ / name.substr(0, name.size() - 3);
    WriteFile(tar_path, tar);
    EXPECT_EQ(std::system(("gzip -n -f " + tar_path).c_str()), 0);
    return tar_path + ".gz";
  }
  bool HasError(const ingest::IngestSummary& s, const std::string& needle) {
    for (const auto& e : s.errors) {
      if (e.reason.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(BadArchive, MemberDeclaringMoreBytesThanTheArchiveHolds) {
  TarBuilder tar;
  tar.Add(std::string("liar/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("liar/module_0005.liar.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")).substr(0, 4096),
          '0', "", int64_t{1} << 30);  // says 1 GiB; the archive ends 4 KiB later
  ingest::IngestSummary s = Ingest(WriteTarGz("liar.tar.gz", tar.Unfinished()));
  FileRow row = File("liar", "liar/module_0005.liar.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(row.verdict, "error");
  EXPECT_NE(row.reason.find("is corrupt or truncated: Truncated tar archive"), std::string::npos) << row.reason;
  EXPECT_EQ(ModuleAllocations("liar", "liar/module_0005.liar.after_optimizations-buffer-assignment.txt"), 0);
  EXPECT_TRUE(HasError(s, "is corrupt: Truncated input file")) << "the archive-level error is returned";
  ExpectNeighbourIngestedAndEarlierUntouched("liar", std::string("liar/") + kNeighbourName);
}

TEST_F(BadArchive, MemberDeclaringFewerBytesThanItHolds) {
  TarBuilder tar;
  tar.Add(std::string("short/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("short/module_0005.short.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")), '0', "",
          100);  // says 100 bytes; the other 60 KB sit where the next header should be
  ingest::IngestSummary s = Ingest(WriteTarGz("short.tar.gz", tar.Finish()));
  // What the header declared is what the member is: 100 bytes, a truncated buffer assignment, flagged so.
  const std::string member = "short/module_0005.short.after_optimizations-buffer-assignment.txt";
  EXPECT_EQ(File("short", member).verdict, "ingested");
  EXPECT_NE(Issues("short", member).find("truncated file: no newline at the end"), std::string::npos);
  // The bytes after it are no member at all: the archive is reported damaged rather than read as if whole.
  EXPECT_TRUE(HasError(s, "is damaged: Damaged tar archive")) << (s.errors.empty() ? "" : s.errors[0].reason);
  ExpectNeighbourIngestedAndEarlierUntouched("short", std::string("short/") + kNeighbourName);
}

TEST_F(BadArchive, ParentAbsoluteAndLinkMembersAreNeverWrittenOrFollowed) {
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string absolute = "/tmp/xladb-bad-input-absolute-buffer-assignment.txt";
  std::error_code ec;
  fs::remove(absolute, ec);
  TarBuilder tar;
  tar.Add(std::string("evil/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("../escape-buffer-assignment.txt", seed);
  tar.Add("evil/../../escape2-buffer-assignment.txt", seed);
  tar.Add(absolute, seed);
  tar.Add("evil/module_0006.symlink.after_optimizations-buffer-assignment.txt", "", '2', "/etc/passwd");
  tar.Add("evil/module_0007.hardlink.after_optimizations-buffer-assignment.txt", "", '1', "/etc/passwd");
  tar.Add("evil/module_0008.dirlink.after_optimizations-buffer-assignment.txt", "", '2', "../../..");
  ingest::IngestSummary s = Ingest(WriteTarGz("evil.tar.gz", tar.Finish()));
  EXPECT_EQ(s.files, 4);  // the neighbour and the three refused members; link members are not listed
  for (const std::string& path : {std::string("../escape-buffer-assignment.txt"),
                                  std::string("evil/../../escape2-buffer-assignment.txt"), absolute}) {
    FileRow row = File("evil", path);
    EXPECT_EQ(row.verdict, "error") << path;
    EXPECT_NE(row.reason.find("is absolute or contains '..': refused, not extracted"), std::string::npos)
        << row.reason;
  }
  // Nothing was written anywhere, and no link was followed.
  EXPECT_FALSE(fs::exists(tmp_.path().parent_path() / "escape-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(tmp_.path().parent_path().parent_path() / "escape2-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "escape-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(absolute));
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules WHERE name IN ('symlink', 'hardlink', 'dirlink')"), 0);
  ExpectNeighbourIngestedAndEarlierUntouched("evil", std::string("evil/") + kNeighbourName);
}

TEST_F(BadArchive, GzipTrailersAreCheckedForSingleFilesButNotInsideTarGz) {
  TarBuilder tar;
  tar.Add(std::string("trailer/") + kNeighbourName, ReadFile(SeedFile("002")));
  std::string path = WriteTarGz("trailer.tar.gz", tar.Finish());
  std::string bytes = ReadFile(path);
  bytes[bytes.size() - 1] ^= 0x55;  // ISIZE, the last 4 bytes: the uncompressed size mod 2^32
  bytes[bytes.size() - 8] ^= 0x55;  // CRC-32, the 4 bytes before it
  WriteFile(path, bytes);
  ingest::IngestSummary s = Ingest(path);
  // libarchive stops at the tar end blocks and never checks the gzip trailer (its gzip filter's
  // consume_trailer() skips it: "XXX TODO: Verify the length and CRC-32"). The deflate stream and the tar
  // framing are intact, so the content is ingested with its exact numbers.
  EXPECT_TRUE(s.errors.empty()) << s.errors[0].reason;
  ExpectNeighbourIngestedAndEarlierUntouched("trailer", std::string("trailer/") + kNeighbourName);

  // A single .gz file is read by zlib, which checks the trailer: a wrong CRC is an error naming it.
  std::string run = NewRun("single_gz");
  const std::string gz_member = std::string(testing::kSeed000FileName) + ".gz";
  WriteFile(run + "/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  ASSERT_EQ(std::system(("gzip -n -f " + run + "/" + testing::kSeed000FileName).c_str()), 0);
  bytes = ReadFile(run + "/" + gz_member);
  bytes[bytes.size() - 8] ^= 0x55;
  WriteFile(run + "/" + gz_member, bytes);
  Ingest(run);
  FileRow row = File("single_gz", gz_member);
  EXPECT_EQ(row.verdict, "error");
  EXPECT_NE(row.reason.find("gzip: incorrect data check"), std::string::npos) << row.reason;
  ExpectNeighbourIngestedAndEarlierUntouched("single_gz");
}

}  // namespace
}  // namespace xladb
