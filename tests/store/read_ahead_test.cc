// The pipelined ingest (ingest/read_ahead_queue.h, ingest/file_passes.h): the walk's thread reads, sniffs and
// parses small files ahead while a writer's thread stores them. What it must keep of the one-thread ingest:
// the same rows; a changed file found after unchanged ones (when the walk stopped parsing ahead) parsed whole;
// a file that changes between its two reads an error; a throw on the writer's thread thrown to the caller; a
// stop asked mid-run stopping it with whole files only. Real DumpIngester and RunWriter on SQLite files.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ingest/dump_ingester.h"
#include "ingest/source/dump_source.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/sqlite_scalar.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::SeedFile;
using testing::Scalar;
using testing::TempDir;
using testing::WriteFile;

constexpr char kTrainStep[] = "module_0002.jit_train_step.after_optimizations-buffer-assignment.txt";

// Every row of every table, as text in a stable order, without the columns that hold when the ingest ran.
std::string EveryRow(const std::string& db_path) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  std::vector<std::string> tables;
  {
    SQLite::Statement q(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                            "AND name NOT IN ('schema_meta', 'ingest_jobs') ORDER BY name");
    while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  }
  std::string out;
  for (const std::string& table : tables) {
    std::string columns, order;
    SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid");
    info.bind(1, table);
    for (int n = 1; info.executeStep();) {
      const std::string column = info.getColumn(0).getString();
      if (column.size() > 6 && column.substr(column.size() - 6) == "_at_us") continue;
      columns += (columns.empty() ? "" : ", ") + ("quote(" + column + ")");
      order += (order.empty() ? "" : ", ") + std::to_string(n++);
    }
    SQLite::Statement rows(db, "SELECT " + columns + " FROM " + table + " ORDER BY " + order);
    out += "## " + table + "\n";
    while (rows.executeStep()) {
      for (int c = 0; c < rows.getColumnCount(); ++c) out += rows.getColumn(c).getString() + "|";
      out += "\n";
    }
  }
  return out;
}

StatusOr<ingest::IngestSummary> Ingest(const std::string& db_path, const std::string& folder, bool read_ahead,
                                       std::function<bool()> should_stop = {}) {
  auto db = store::Database::Open(db_path);
  if (!db.ok()) return db.status();
  store::RunWriter writer(db.value().get());
  ingest::DumpIngester ingester(&writer);
  ingest::IngestOptions options;
  options.run_name = "run";
  options.read_ahead = read_ahead;
  options.should_stop = std::move(should_stop);
  return ingester.Ingest(folder, options);
}

// 40 host folders of the seed run, a module text that is over the read-ahead size (seed 003 with 1.5 MB of
// blank lines: read in place, on the writer's thread, while the walk waits) and a big file not ingested.
void MakeManyFiles(const std::string& dir) {
  for (int host = 0; host < 40; ++host) testing::MakeSeedRun(dir + "/host" + std::to_string(100 + host));
  WriteFile(dir + "/host100/module_0005.jit_big.after_optimizations.txt",
            ReadFile(SeedFile("003")) + std::string(1500000, '\n'));
  WriteFile(dir + "/host120/module_0006.jit_big.thunk_sequence.txt",
            "Thunk sequence:\n" + std::string(1500000, 'x') + "\n");
}

TEST(ReadAhead, StoresWhatOneThreadStores) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: the ingest does not read ahead";
  TempDir tmp;
  MakeManyFiles(tmp / "run");
  auto one = Ingest(tmp / "one.db", tmp / "run", /*read_ahead=*/false);
  auto two = Ingest(tmp / "two.db", tmp / "run", /*read_ahead=*/true);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  // 40 × 6 seed files and the two big ones; 40 × 5 seeds and the big module text are ingested.
  EXPECT_EQ(two->files, 242);
  EXPECT_EQ(two->files_by_verdict["ingested"], 201);
  EXPECT_EQ(two->files_by_verdict["not_ingested"], 41);
  EXPECT_EQ(two->rows, one->rows);
  EXPECT_EQ(two->bytes_read, one->bytes_read);
  const std::string rows = EveryRow(tmp / "two.db");
  EXPECT_EQ(rows, EveryRow(tmp / "one.db"));
  // Seed 002's 14 allocations (its `allocation N:` headers) in each of the 40 hosts: the rows are there.
  EXPECT_EQ(Scalar(tmp / "two.db", "SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) "
                                   "WHERE m.name = 'jit_train_step'"),
            40 * 14);
  EXPECT_EQ(Scalar(tmp / "two.db", "SELECT COUNT(*) FROM dump_files WHERE path LIKE '%jit_big.after_optimizations%' "
                                   "AND verdict = 'ingested'"),
            1);
}

TEST(ReadAhead, AChangedFileAfterUnchangedOnesIsParsedWhole) {
  TempDir tmp;
  const std::string run = tmp / "run";
  for (int host = 0; host < 30; ++host) WriteFile(run + "/host" + std::to_string(100 + host) + "/" + kTrainStep,
                                                  ReadFile(SeedFile("002")));
  ASSERT_TRUE(Ingest(tmp / "s.db", run, true).ok());
  // The last file in the walk's order now holds seed 000: 8 `allocation N:` headers and 11 ` value:` lines.
  WriteFile(run + "/host129/" + kTrainStep, ReadFile(SeedFile("000")));
  auto again = Ingest(tmp / "s.db", run, true);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->files_by_verdict["unchanged"], 29);
  EXPECT_EQ(again->files_by_verdict["ingested"], 1);
  const std::string of_host129 = "FROM module_summary s JOIN modules m USING (module_id) WHERE m.folder = 'host129'";
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT s.allocation_count " + of_host129), 8);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT s.value_count " + of_host129), 11);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT COUNT(*) FROM dump_files WHERE verdict <> 'ingested'"), 0);
}

// A folder source whose entries run an action when they are opened for the n-th time.
class HookedSource : public ingest::DumpSource {
 public:
  explicit HookedSource(std::unique_ptr<ingest::DumpSource> inner) : inner_(std::move(inner)) {}
  void AtOpen(const std::string& path, int nth, std::function<void()> action) { hooks_[path] = {nth, action}; }
  Type type() const override { return inner_->type(); }
  std::string DefaultRunName() const override { return inner_->DefaultRunName(); }
  Status ForEach(const std::function<void(ingest::DumpEntry&)>& visit) override {
    return inner_->ForEach([&](ingest::DumpEntry& entry) {
      auto hook = hooks_.find(entry.path);
      if (hook != hooks_.end()) {
        entry.Open = [open = entry.Open, opens = std::make_shared<int>(0), hook = hook->second]() {
          if (++*opens == hook.first) hook.second();
          return open();
        };
      }
      visit(entry);
    });
  }

 private:
  std::unique_ptr<ingest::DumpSource> inner_;
  std::map<std::string, std::pair<int, std::function<void()>>> hooks_;
};

TEST(ReadAhead, AFileThatChangesBetweenItsTwoReadsIsAnError) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const std::string grows = "module_0021.grows.after_optimizations-buffer-assignment.txt";
  const std::string shrinks = "module_0022.shrinks.after_optimizations-buffer-assignment.txt";
  const std::string vanishes = "module_0023.vanishes.after_optimizations-buffer-assignment.txt";
  for (const std::string& name : {grows, shrinks, vanishes}) WriteFile(run + "/" + name, ReadFile(SeedFile("000")));
  WriteFile(run + "/" + kTrainStep, ReadFile(SeedFile("002")));
  auto folder = ingest::DumpSource::Open(run);
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  HookedSource source(std::move(folder.value()));
  // The second open is the second read, on the walk's thread, after the first read kept the content.
  source.AtOpen(grows, 2, [&] { WriteFile(run + "/" + grows, ReadFile(SeedFile("000")) + "appended line\n"); });
  source.AtOpen(shrinks, 2, [&] { ASSERT_EQ(::truncate((run + "/" + shrinks).c_str(), 1000), 0); });
  source.AtOpen(vanishes, 2, [&] { fs::remove(run + "/" + vanishes); });

  auto db = store::Database::Open(tmp / "s.db");
  ASSERT_TRUE(db.ok());
  ingest::IngestSummary summary;
  {
    store::RunWriter writer(db.value().get());
    ingest::DumpIngester ingester(&writer);
    ingest::IngestOptions options;
    options.run_name = "run";
    auto s = ingester.Ingest(source, run, options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    summary = *s;
  }
  db.value().reset();
  EXPECT_EQ(summary.files_by_verdict["error"], 3);
  EXPECT_EQ(summary.files_by_verdict["ingested"], 1);
  SQLite::Database check(tmp / "s.db", SQLite::OPEN_READONLY);
  for (const std::string& name : {grows, shrinks, vanishes}) {
    SQLite::Statement q(check, "SELECT verdict, reason, (SELECT COUNT(*) FROM allocations a WHERE a.file_id = f.file_id) "
                               "FROM dump_files f WHERE path = ?");
    q.bind(1, name);
    ASSERT_TRUE(q.executeStep()) << name;
    EXPECT_EQ(q.getColumn(0).getString(), "error") << name;
    const std::string reason = q.getColumn(1).getString();
    EXPECT_NE(reason.find(name == vanishes ? "No such file or directory" : "file changed while being read"),
              std::string::npos)
        << name << ": " << reason;
    EXPECT_EQ(q.getColumn(2).getInt64(), 0) << name << ": nothing of a changed file is kept";
  }
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT s.allocation_count FROM module_summary s JOIN modules m USING (module_id) "
                                 "WHERE m.name = 'jit_train_step'"),
            14);
}

// Throws from CommitFile at the n-th file, as a bug in the store would.
class ThrowingWriter : public store::RunWriter {
 public:
  ThrowingWriter(store::Database* db, int at) : RunWriter(db), at_(at) {}
  StatusOr<ingest::FileWriteStats> CommitFile(const ingest::FileOutcome& outcome) override {
    if (++commits_ == at_) throw std::runtime_error("a bug in the store");
    return RunWriter::CommitFile(outcome);
  }

 private:
  int at_, commits_ = 0;
};

TEST(ReadAhead, AThrowOnTheWritersThreadReachesTheCaller) {
  TempDir tmp;
  MakeManyFiles(tmp / "run");
  auto db = store::Database::Open(tmp / "s.db");
  ASSERT_TRUE(db.ok());
  ThrowingWriter writer(db.value().get(), 30);
  ingest::DumpIngester ingester(&writer);
  ingest::IngestOptions options;
  options.run_name = "run";
  // The daemon catches what an ingest throws and fails that job (service/ingest_queue.cc); a throw left on
  // another thread would end the process instead.
  EXPECT_THROW((void)ingester.Ingest(tmp / "run", options), std::runtime_error);
}

TEST(ReadAhead, AStopAskedMidRunStopsItWithWholeFilesAndARerunCompletes) {
  TempDir tmp;
  MakeManyFiles(tmp / "run");
  std::atomic<int> asked{0};
  auto stopped = Ingest(tmp / "s.db", tmp / "run", true, [&] { return ++asked > 60; });
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_TRUE(stopped->interrupted);
  EXPECT_LT(stopped->files, 60);
  EXPECT_GT(stopped->files, 0);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT COUNT(*) FROM dump_files"), stopped->files);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT COUNT(*) FROM module_summary s JOIN modules m USING (module_id) "
                                 "WHERE m.name = 'jit_train_step' AND s.allocation_count <> 14"),
            0);
  auto rest = Ingest(tmp / "s.db", tmp / "run", true);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_FALSE(rest->interrupted);
  EXPECT_EQ(rest->files_by_verdict["unchanged"], stopped->files);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT COUNT(*) FROM dump_files"), 242);
  EXPECT_EQ(Scalar(tmp / "s.db", "SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) "
                                 "WHERE m.name = 'jit_train_step'"),
            40 * 14);
}

}  // namespace
}  // namespace xladb
