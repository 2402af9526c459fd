// A throw in the middle of a file: a bug, or std::bad_alloc in a parser or a row builder, escapes the ingest
// driver (the daemon catches it and fails that job, service/ingest_queue.cc). What must hold after it:
// no half file is stored, the files stored whole before it are kept, the writer's transaction is not left open
// (on SQLite it holds the write lock; on PostgreSQL the interned rows' shared lock), and the same writer stores
// the next run, and the rerun of this one, whole.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "ingest/dump_ingester.h"
#include "ingest/source/dump_source.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/store/forwarding_target.h"
#include "tests/store/test_dirs.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

// A folder, walked as DumpSource::Open walks it, except that the walk throws std::bad_alloc at its
// `throw_at`th entry, once the files before it are ended (`*ended` of them; at most 10 s).
class ThrowingSource : public ingest::DumpSource {
 public:
  ThrowingSource(std::unique_ptr<DumpSource> folder, int throw_at, const std::atomic<int>* ended)
      : folder_(std::move(folder)), throw_at_(throw_at), ended_(ended) {}
  Type type() const override { return folder_->type(); }
  std::string DefaultRunName() const override { return folder_->DefaultRunName(); }
  Status ForEach(const std::function<void(ingest::DumpEntry&)>& visit) override {
    int seen = 0;
    return folder_->ForEach([&](ingest::DumpEntry& entry) {
      if (++seen == throw_at_) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (*ended_ < throw_at_ - 1 && std::chrono::steady_clock::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        throw std::bad_alloc();
      }
      visit(entry);
    });
  }

 private:
  std::unique_ptr<DumpSource> folder_;
  int throw_at_;
  const std::atomic<int>* ended_;
};

int64_t Count(const std::string& db, const std::string& sql) {
  SQLite::Database c(db, SQLite::OPEN_READONLY);
  return c.execAndGet(sql).getInt64();
}

// The file's verdicts, "path verdict" a line in path order, of run `run`.
std::string Verdicts(const std::string& db, const std::string& run) {
  SQLite::Database c(db, SQLite::OPEN_READONLY);
  SQLite::Statement q(c, "SELECT f.path || ' ' || f.verdict FROM dump_files f JOIN runs r ON r.run_id = f.run_id "
                         "WHERE r.name = ? ORDER BY f.path");
  q.bind(1, run);
  std::string out;
  while (q.executeStep()) out += q.getColumn(0).getString() + "\n";
  return out;
}

int64_t Seed000Allocations(const std::string& db, const std::string& run) {
  return Count(db, "SELECT COUNT(*) FROM allocations a JOIN dump_files f ON f.file_id = a.file_id JOIN runs r ON "
                   "r.run_id = f.run_id WHERE r.name = '" + run + "' AND f.path = '" +
                       testing::kSeed000FileName + "'");
}

// Two runs of the seeds (run-a, run-b) and one writer for all the test's runs, as the daemon's across its jobs.
class ThrowMidFile : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::MakeSeedRun(tmp / "run-a");
    testing::MakeSeedRun(tmp / "run-b");
    auto opened = store::Database::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(opened.value());
    writer.emplace(db.get());
  }

  // The writer holds no transaction: another process may write at once.
  void ExpectNoTransactionHeld() {
    SQLite::Database other(path, SQLite::OPEN_READWRITE);
    EXPECT_NO_THROW(other.exec("BEGIN IMMEDIATE; ROLLBACK")) << "the writer's group was left open";
    EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM dump_files WHERE verdict NOT IN ('ingested', 'not_ingested')"), 0)
        << Verdicts(path, "run-a");
  }
  // The same writer stores run-b whole, then run-a again: its summary. Both runs end alike.
  ingest::IngestSummary IngestRunBThenRunAAgain() {
    ingest::DumpIngester plain(&*writer);
    auto b = plain.Ingest(tmp / "run-b", {});
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_TRUE(b.ok() && b->errors.empty());
    auto a = plain.Ingest(tmp / "run-a", {});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(a.ok() && a->errors.empty());
    EXPECT_EQ(Seed000Allocations(path, "run-a"), 8);  // seed 000: 8 allocations
    EXPECT_EQ(Seed000Allocations(path, "run-b"), 8);
    EXPECT_EQ(Verdicts(path, "run-a"), Verdicts(path, "run-b"));
    EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'ingested'"), 10);
    return a.ok() ? *a : ingest::IngestSummary{};
  }

  testing::TempDir tmp;
  const std::string path = tmp / "x.db";
  std::unique_ptr<store::Database> db;
  std::optional<store::RunWriter> writer;
};

TEST_F(ThrowMidFile, NoHalfFileIsStoredTheLockIsFreedAndTheWriterGoesOn) {
  testing::ThrowingTarget throwing(*writer, testing::kSeed000FileName);
  EXPECT_THROW((void)ingest::DumpIngester(&throwing).Ingest(tmp / "run-a", {}), std::bad_alloc);

  ExpectNoTransactionHeld();
  // Nothing of the file that threw: no row of it, no dump_files row (a rerun reads it again).
  EXPECT_EQ(Seed000Allocations(path, "run-a"), 0);
  EXPECT_EQ(Count(path, std::string("SELECT COUNT(*) FROM dump_files WHERE path = '") + testing::kSeed000FileName +
                            "'"),
            0);
  (void)IngestRunBThenRunAAgain();
}

TEST_F(ThrowMidFile, AThrowOnTheWalksThreadEndsTheRunAndTheWriterGoesOn) {
  testing::ThrowingTarget counting(*writer, /*throw_at=*/"");
  auto folder = ingest::DumpSource::Open(tmp / "run-a");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  ThrowingSource throwing(std::move(folder.value()), /*throw_at=*/4, &counting.files_ended);
  ingest::IngestOptions reading_ahead;
  ASSERT_TRUE(reading_ahead.read_ahead);  // the walk on a thread of its own (on a machine of two cores or more)
  EXPECT_THROW((void)ingest::DumpIngester(&counting).Ingest(throwing, tmp / "run-a", reading_ahead),
               std::bad_alloc);
  EXPECT_EQ(counting.files_ended, 3);

  ExpectNoTransactionHeld();
  // The files before the throw are stored whole, the rest not yet.
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM dump_files"), 3) << Verdicts(path, "run-a");
  EXPECT_EQ(IngestRunBThenRunAAgain().Counted(ingest::FileVerdict::kUnchanged), 3);
}

// A caller that threw and ended nothing (no CommitFile, AbortFile or FinishRun): the writer's next run drops
// the file left open, and stores its own first file, not the old one's verdict under the old run's name.
TEST_F(ThrowMidFile, TheNextRunDropsAFileItsCallerLeftOpen) {
  auto a = writer->BeginRun(testing::RunNamed("a"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto left_open = writer->BeginFile(testing::ModuleFileOf(*a, "m.txt", "buffer_assignment", "h1", "jit_a"));
  ASSERT_TRUE(left_open.ok() && *left_open != nullptr);
  // … the caller threw here.
  auto b = writer->BeginRun(testing::RunNamed("b"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto sink = writer->BeginFile(testing::ModuleFileOf(*b, "m.txt", "buffer_assignment", "h1", "jit_b"));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  ASSERT_NE(*sink, nullptr);
  ingest::FileOutcome ingested;
  ingested.verdict = ingest::FileVerdict::kIngested;
  ASSERT_TRUE(writer->CommitFile(ingested).ok());
  ASSERT_TRUE(writer->FinishRun(*b, -1).ok());
  EXPECT_EQ(Verdicts(path, "a"), "");
  EXPECT_EQ(Verdicts(path, "b"), "m.txt ingested\n");
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM modules"), 1);
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM modules WHERE name = 'jit_b'"), 1);
}

}  // namespace
}  // namespace xladb
