// A RunWriter takes the modules it created in its new run by key, without a lookup (store/write/created_modules.h),
// on both backends. The id it keeps must never outlive the module's row:
//   * the next file of a module created by an earlier file (in the same group, or a later one) writes into
//     that module, and a file with a backend fills in the one the first file did not know;
//   * a module whose only file was refused (its savepoint rolled back), at its commit or as it began, is
//     created again by its next file;
//   * a module whose only file was replaced by one without rows (which removes the module) is created again.
// Each case ends with every file's rows in a module that exists, one module row per key.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "ingest/records/ingest_target.h"
#include "ingest/records/records.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/sql_rows.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

using ingest::FileVerdict;

ingest::AllocationRecord Allocation(int64_t index, int64_t bytes) {
  ingest::AllocationRecord r;
  r.index = index;
  r.size_bytes = bytes;
  return r;
}

// Writes a buffer-assignment file of module `name` with the allocations (index, bytes) given; the commit's status.
Status WriteFile(store::RunWriter& writer, ingest::FileSpec spec,
                 std::initializer_list<std::pair<int64_t, int64_t>> allocations) {
  auto sink = writer.BeginFile(spec);
  if (!sink.ok()) return sink.status();
  if (*sink == nullptr) return Status::Internal("taken for another writer's file");
  for (const auto& [index, bytes] : allocations) (*sink)->OnAllocation(Allocation(index, bytes));
  return testing::CommitOrAbort(writer);
}

// Every module row and the allocations written into it; allocations into a module id with no row show as '?'.
constexpr const char* kModulesAndTheirRows =
    "SELECT COALESCE(m.name, '?') || ' ' || COALESCE(m.backend, '?') || ' ' || COUNT(a.module_id) || ' ' || "
    "COALESCE(SUM(a.size_bytes), 0) FROM allocations a LEFT JOIN modules m USING (module_id) "
    "GROUP BY a.module_id, m.name, m.backend "
    "UNION ALL SELECT m.name || ' ' || m.backend || ' 0 0' FROM modules m "
    "WHERE NOT EXISTS (SELECT 1 FROM allocations a WHERE a.module_id = m.module_id) ORDER BY 1";

class CreatedModulesOnBothBackends : public testing::BothBackends {};

TEST_F(CreatedModulesOnBothBackends, ALaterFileWritesIntoTheModuleAnEarlierOneCreated) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, store::GroupCommit{0, 0});  // every file its own group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(WriteFile(writer, testing::ModuleFileOf(*run, "f1.txt", "buffer_assignment", "1"), {{0, 8}}).ok());
    ingest::FileSpec second = testing::ModuleFileOf(*run, "f2.txt", "buffer_assignment", "2");
    second.module.backend = "cuda";
    ASSERT_TRUE(WriteFile(writer, second, {{1, 16}}).ok());
    ASSERT_TRUE(WriteFile(writer, testing::ModuleFileOf(*run, "g.txt", "buffer_assignment", "3", "jit_g"),
                          {{0, 4}}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kModulesAndTheirRows), "jit_f cuda 2 24\njit_g  1 4\n");
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT COUNT(DISTINCT module_id) FROM dump_files"), "2\n");
  }
}

TEST_F(CreatedModulesOnBothBackends, AModuleWhoseFileWasRefusedIsCreatedAgain) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    // Allocation 0 printed twice: the file is refused, and with its savepoint goes the module it created.
    EXPECT_FALSE(
        WriteFile(writer, testing::ModuleFileOf(*run, "f1.txt", "buffer_assignment", "1"), {{0, 8}, {0, 8}}).ok());
    ASSERT_TRUE(WriteFile(writer, testing::ModuleFileOf(*run, "f2.txt", "buffer_assignment", "2"), {{0, 32}}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kModulesAndTheirRows), "jit_f  1 32\n");
  }
}

TEST_F(CreatedModulesOnBothBackends, AModuleWhoseFileFailedToBeginIsCreatedAgain) {
  // One file's row is refused as it begins (its module is not inserted: the file's row goes first).
  RefuseFileRowsWhere("NEW.path = 'f1.txt' AND NEW.rows_written IS NULL");  // the row BeginFile inserts
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto refused = writer.BeginFile(testing::ModuleFileOf(*run, "f1.txt", "buffer_assignment", "1"));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("refused by the test"), std::string::npos);
    ASSERT_TRUE(writer.AbortFile({FileVerdict::kError, refused.status().message(), 0, 0}).ok());
    ASSERT_TRUE(WriteFile(writer, testing::ModuleFileOf(*run, "f2.txt", "buffer_assignment", "2"), {{0, 32}}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kModulesAndTheirRows), "jit_f  1 32\n");
  }
}

TEST_F(CreatedModulesOnBothBackends, AModuleItsReplacedFileRemovedIsCreatedAgain) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ingest::FileSpec first = testing::ModuleFileOf(*run, "f1.txt", "buffer_assignment", "1");
    ASSERT_TRUE(WriteFile(writer, first, {{0, 8}}).ok());
    // The same path again, unreadable now: its rows and the module they alone made go.
    first.content_hash = "1b";
    ASSERT_TRUE(writer.RecordFileWithoutRows(first, {FileVerdict::kError, "cut short", 1, 0}).ok());
    ASSERT_TRUE(WriteFile(writer, testing::ModuleFileOf(*run, "f2.txt", "buffer_assignment", "2"), {{0, 64}}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kModulesAndTheirRows), "jit_f  1 64\n");
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT path, verdict, CASE WHEN module_id IS NULL THEN 1 ELSE 0 END "
                                              "FROM dump_files ORDER BY path"),
              "f1.txt|error|1\nf2.txt|ingested|0\n");
  }
}

}  // namespace
}  // namespace xladb
