// The reports' rows through RunWriter (store/write/rows/report_rows.h), on both backends:
//   * a memory-usage report that prints one memory space's total twice (docs/formats.md §5): the first total is
//     kept, the second is a warning of the file, and the file counts the rows it stored. The writer tells the
//     repeat from the totals the file printed before, not from the database's answer;
//   * libtpu's utilization counters (§8) and a report's rows, more than one bulk batch of them: every row
//     arrives with its ratio exact, a counter printed twice in its block keeps the first and warns, and the
//     module's spill summary, which reads the counters, sees them all.
#include <gtest/gtest.h>

#include <cstdint>
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

class ReportRowsOnBothBackends : public testing::BothBackends {};

TEST_F(ReportRowsOnBothBackends, ASpacePrintedTwiceKeepsTheFirstTotalAndWarns) {
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

ingest::UtilizationCounterRecord Counter(int64_t block, std::string kernel, std::string counter, int64_t numerator,
                                        int64_t denominator) {
  ingest::UtilizationCounterRecord r;
  r.block_ordinal = block;
  r.kernel = std::move(kernel);
  r.counter = std::move(counter);
  r.numerator = numerator;
  r.denominator = denominator;
  r.ratio = static_cast<double>(numerator) / static_cast<double>(denominator);  // not a short decimal
  r.ratio_text = std::to_string(r.ratio);
  return r;
}

TEST_F(ReportRowsOnBothBackends, CountersPastABatchArriveExactlyAndARepeatInItsBlockWarns) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    // Two counters a block: two full batches and a part, which waits for the file's end (and must be stored
    // before the spill summary reads the counters).
    const int64_t blocks = static_cast<int64_t>(sql.bulk_batch_rows()) + 1;
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const ingest::FileSpec spec =
        testing::ModuleFileOf(*run, "module_0001.jit_f.bundle_profile.txt", "tpu_bundle_profile", "h");
    auto sink = writer.BeginFile(spec);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_NE(*sink, nullptr);
    for (int64_t b = 0; b < blocks; ++b) {
      const std::string kernel = "fusion." + std::to_string(b);
      (*sink)->OnUtilizationCounter(Counter(b, kernel, "VMEM_SPILL_COUNT", b + 1, 3));
      (*sink)->OnUtilizationCounter(Counter(b, kernel, "VMEM_FILL_COUNT", 2, 7));
    }
    (*sink)->OnUtilizationCounter(Counter(1, "fusion.1", "VMEM_SPILL_COUNT", 999, 1000));  // again in block 1
    ingest::MemoryReportRowRecord row;
    row.ordinal = 0;
    row.cumulative_percent = 100.0 / 3;
    row.shapes = "f32[8]";
    (*sink)->OnMemoryReportRow(std::move(row));
    auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", 3, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, 2 * blocks + 1);
    EXPECT_EQ(stats->issues, 1);
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*), SUM(numerator), COUNT(DISTINCT block_ordinal) "
                                 "FROM utilization_counters"),
              std::to_string(2 * blocks) + "|" + std::to_string(blocks * (blocks + 1) / 2 + 2 * blocks) + "|" +
                  std::to_string(blocks) + "\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT kernel, numerator, denominator FROM utilization_counters "
                                 "WHERE block_ordinal = 1 AND counter = 'VMEM_SPILL_COUNT'"),
              "fusion.1|2|3\n");  // the first printed
    // Every ratio reads back as the double written (2/7 and b/3 have no short decimal form).
    auto q = sql.Prepare("SELECT block_ordinal, counter, ratio FROM utilization_counters");
    int64_t read = 0;
    while (q->Step()) {
      const int64_t b = q->Int(0);
      const double expected = q->Text(1) == "VMEM_FILL_COUNT" ? 2.0 / 7 : static_cast<double>(b + 1) / 3;
      EXPECT_EQ(q->Real(2), expected) << b << " " << q->Text(1);
      ++read;
    }
    EXPECT_EQ(read, 2 * blocks);
    auto percent = sql.Prepare("SELECT cumulative_percent FROM memory_report_rows");
    ASSERT_TRUE(percent->Step());
    EXPECT_EQ(percent->Real(0), 100.0 / 3);
    EXPECT_EQ(testing::Rows(sql, "SELECT severity, reason FROM ingest_issues"),
              "warning|counter VMEM_SPILL_COUNT printed twice in block 1; the first is kept\n");
    // The spill summary, computed at the file's end from the stored counters, has every kernel.
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*), SUM(vmem_spills), SUM(vmem_fills) FROM kernel_spill_summary"),
              std::to_string(blocks) + "|" + std::to_string(blocks * (blocks + 1) / 2) + "|" +
                  std::to_string(2 * blocks) + "\n");
  }
}

// A file that names no module (RunWriter takes one: FileSpec::has_module false) keeps its report's rows and
// counters too, though no module's facts follow them.
TEST_F(ReportRowsOnBothBackends, AFileWithoutAModuleKeepsItsRowsAndCounters) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto sink = writer.BeginFile(testing::FileOf(*run, "profile.txt", "tpu_bundle_profile", "h"));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_NE(*sink, nullptr);
    (*sink)->OnUtilizationCounter(Counter(0, "<no-hlo-instruction>", "VECTOR_ALU", 105, 748));
    ingest::MemoryReportRowRecord row;
    row.ordinal = 0;
    row.shapes = "f32[8]";
    (*sink)->OnMemoryReportRow(std::move(row));
    auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", 3, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, 2);
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    store::SqlConnection& sql = db->connection();
    EXPECT_EQ(testing::Rows(sql, "SELECT kernel, counter, numerator, denominator, COALESCE(module_id, -1) "
                                 "FROM utilization_counters"),
              "<no-hlo-instruction>|VECTOR_ALU|105|748|-1\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT shapes FROM memory_report_rows"), "f32[8]\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT rows_written FROM dump_files"), "2\n");
  }
}

}  // namespace
}  // namespace xladb
