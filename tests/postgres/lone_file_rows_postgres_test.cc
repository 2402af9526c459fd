// Files that write nothing but their dump_files row (not memory data, no issues) go with the group's other such
// rows, a batch at a time (RunWriter's lone file rows), on both backends:
//   * every row arrives, more than one batch of them too; file ids keep the order the files were recorded in,
//     around a file with rows; the run's summary counts them at the group's COMMIT;
//   * a lone row the database refuses fails its whole group, which is rolled back (the files it held were
//     acknowledged, so none of the group may be half-stored), and the writer says why from then on.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

ingest::FileOutcome NotIngested() { return {FileVerdict::kNotIngested, "GPU thunk sequence: not memory data", 3, 0}; }

class LoneFileRowsOnBothBackends : public testing::BothBackends {};

TEST_F(LoneFileRowsOnBothBackends, EveryRowArrivesInTheOrderRecordedAndTheRunCountsThem) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();

    // More lone files than one batch, then a file with rows, then one more lone file.
    std::vector<std::string> order;
    const size_t before = sql.bulk_batch_rows() + 3;
    for (size_t i = 0; i < before; ++i) {
      const std::string path = "x" + std::string(i < 10 ? "000" : i < 100 ? "00" : i < 1000 ? "0" : "") +
                               std::to_string(i) + ".thunks.txt";
      ingest::FileSpec spec = testing::FileOf(*run, path, "gpu_thunk_sequence", "h" + std::to_string(i));
      spec.size_bytes = 10;
      ASSERT_TRUE(writer.RecordFileWithoutRows(spec, NotIngested()).ok());
      order.push_back(path);
    }
    auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "m.buffer-assignment.txt", "buffer_assignment", "m"));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_NE(*sink, nullptr);
    ingest::AllocationRecord allocation;
    allocation.index = 0;
    allocation.size_bytes = 64;
    (*sink)->OnAllocation(std::move(allocation));
    ASSERT_TRUE(writer.CommitFile({FileVerdict::kIngested, "", 4, 0}).ok());
    order.push_back("m.buffer-assignment.txt");
    ASSERT_TRUE(writer.RecordFileWithoutRows(testing::FileOf(*run, "z.thunks.txt", "gpu_thunk_sequence", "z"),
                                             NotIngested()).ok());
    order.push_back("z.thunks.txt");
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());

    std::string expected;
    for (const std::string& path : order) expected += path + "\n";
    EXPECT_EQ(testing::Rows(sql, "SELECT path FROM dump_files ORDER BY file_id"), expected);
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*) FROM dump_files WHERE verdict = 'not_ingested' AND line_count = 3 "
                          "AND reason = 'GPU thunk sequence: not memory data' AND issue_count = 0"),
              std::to_string(before + 1) + "\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT size_bytes || ' ' || content_hash FROM dump_files WHERE path = 'x0001.thunks.txt'"),
              "10 h1\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT file_count || ' ' || ingested_file_count || ' ' || error_file_count FROM runs "
                          "WHERE name = 'nightly'"),
              std::to_string(before + 2) + " 1 0\n");

    // The same content again is unchanged, seen by a later writer.
    store::RunWriter again(db);
    auto same = again.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(same.ok()) << same.status().ToString();
    auto state = again.CheckFile(*same, "z.thunks.txt", "z");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(*state, ingest::IngestTarget::FileState::kUnchanged);
  }
}

TEST_F(LoneFileRowsOnBothBackends, ARowTheDatabaseRefusesFailsItsGroupWhole) {
  RefuseFileRowsWhere("NEW.path = 'bad.txt'");
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    store::RunWriter writer(db, store::GroupCommit{3600, int64_t{1} << 40});  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();

    auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "m.buffer-assignment.txt", "buffer_assignment", "m"));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_TRUE(writer.CommitFile({FileVerdict::kIngested, "", 1, 0}).ok());
    ASSERT_TRUE(writer.RecordFileWithoutRows(testing::FileOf(*run, "good.txt", "unknown", "g"), NotIngested()).ok());
    ASSERT_TRUE(writer.RecordFileWithoutRows(testing::FileOf(*run, "bad.txt", "unknown", "b"), NotIngested()).ok());

    Status finished = writer.FinishRun(*run, -1);
    ASSERT_FALSE(finished.ok());
    EXPECT_NE(finished.message().find("refused by the test"), std::string::npos) << finished.message();
    EXPECT_NE(finished.message().find("not stored"), std::string::npos) << finished.message();
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*) FROM dump_files"), "0\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*) FROM modules"), "0\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT name FROM runs"), "nightly\n");  // committed by BeginRun, before the group
  }
}

}  // namespace
}  // namespace xladb
