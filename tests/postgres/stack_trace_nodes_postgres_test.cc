// The stack-trace breakdown of a buffer assignment (docs/formats.md §4.2) through RunWriter, on both backends:
// more nodes than one bulk batch all arrive with their percentages exact, and a second file of the same module
// that prints the breakdown again keeps the first file's nodes (and counts none of its own as written).
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

ingest::StackTraceNodeRecord Node(int64_t ordinal, int64_t total_bytes) {
  ingest::StackTraceNodeRecord r;
  r.ordinal = ordinal;
  r.depth = static_cast<int32_t>(ordinal % 3);
  r.name = "jit(step)/layer_" + std::to_string(ordinal);
  r.percent = 100.0 / static_cast<double>(ordinal + 3);  // no short decimal form
  r.total_bytes = total_bytes;
  r.current_bytes = total_bytes / 2;
  r.remaining_bytes = total_bytes * 2;
  return r;
}

class StackTraceNodesOnBothBackends : public testing::BothBackends {};

TEST_F(StackTraceNodesOnBothBackends, NodesPastABatchArriveExactlyAndAModuleKeepsItsFirstBreakdown) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    const int64_t nodes = static_cast<int64_t>(sql.bulk_batch_rows()) + 5;  // a full batch and a part
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    for (const char* path : {"first-buffer-assignment.txt", "second-buffer-assignment.txt"}) {
      auto sink = writer.BeginFile(testing::ModuleFileOf(*run, path, "buffer_assignment", path));
      ASSERT_TRUE(sink.ok()) << sink.status().ToString();
      ASSERT_NE(*sink, nullptr);
      const bool second = std::string(path).starts_with("second");
      for (int64_t i = 0; i < nodes; ++i) (*sink)->OnStackTraceNode(Node(i, second ? 7 : 1000 + i));
      auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", nodes, 0});
      ASSERT_TRUE(stats.ok()) << stats.status().ToString();
      EXPECT_EQ(stats->rows, second ? 0 : nodes) << path;
    }
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*), SUM(total_bytes), SUM(depth), MIN(name) FROM stack_trace_nodes"),
              std::to_string(nodes) + "|" + std::to_string(1000 * nodes + nodes * (nodes - 1) / 2) + "|" +
                  std::to_string(nodes / 3 * 3 + (nodes % 3 == 2 ? 1 : 0)) + "|jit(step)/layer_0\n");
    auto q = sql.Prepare("SELECT ordinal, percent FROM stack_trace_nodes ORDER BY ordinal");
    int64_t read = 0;
    while (q->Step()) {
      EXPECT_EQ(q->Real(1), 100.0 / static_cast<double>(q->Int(0) + 3)) << q->Int(0);
      ++read;
    }
    EXPECT_EQ(read, nodes);
  }
}

}  // namespace
}  // namespace xladb
