// The rows a group's small files hold for the group's end (store/backend/held_bulk_rows.h) through RunWriter,
// on both backends, every file of a test in one group: a file rolled back takes only its own held rows (also
// those a full batch handed over before it failed); a later file of a module wins over an earlier one's held
// rows also when the later file is big (its rows are written as it goes), and when it names a text of 2,100
// bytes no index holds (held all the same); on PostgreSQL a text the server refuses, or a name too long for an
// index (a counter's, a computation's), fails its file, not the group that holds its rows. HeldBulkRows alone: rows held beside a batch
// written at once go with their conflict clause, and a mark truncates. The check that tells a text the server
// refuses agrees with the server.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ingest/records/ingest_target.h"
#include "ingest/records/records.h"
#include "store/backend/bulk_insert.h"
#include "store/backend/database.h"
#include "store/backend/held_bulk_rows.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

// One group for the whole test.
constexpr store::GroupCommit kOneGroup{3600, int64_t{1} << 40, 3600};

class HeldRowsOnBothBackends : public testing::BothBackends {
 public:
  // Each file's path and verdict, a line each, by path.
  static std::string Verdicts(store::Database& db) {
    return testing::Rows(db.connection(), "SELECT path, verdict FROM dump_files ORDER BY path");
  }
  // The writer's run "nightly", begun.
  static int64_t BeginNightly(store::RunWriter& writer) {
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : 0;
  }
  // Writes a file of module `module` whose schedule has times 0..`entries`-1, each naming `instruction`
  // followed by its time, and commits it (or aborts it when `abort`); the commit's status.
  static Status WriteScheduleFile(store::RunWriter& writer, int64_t run, const std::string& path,
                                  const std::string& module, int entries, const std::string& instruction,
                                  int64_t size_bytes = 100, bool abort = false) {
    ingest::FileSpec spec = testing::ModuleFileOf(run, path, "buffer_assignment", path, module);
    spec.size_bytes = size_bytes;
    auto sink = writer.BeginFile(spec);
    if (!sink.ok()) return sink.status();
    if (*sink == nullptr) return Status::Internal("another writer stored " + path);
    for (int t = 0; t < entries; ++t) (*sink)->OnScheduleEntry({t, instruction + std::to_string(t)});
    if (abort) return writer.AbortFile({ingest::FileVerdict::kError, "line 3: a parse error", entries, 0});
    return testing::CommitOrAbort(writer);
  }
};

TEST_F(HeldRowsOnBothBackends, AFileRolledBackTakesOnlyItsOwnHeldRows) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, kOneGroup);
    const int64_t run = BeginNightly(writer);
    ASSERT_NE(run, 0);
    ASSERT_TRUE(WriteScheduleFile(writer, run, "a.txt", "jit_a", 10, "a").ok());
    // More entries than a batch: a full batch's rows are held before the file is aborted.
    const int past_a_batch = static_cast<int>(db->connection().bulk_batch_rows()) + 5;
    ASSERT_TRUE(WriteScheduleFile(writer, run, "b.txt", "jit_b", past_a_batch, "b", 100, /*abort=*/true).ok());
    ASSERT_TRUE(WriteScheduleFile(writer, run, "c.txt", "jit_c", 5, "c").ok());
    ASSERT_TRUE(writer.FinishRun(run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(),
                            "SELECT COUNT(*), SUM(CASE WHEN instruction LIKE 'b%' THEN 1 ELSE 0 END), "
                            "MIN(instruction), MAX(instruction) FROM schedule"),
              "15|0|a0|c4\n");
    EXPECT_EQ(Verdicts(*db),
              "a.txt|ingested\nb.txt|error\nc.txt|ingested\n");
  }
}

TEST_F(HeldRowsOnBothBackends, ALaterFileOfAModuleWinsAlsoWhenItIsBig) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, kOneGroup);
    const int64_t run = BeginNightly(writer);
    ASSERT_NE(run, 0);
    ASSERT_TRUE(WriteScheduleFile(writer, run, "small.txt", "jit_f", 10, "old").ok());
    // Past what the writer holds (a file over 1 MiB): its rows are written as they come.
    const Status big = WriteScheduleFile(writer, run, "big.txt", "jit_f", 8, "new", int64_t{2} << 20);
    ASSERT_TRUE(big.ok()) << big.ToString();
    const Status finished = writer.FinishRun(run, -1);
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    EXPECT_EQ(testing::Rows(db->connection(),
                            "SELECT COUNT(*), SUM(CASE WHEN instruction LIKE 'new%' THEN 1 ELSE 0 END) FROM schedule"),
              "10|8\n");
  }
}

TEST_F(HeldRowsOnBothBackends, OnPostgresqlATextThatIsNotUtf8FailsItsFileNotItsGroup) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    const bool postgresql = db->connection().dialect() == store::SqlDialect::kPostgresql;
    store::RunWriter writer(db, kOneGroup);
    const int64_t run = BeginNightly(writer);
    ASSERT_NE(run, 0);
    ASSERT_TRUE(WriteScheduleFile(writer, run, "a.txt", "jit_a", 3, "a").ok());
    // A lone byte 0xff: SQLite keeps it, PostgreSQL refuses it (the commit fails, the file is aborted).
    const Status bad = WriteScheduleFile(writer, run, "bad.txt", "jit_b", 3, "fusion\xff");
    EXPECT_EQ(bad.ok(), !postgresql) << bad.ToString();
    ASSERT_TRUE(WriteScheduleFile(writer, run, "c.txt", "jit_c", 3, "c").ok());
    const Status finished = writer.FinishRun(run, -1);
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT COUNT(*) FROM schedule"), postgresql ? "6\n" : "9\n");
    EXPECT_EQ(Verdicts(*db),
              std::string("a.txt|ingested\nbad.txt|") + (postgresql ? "error" : "ingested") + "\nc.txt|ingested\n");
  }
}

// A later file of a module whose schedule names an instruction of 2,100 bytes (no index holds the name, so
// the batch is held like any other) beside the held rows of the file that created the module: the later file's
// rows win, on both backends, and the group is whole.
TEST_F(HeldRowsOnBothBackends, ALongTextNoIndexHoldsIsHeldAndTheLaterFileWins) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, kOneGroup);
    const int64_t run = BeginNightly(writer);
    ASSERT_NE(run, 0);
    ASSERT_TRUE(WriteScheduleFile(writer, run, "a.txt", "jit_f", 5, "a").ok());
    const Status later = WriteScheduleFile(writer, run, "b.txt", "jit_f", 5, std::string(2100, 'x'));
    ASSERT_TRUE(later.ok()) << later.ToString();
    ASSERT_TRUE(WriteScheduleFile(writer, run, "c.txt", "jit_c", 3, "c").ok());
    const Status finished = writer.FinishRun(run, -1);
    ASSERT_TRUE(finished.ok()) << finished.ToString();
    EXPECT_EQ(testing::Rows(db->connection(),
                            "SELECT COUNT(*), SUM(CASE WHEN LENGTH(instruction) > 2000 THEN 1 ELSE 0 END) FROM schedule"),
              "8|5\n");
    EXPECT_EQ(Verdicts(*db), "a.txt|ingested\nb.txt|ingested\nc.txt|ingested\n");
  }
}

// HeldBulkRows itself: rows held by an insert without its conflict clause (keys vouched new), then a batch of
// one of those keys written at once: WrittenAtOnce makes the held rows go with the conflict clause, so the
// statement does not fail (the held row, written last, wins); rows held after a mark and truncated to it go.
TEST_F(HeldRowsOnBothBackends, HeldRowsBesideABatchWrittenAtOnceGoWithTheirConflictClause) {
  static const store::BulkInsert kKeyed{"held_t", "k, v", "ON CONFLICT(k) DO UPDATE SET v = excluded.v", 1};
  ASSERT_NE(kKeyed.for_new_keys(), nullptr);
  const std::vector<std::string> texts = {"held", "at once", "dropped"};
  const auto rows = [](std::initializer_list<int64_t> keys, int64_t text) {
    std::vector<store::BulkCell> cells;
    for (int64_t k : keys) {
      cells.push_back({k, store::BulkCell::Kind::kInt});
      cells.push_back({text, store::BulkCell::Kind::kText});
    }
    return cells;
  };
  for (store::SqlConnection* sql : Backends()) {
    SCOPED_TRACE(Name(*sql));
    sql->Exec("CREATE TABLE held_t(k BIGINT PRIMARY KEY, v TEXT NOT NULL)");
    store::HeldBulkRows held;
    held.Hold(*kKeyed.for_new_keys(), kKeyed, rows({1, 2, 3}, 0), texts);
    const store::HeldBulkRows::Mark mark = held.mark();
    held.Hold(*kKeyed.for_new_keys(), kKeyed, rows({4, 5}, 2), texts);
    held.TruncateTo(mark);
    EXPECT_EQ(held.rows(), 3u);
    sql->BeginWrite();
    const std::vector<store::BulkCell> at_once = rows({2}, 1);
    (void)sql->AppendRows(store::BulkRows{kKeyed, at_once, texts});
    held.WrittenAtOnce("held_t");
    held.Write(*sql);
    sql->Exec("COMMIT");
    EXPECT_EQ(testing::Rows(*sql, "SELECT k, v FROM held_t ORDER BY k"), "1|held\n2|held\n3|held\n");
  }
}

// 3,000 letters with no repeats for a compressor to find (xorshift64): no index entry can hold them
// (PostgreSQL's limit is 2,704 bytes).
std::string IncompressibleName() {
  std::string name;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 3000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    name += static_cast<char>('a' + x % 26);
  }
  return name;
}

// Between two small files of its group, a file whose `records` name a text too long for `table`'s index:
// on PostgreSQL that file fails (its batch is written at once, not held) and the group is stored; on SQLite
// the file is stored with `rows` rows in `table`.
void ExpectANameTooLongForAnIndexFailsOnlyItsFile(store::Database* db, const std::string& table, int rows,
                                                  const std::function<void(ingest::RecordSink&)>& records) {
  SCOPED_TRACE(table);
  const bool postgresql = db->connection().dialect() == store::SqlDialect::kPostgresql;
  store::RunWriter writer(db, kOneGroup);
  auto run = writer.BeginRun(testing::RunNamed("nightly"));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(HeldRowsOnBothBackends::WriteScheduleFile(writer, *run, "a.txt", "jit_a", 3, "a").ok());
  auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "long.txt", "hlo_module", "p", "jit_p"));
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  records(**sink);
  const Status long_name = testing::CommitOrAbort(writer);
  EXPECT_EQ(long_name.ok(), !postgresql) << long_name.ToString();
  ASSERT_TRUE(HeldRowsOnBothBackends::WriteScheduleFile(writer, *run, "c.txt", "jit_c", 3, "c").ok());
  const Status finished = writer.FinishRun(*run, -1);
  ASSERT_TRUE(finished.ok()) << finished.ToString();
  EXPECT_EQ(testing::Rows(db->connection(), "SELECT COUNT(*) FROM schedule"), "6\n");
  EXPECT_EQ(testing::Rows(db->connection(), "SELECT COUNT(*) FROM " + table),
            std::to_string(postgresql ? 0 : rows) + "\n");
  EXPECT_EQ(testing::Rows(db->connection(), "SELECT path, verdict FROM dump_files ORDER BY path"),
            std::string("a.txt|ingested\nc.txt|ingested\nlong.txt|") + (postgresql ? "error" : "ingested") + "\n");
}

TEST_F(HeldRowsOnBothBackends, OnPostgresqlACounterNameTooLongForAnIndexFailsItsFileNotItsGroup) {
  const std::string name = IncompressibleName();
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    ExpectANameTooLongForAnIndexFailsOnlyItsFile(db, "utilization_counters", 2, [&](ingest::RecordSink& sink) {
      sink.OnUtilizationCounter({0, "fusion.1", name, 3, 4, "0.75", 0.75});
      sink.OnUtilizationCounter({0, "fusion.1", "VMEM_SPILL_COUNT", 1, 2, "0.5", 0.5});
    });
  }
}

TEST_F(HeldRowsOnBothBackends, OnPostgresqlAComputationNameTooLongForAnIndexFailsItsFileNotItsGroup) {
  const std::string name = IncompressibleName();
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    ExpectANameTooLongForAnIndexFailsOnlyItsFile(db, "computations", 2, [&](ingest::RecordSink& sink) {
      sink.OnComputation({name, false, 1, ""});
      sink.OnComputation({"main", true, 2, ""});
    });
  }
}

// The check that decides whether a batch's rows may be held (store::IsValidUtf8) against PostgreSQL's own
// judgement of each byte string as text.
TEST_F(HeldRowsOnBothBackends, TheUtf8CheckAgreesWithPostgresql) {
  const char* const cases[] = {
      "",         "plain",        "\xC3\xA9",       "\xE2\x82\xAC",   "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
      "\xC3",     "a\xE2\x82",     "\xC0\xAF",       "\xC1\xBF",       "\xE0\x80\xAF",     "\xE0\xA0\x80",
      "\xED\x9F\xBF", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF",
      "\x80",     "ok\xC3\xA9\x80", "\xE2\x28\xA1",    "\xEF\xBF\xBF"};
  store::SqlConnection& sql = postgres_->connection();
  auto length = sql.Prepare("SELECT length(CAST(? AS TEXT))");
  for (const char* text : cases) {
    bool accepted = true;
    try {
      length->Reset();
      length->Bind(1, std::string_view(text));
      (void)length->Step();
    } catch (const store::SqlError&) {
      accepted = false;
    }
    length->Reset();
    EXPECT_EQ(store::IsValidUtf8(text), accepted) << ::testing::PrintToString(std::string(text));
  }
}

}  // namespace
}  // namespace xladb
