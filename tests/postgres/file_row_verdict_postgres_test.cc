// The dump_files row of a file with rows: BeginFile inserts it with the verdict a kept file has and
// rows_written NULL, CommitFile completes it (store/write/run_writer.cc, kVerdictOfAKeptFile). On both backends
// the committed row says what the commit's outcome says, also where that outcome is not the verdict the row
// began with, and no row is left with rows_written NULL.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ingest/records/ingest_target.h"
#include "ingest/records/records.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/sql_rows.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

using ingest::FileOutcome;
using ingest::FileVerdict;

class FileRowOnBothBackends : public testing::BothBackends {};

TEST_F(FileRowOnBothBackends, ACommittedFileHasTheVerdictAndFiguresOfItsCommit) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const struct {
      const char* path;
      FileOutcome outcome;
    } files[] = {{"kept.txt", {FileVerdict::kIngested, "", 12, 0}},
                 {"judged.txt", {FileVerdict::kNotIngested, "nothing the gate reads", 7, 2}}};
    int64_t hash = 0;
    for (const auto& file : files) {
      auto sink = writer.BeginFile(
          testing::ModuleFileOf(*run, file.path, "buffer_assignment", std::to_string(++hash), file.path));
      ASSERT_TRUE(sink.ok() && *sink != nullptr) << sink.status().ToString();
      ingest::AllocationRecord allocation;
      allocation.index = 0;
      allocation.size_bytes = 64;
      (*sink)->OnAllocation(std::move(allocation));
      auto committed = writer.CommitFile(file.outcome);
      ASSERT_TRUE(committed.ok()) << committed.status().ToString();
      EXPECT_EQ(committed->rows, 1);
    }
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    // path, verdict, reason, line_count, unknown_lines, rows_written, and whether it names its module.
    EXPECT_EQ(testing::Rows(db->connection(),
                            "SELECT path, verdict, COALESCE(reason, '-'), line_count, unknown_lines, rows_written, "
                            "CASE WHEN module_id IS NULL THEN 0 ELSE 1 END FROM dump_files ORDER BY file_id"),
              "kept.txt|ingested|-|12|0|1|1\n"
              "judged.txt|not_ingested|nothing the gate reads|7|2|1|1\n");
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT COUNT(*) FROM dump_files WHERE rows_written IS NULL"), "0\n");
  }
}

}  // namespace
}  // namespace xladb
