// What the bad-input catalog's tests share (bad_input_test.cc, bad_file_system_test.cc, bad_archive_test.cc):
// the BadInput fixture (a store holding the seed run, a folder holding the bad input beside a good
// neighbour, and the three checks every case makes), a tar builder that can lie, a writer that interferes,
// and reading the store back. docs/RELIABILITY.md lists the cases; keep the two in step.
#ifndef XLADB_TESTS_STORE_BAD_INPUT_FIXTURE_H_
#define XLADB_TESTS_STORE_BAD_INPUT_FIXTURE_H_

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
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ingest/dump_ingester.h"
#include "store/facts/store_tables.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/peak_rss.h"
#include "tests/store/test_dirs.h"

namespace xladb::testing {

namespace fs = std::filesystem;

// The good neighbour every bad folder holds: seed 002 under a realistic name. Its numbers, counted from the
// dump: 14 `allocation N:` headers, 24 ` value:` lines, the peak list `Live ranges at 12 (peak)` whose last
// cumulative is 184680476 bytes, and 18 BufferLiveRange lines.
inline constexpr char kNeighbourName[] = "module_0002.jit_train_step.after_optimizations-buffer-assignment.txt";
// Seed 000 (jit_splash_attention_kernel): 8 allocations, 11 values, `Total bytes used: 18629632`, peak
// 18612288 bytes at time 6 (`Live ranges at 6 (peak)`).

inline int64_t Scalar(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -1;
  return q.getColumn(0).getInt64();
}

inline std::string Text(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement q(db, sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return "<null>";
  return q.getColumn(0).getString();
}

inline std::string Quoted(const std::string& s) {
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
inline constexpr char kSeed000Numbers[] = "8 11 18629632 18612288@6";

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

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_BAD_INPUT_FIXTURE_H_
