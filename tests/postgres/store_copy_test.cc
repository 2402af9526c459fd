// `xladb copy` (store/copy/store_copy.h): a SQLite store copied into a real PostgreSQL, run by run. The copy holds
// what the dumps say (seed 000's module: 8 allocations, `Total bytes used: 18629632`), every table matches
// its source, a second copy adds only the runs that are new, and a destination that holds another store's
// runs is refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/schema/schema_dialect.h"
#include "store/copy/store_copy.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

class StoreCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    auto db = store::Database::Open(tmp_ / "team.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    sqlite_ = std::move(db.value());
    testing::MakeSeedRun(tmp_ / "nightly-1");
    auto ingested = testing::IngestRun(*sqlite_, tmp_ / "nightly-1", "nightly-1");
    ASSERT_TRUE(ingested.ok()) << ingested.status().ToString();
  }

  // One value of the destination.
  std::string Pg(const std::string& sql) { return pg_.Value(sql); }

  testing::PostgresTestSchema pg_{"store_copy"};
  testing::TempDir tmp_;
  std::unique_ptr<store::Database> sqlite_;
};

TEST_F(StoreCopy, TheCopyHoldsWhatTheDumpsSay) {
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs_copied, 1);
  EXPECT_EQ(report->runs_already_there, 0);
  // Seed 000 (jit_splash_attention_kernel): 8 allocations and `Total bytes used: 18629632`, read through the
  // analysts' view on PostgreSQL.
  const std::string where = " FROM module_memory WHERE module_name = 'jit_splash_attention_kernel'";
  EXPECT_EQ(Pg("SELECT allocations" + where), "8");
  EXPECT_EQ(Pg("SELECT total_bytes" + where), "18629632");
  EXPECT_EQ(Pg("SELECT peak_bytes" + where), "18612288");
  EXPECT_EQ(Pg("SELECT SUM(a.size_bytes) FROM allocations a JOIN modules m USING (module_id) "
               "WHERE m.name = 'jit_splash_attention_kernel' AND m.stage = 'after_optimizations'"),
            "18629632");
  // Every copied table holds as many rows on both sides, and the seed run filled the big ones.
  int64_t rows = 0;
  for (const auto& t : report->tables) {
    EXPECT_EQ(t.destination_rows, t.source_rows) << t.name;
    EXPECT_EQ(t.rows_copied, t.source_rows) << t.name;
    rows += t.rows_copied;
  }
  EXPECT_GT(rows, 100);
  // Ids continue past the copied ones: a new run gets the next id.
  EXPECT_EQ(Pg("INSERT INTO runs(name, run_time_us, run_time_source, created_at_us, updated_at_us) "
               "VALUES ('next', 0, 'flag', 0, 0) RETURNING run_id"),
            "2");
}

// The copied tables are vacuumed and analyzed when the copy returns: pg_class's row estimates (which ANALYZE sets,
// and which are -1 on a table never analyzed or vacuumed) are the copied row counts, and the statistics count a
// VACUUM of each. (Not its effect, all-visible pages: VACUUM cannot mark a page all-visible while a transaction
// that began before the copy's commit runs, such as a test beside this one on the same server.)
TEST_F(StoreCopy, TheCopiedTablesAreVacuumedAndAnalyzed) {
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->tidy_warning, "");
  int checked = 0;
  for (const auto& t : report->tables) {
    if (t.name != "modules" && t.name != "buffer_values" && t.name != "instructions") continue;
    ASSERT_GT(t.destination_rows, 0) << t.name;
    const std::string table = "pg_class WHERE oid = to_regclass('" + t.name + "')";
    EXPECT_EQ(Pg("SELECT reltuples::bigint FROM " + table), std::to_string(t.destination_rows)) << t.name;
    EXPECT_EQ(Pg("SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = to_regclass('" + t.name + "')"), "1")
        << t.name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// A copy whose tidying fails (here VACUUM waits on a lock another session holds, past lock_timeout) is still
// whole: its runs are there and counted, and the report says what was left undone and why.
TEST_F(StoreCopy, ACopyWhoseVacuumFailsIsWholeAndSaysSo) {
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  auto other = store::PostgresConnection::Connect(pg_.uri());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  // SHARE UPDATE EXCLUSIVE: taken by VACUUM and ANALYZE, not by the copy's inserts.
  ASSERT_TRUE((*other)->Exec("BEGIN; LOCK TABLE modules IN SHARE UPDATE EXCLUSIVE MODE").ok());
  ASSERT_TRUE(pg_.connection()->Exec("SET lock_timeout = '200ms'").ok());
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE((*other)->Exec("COMMIT").ok());
  ASSERT_TRUE(pg_.connection()->Exec("RESET lock_timeout").ok());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs_copied, 1);
  EXPECT_NE(report->tidy_warning.find("not vacuumed"), std::string::npos) << report->tidy_warning;
  EXPECT_NE(report->tidy_warning.find("lock"), std::string::npos) << report->tidy_warning;
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM runs"), "2");
  for (const auto& t : report->tables) EXPECT_EQ(t.destination_rows, t.source_rows) << t.name;
}

TEST_F(StoreCopy, AnalystViewsAnswerTheSameOnBothBackends) {
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  for (const char* sql :
       {"SELECT module_name, stage, peak_bytes, total_bytes, allocations, value_count FROM module_memory "
        "ORDER BY module_name, stage, xla_module_id",
        "SELECT module_id, value_id, ordinal, instruction, shape_index FROM value_positions "
        "ORDER BY module_id, value_id, ordinal",
        "SELECT run_name, module_name, kernel, vmem_spills, bundles FROM kernel_spills "
        "ORDER BY module_name, kernel"}) {
    const testing::TextRows sqlite = testing::SqliteRows(SqliteOf(*sqlite_), sql);
    const testing::TextRows postgres = testing::PostgresRows(*pg_.connection(), sql);
    EXPECT_FALSE(sqlite.empty()) << sql;
    EXPECT_EQ(postgres, sqlite) << sql;
  }
}

// REAL columns arrive as the same doubles (17 significant digits on the way). The spill rates are quotients
// computed at ingest (vmem_spills / bundles), with all of a double's digits, unlike the ratios the dump prints.
TEST_F(StoreCopy, RealsArriveBitForBit) {
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  const std::string sql = "SELECT rate FROM (SELECT module_id, kernel, vmem_spill_rate AS rate, 1 AS k "
                          "FROM kernel_spill_summary UNION ALL SELECT module_id, kernel, vmem_fill_rate, 2 "
                          "FROM kernel_spill_summary) r ORDER BY module_id, kernel, k";
  std::vector<double> sqlite;
  SQLite::Statement q(SqliteOf(*sqlite_), sql);
  while (q.executeStep()) sqlite.push_back(q.getColumn(0).getDouble());
  auto pg = pg_.connection()->Query(sql);
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  std::vector<double> postgres;
  for (const auto& r : pg->values) postgres.push_back(std::strtod(r[0]->c_str(), nullptr));
  ASSERT_GT(sqlite.size(), 4u);
  EXPECT_EQ(postgres, sqlite);
  // At least one needs more than 15 significant digits to come back the same.
  EXPECT_NE(std::count_if(sqlite.begin(), sqlite.end(),
                          [](double d) {
                            char text[32];
                            std::snprintf(text, sizeof text, "%.15g", d);
                            return std::strtod(text, nullptr) != d;
                          }),
            0);
}

TEST_F(StoreCopy, CopyingAgainAddsOnlyNewRuns) {
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  auto again = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->runs_copied, 1);
  EXPECT_EQ(again->runs_already_there, 1);
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM runs"), "2");
  for (const auto& t : again->tables) EXPECT_EQ(t.destination_rows, t.source_rows) << t.name;
  auto third = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->runs_copied, 0);
  for (const auto& t : third->tables) EXPECT_EQ(t.rows_copied, 0) << t.name;
}

// SQLite → PostgreSQL → SQLite gives back every row of every table, value for value.
TEST_F(StoreCopy, TheWayBackGivesBackEveryRow) {
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  auto back_db = store::Database::Open(tmp_ / "back.db");
  ASSERT_TRUE(back_db.ok()) << back_db.status().ToString();
  store::Database& back = *back_db.value();
  auto report = store::CopyToSqlite(*pg_.connection(), back);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs_copied, 2);
  int64_t compared = 0;
  SQLite::Statement tables(SqliteOf(*sqlite_), "SELECT name FROM sqlite_schema WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' AND name NOT IN ('ingest_jobs', 'store_counters')");
  while (tables.executeStep()) {
    const std::string table = tables.getColumn(0).getString();
    // Every column, typed: typeof() tells 1 from 1.0 and '1'.
    std::string columns;
    SQLite::Statement cols(SqliteOf(*sqlite_), "SELECT name FROM pragma_table_info(?) ORDER BY cid");
    cols.bind(1, table);
    while (cols.executeStep()) {
      const std::string c = cols.getColumn(0).getString();
      columns += (columns.empty() ? "" : " || '|' || ") + std::string("typeof(") + c + ") || ':' || quote(" + c + ")";
    }
    const std::string sql = "SELECT " + columns + " AS r FROM " + table + " ORDER BY r";
    const testing::TextRows original = testing::SqliteRows(SqliteOf(*sqlite_), sql);
    EXPECT_EQ(testing::SqliteRows(SqliteOf(back), sql), original) << table;
    compared += static_cast<int64_t>(original.size());
  }
  EXPECT_GT(compared, 500);
  // The run summaries came along: the copy lists its runs as the original does.
  EXPECT_EQ(testing::SqliteRows(SqliteOf(back), "SELECT name, file_count, module_count FROM runs ORDER BY name"),
            testing::SqliteRows(SqliteOf(*sqlite_), "SELECT name, file_count, module_count FROM runs ORDER BY name"));
}

// A copy that fails part-way leaves whole runs only, and the next copy adds the rest. The failure is made by a
// row already in the destination with the key one of the second run's allocations needs.
TEST_F(StoreCopy, ACopyThatStopsPartWayLeavesWholeRunsAndResumes) {
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  const std::string module_of_run_2 = std::to_string(
      SqliteOf(*sqlite_).execAndGet("SELECT MIN(module_id) FROM allocations WHERE module_id IN "
                                "(SELECT module_id FROM modules WHERE run_id = 2)")
          .getInt64());
  ASSERT_TRUE(pg_.connection()
                  ->Exec("INSERT INTO allocations(module_id, allocation_index, size_bytes, color, is_parameter, "
                         "is_output, is_constant, is_thread_local, is_maybe_live_out, is_preallocated_temp, file_id) "
                         "VALUES (" + module_of_run_2 + ", 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)")
                  .ok());
  auto failed = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("nightly-2"), std::string::npos) << failed.status().message();
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM runs"), "1");  // nothing of run 2: not its run row, not its modules
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM modules WHERE run_id = 2"), "0");
  // Out of the way, the copy resumes: run 2 is copied whole, and every table matches its source.
  ASSERT_TRUE(pg_.connection()->Exec("DELETE FROM allocations WHERE module_id = " + module_of_run_2 +
                                     " AND size_bytes = 1 AND file_id = 0").ok());
  auto resumed = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->runs_copied, 1);
  EXPECT_EQ(resumed->runs_already_there, 1);
  for (const auto& t : resumed->tables) EXPECT_EQ(t.destination_rows, t.source_rows) << t.name;
}

// A run PostgreSQL refuses (a text that is not UTF-8, which SQLite stores as given) is passed over and named;
// the run after it is copied, and once the text is fixed the next copy takes the refused run too.
TEST_F(StoreCopy, ARefusedRunIsNamedAndTheOthersAreCopied) {
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec(
      "UPDATE dump_files SET reason = CAST(X'6e6f7420757466ff' AS TEXT) WHERE file_id = "
      "(SELECT MIN(file_id) FROM dump_files WHERE run_id = 1)"));
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("run 'nightly-1', table dump_files"), std::string::npos)
      << report.status().message();
  EXPECT_NE(report.status().message().find("1 runs copied"), std::string::npos) << report.status().message();
  EXPECT_EQ(Pg("SELECT string_agg(name, ',') FROM runs"), "nightly-2");
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec("UPDATE dump_files SET reason = 'fixed' WHERE reason LIKE 'not utf%'"));
  auto again = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->runs_copied, 1);
  for (const auto& t : again->tables) EXPECT_EQ(t.destination_rows, t.source_rows) << t.name;
}

// A source that lost rows since the last copy (a run deleted or pruned) is refused before anything is written:
// SQLite may have handed a removed text's id to another text, which an incremental copy would miss.
TEST_F(StoreCopy, ASourceThatShrankSinceTheLastCopyIsRefused) {
  testing::MakeSeedRun(tmp_ / "nightly-2");
  ASSERT_TRUE(testing::IngestRun(*sqlite_, tmp_ / "nightly-2", "nightly-2").ok());
  ASSERT_TRUE(store::CopyToPostgres(*sqlite_, *pg_.connection()).ok());
  const std::string copied = Pg("SELECT COUNT(*) FROM allocations");
  // nightly-2 is pruned in the source: its detail goes.
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec("UPDATE runs SET detail_pruned_at_us = 1 WHERE name = 'nightly-2'"));
  auto pruned = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(pruned.ok());
  EXPECT_EQ(pruned.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(pruned.status().message().find("pruned"), std::string::npos) << pruned.status().message();
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec("UPDATE runs SET detail_pruned_at_us = NULL WHERE name = 'nightly-2'"));
  // A shared text removed (as deleting a run removes the texts no other run uses).
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec("DELETE FROM long_texts WHERE text_id = (SELECT MAX(text_id) FROM long_texts)"));
  auto shrank = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(shrank.ok());
  EXPECT_EQ(shrank.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(shrank.status().message().find("long_texts"), std::string::npos) << shrank.status().message();
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM allocations"), copied);
  // A copied run deleted in the source, another still there: named as a deletion.
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec("DELETE FROM runs WHERE name = 'nightly-2'"));
  auto deleted = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(deleted.ok());
  EXPECT_NE(deleted.status().message().find("'nightly-2', which the source no longer has (deleted since"),
            std::string::npos)
      << deleted.status().message();
}

TEST_F(StoreCopy, ADestinationWithAnotherStoresRunsIsRefused) {
  ASSERT_TRUE(pg_.connection()->Exec(store::SchemaSql(store::SqlDialect::kPostgresql)).ok());
  ASSERT_TRUE(pg_.connection()
                  ->Exec("INSERT INTO runs(run_id, name, run_time_us, run_time_source, created_at_us, "
                         "updated_at_us) VALUES (1, 'someone-else', 0, 'flag', 0, 0)")
                  .ok());
  auto report = store::CopyToPostgres(*sqlite_, *pg_.connection());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(report.status().message().find("someone-else"), std::string::npos) << report.status().message();
  // The real cause, not a deletion in the source that never happened.
  EXPECT_NE(report.status().message().find("holds another store's runs"), std::string::npos)
      << report.status().message();
  EXPECT_EQ(report.status().message().find("deleted since"), std::string::npos) << report.status().message();
  EXPECT_EQ(Pg("SELECT COUNT(*) FROM modules"), "0");
}

}  // namespace
}  // namespace xladb
