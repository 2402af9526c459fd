// A memory-usage report that prints one memory space's total twice (docs/formats.md §5): the first total is
// kept, the second is a warning of the file, and the file counts the rows it stored, on both backends. The
// writer tells the repeat from the totals the file printed before, without waiting for the insert's answer.
#include <gtest/gtest.h>

#include <string>

#include "ingest/records/ingest_target.h"
#include "ingest/records/records.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

ingest::MemoryReportTotalRecord Total(int32_t memory_space, int64_t bytes) {
  ingest::MemoryReportTotalRecord r;
  r.memory_space = memory_space;
  r.total_bytes = bytes;
  return r;
}

class ReportTotalsOnBothBackends : public testing::BothBackends {};

TEST_F(ReportTotalsOnBothBackends, ASpacePrintedTwiceKeepsTheFirstTotalAndWarns) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const ingest::FileSpec spec =
        testing::FileOf(*run, "module_0001.jit_f.memory-usage-report.txt", "memory_usage_report", "h");
    auto sink = writer.BeginFile(spec);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_NE(*sink, nullptr);
    (*sink)->OnMemoryReportTotal(Total(0, 100));
    (*sink)->OnMemoryReportTotal(Total(1, 50));
    (*sink)->OnMemoryReportTotal(Total(0, 999));
    auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", 3, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, 2);
    EXPECT_EQ(stats->issues, 1);
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    store::SqlConnection& sql = db->connection();
    EXPECT_EQ(testing::Rows(sql, "SELECT memory_space, total_bytes FROM memory_report_totals ORDER BY 1"),
              "0|100\n1|50\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT severity, reason FROM ingest_issues"),
              "warning|memory space 0 total printed twice; the first is kept\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT rows_written, issue_count FROM dump_files"), "2|1\n");
  }
}

}  // namespace
}  // namespace xladb
