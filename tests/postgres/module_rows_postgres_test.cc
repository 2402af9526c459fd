// A module's allocations, computations and peak list through RunWriter, each written a batch at a time
// (store/backend/bulk_batch.h), on both backends:
//   * more allocations than one batch all arrive, and the file counts them; an allocation index printed twice
//     breaks the table's key, so the file is refused whole and the next file is stored;
//   * a computation or a peak-list entry that a later file of the module prints again takes the later file's
//     figures (the inserts' ON CONFLICT … DO UPDATE), and the others stay;
//   * the module's fingerprint, written with its identity once a group: the HLO text's, which a buffer
//     assignment's values fingerprint never replaces, in whichever order and group the two files come.
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

ingest::AllocationRecord Allocation(int64_t index, int64_t bytes) {
  ingest::AllocationRecord r;
  r.index = index;
  r.size_bytes = bytes;
  r.parameter_number = index == 0 ? 0 : -1;
  r.parameter_shape = index == 0 ? "f32[8]" : "";
  return r;
}

ingest::ComputationRecord Computation(std::string name, int64_t instructions, bool is_entry = false) {
  ingest::ComputationRecord r;
  r.name = std::move(name);
  r.instruction_count = instructions;
  r.is_entry = is_entry;
  return r;
}

ingest::PeakBufferRecord Peak(int64_t ordinal, std::string instruction, int64_t bytes) {
  ingest::PeakBufferRecord r;
  r.ordinal = ordinal;
  r.instruction = std::move(instruction);
  r.logical_bytes = bytes;
  return r;
}

class ModuleRowsOnBothBackends : public testing::BothBackends {};

TEST_F(ModuleRowsOnBothBackends, AllocationsPastABatchArriveAndAnIndexPrintedTwiceRefusesTheFile) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    const int64_t n = static_cast<int64_t>(sql.bulk_batch_rows()) + 3;
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();

    auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "a/m.buffer-assignment.txt", "buffer_assignment", "a"));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    for (int64_t i = 0; i < n; ++i) (*sink)->OnAllocation(Allocation(i, 8 * (i + 1)));
    auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", n, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, n);

    // Another module's file prints allocation 1 twice (past a batch, so the repeat meets a row already sent).
    auto twice = writer.BeginFile(
        testing::ModuleFileOf(*run, "b/m.buffer-assignment.txt", "buffer_assignment", "b", "jit_g"));
    ASSERT_TRUE(twice.ok()) << twice.status().ToString();
    for (int64_t i = 0; i < n; ++i) (*twice)->OnAllocation(Allocation(i, 1));
    (*twice)->OnAllocation(Allocation(1, 2));
    auto refused = writer.CommitFile({ingest::FileVerdict::kIngested, "", n + 1, 0});
    EXPECT_FALSE(refused.ok());
    ASSERT_TRUE(writer.AbortFile({ingest::FileVerdict::kError, refused.status().message(), n + 1, 0}).ok());

    auto after = writer.BeginFile(
        testing::ModuleFileOf(*run, "c/m.buffer-assignment.txt", "buffer_assignment", "c", "jit_h"));
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    (*after)->OnAllocation(Allocation(0, 64));
    ASSERT_TRUE(writer.CommitFile({ingest::FileVerdict::kIngested, "", 1, 0}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());

    EXPECT_EQ(testing::Rows(sql, "SELECT m.name, COUNT(*), SUM(a.size_bytes), SUM(a.is_parameter) FROM allocations a "
                                 "JOIN modules m USING (module_id) GROUP BY m.name ORDER BY m.name"),
              "jit_f|" + std::to_string(n) + "|" + std::to_string(4 * n * (n + 1)) + "|1\njit_h|1|64|1\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT path, verdict, rows_written FROM dump_files ORDER BY path"),
              "a/m.buffer-assignment.txt|ingested|" + std::to_string(n) +
                  "\nb/m.buffer-assignment.txt|error|0\nc/m.buffer-assignment.txt|ingested|1\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT parameter_shape FROM allocations WHERE allocation_index = 0 AND size_bytes = 8"),
              "f32[8]\n");
  }
}

TEST_F(ModuleRowsOnBothBackends, AComputationOrPeakEntryPrintedAgainTakesTheLaterFilesFigures) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();

    auto first = writer.BeginFile(testing::ModuleFileOf(*run, "m.after_optimizations.txt", "hlo_module", "h"));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    (*first)->OnComputation(Computation("main", 3, true));
    (*first)->OnComputation(Computation("fused_add", 5));
    (*first)->OnPeakBuffer(Peak(0, "p0", 100));
    (*first)->OnPeakBuffer(Peak(1, "p1", 50));
    auto stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", 4, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, 4);

    auto later = writer.BeginFile(testing::ModuleFileOf(*run, "m.after_optimizations-buffer-assignment.txt",
                                                        "buffer_assignment", "b"));
    ASSERT_TRUE(later.ok()) << later.status().ToString();
    (*later)->OnComputation(Computation("fused_add", 7));
    (*later)->OnPeakBuffer(Peak(1, "q1", 70));
    (*later)->OnPeakBuffer(Peak(2, "q2", 20));
    stats = writer.CommitFile({ingest::FileVerdict::kIngested, "", 3, 0});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->rows, 3);  // a row updated counts as one written
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());

    EXPECT_EQ(testing::Rows(sql, "SELECT name, is_entry, instruction_count FROM computations ORDER BY name"),
              "fused_add|0|7\nmain|1|3\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT p.ordinal, p.instruction, p.logical_bytes, f.path FROM peak_buffers p "
                                 "JOIN dump_files f USING (file_id) ORDER BY p.ordinal"),
              "0|p0|100|m.after_optimizations.txt\n"
              "1|q1|70|m.after_optimizations-buffer-assignment.txt\n"
              "2|q2|20|m.after_optimizations-buffer-assignment.txt\n");
    EXPECT_EQ(testing::Rows(sql, "SELECT peak_buffer_count FROM module_summary"), "3\n");
  }
}

ingest::HloModuleRecord HloHeader(uint64_t fingerprint) {
  ingest::HloModuleRecord r;
  r.name = "jit_f";
  r.program_fingerprint = fingerprint;
  return r;
}

ingest::AllocatedValueRecord Value(int64_t id) {
  ingest::AllocatedValueRecord r;
  r.value.id = id;
  r.value.instruction = "p" + std::to_string(id);
  r.size_bytes = 64;
  r.shape = "f32[16]{0}";
  return r;
}

TEST_F(ModuleRowsOnBothBackends, TheHloTextsFingerprintIsKeptWhateverComesAfterIt) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    // Each order of the two files, each in a group of its own and both in one group.
    int run_number = 0;
    for (const bool text_first : {true, false}) {
      for (const store::GroupCommit group : {store::GroupCommit{0, 0}, store::GroupCommit{3600, int64_t{1} << 40}}) {
        store::RunWriter writer(db, group);
        const std::string name = "run" + std::to_string(run_number++);
        auto run = writer.BeginRun(testing::RunNamed(name));
        ASSERT_TRUE(run.ok()) << run.status().ToString();
        auto text = [&] {
          auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "m.after_optimizations.txt", "hlo_module", "h"));
          ASSERT_TRUE(sink.ok()) << sink.status().ToString();
          (*sink)->OnHloModule(HloHeader(0xabcdef0123456789ULL));
          ASSERT_TRUE(writer.CommitFile({ingest::FileVerdict::kIngested, "", 1, 0}).ok());
        };
        auto values = [&] {
          auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "m.after_optimizations-buffer-assignment.txt",
                                                             "buffer_assignment", "b"));
          ASSERT_TRUE(sink.ok()) << sink.status().ToString();
          (*sink)->OnAllocation(Allocation(0, 64));
          (*sink)->OnAllocatedValue(Value(1));
          ASSERT_TRUE(writer.CommitFile({ingest::FileVerdict::kIngested, "", 2, 0}).ok());
        };
        if (text_first) {
          text();
          values();
        } else {
          values();
          text();
        }
        ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
        EXPECT_EQ(testing::Rows(sql, "SELECT m.fingerprint, m.fingerprint_source, s.value_count FROM modules m "
                                     "JOIN module_summary s USING (module_id) JOIN runs r USING (run_id) "
                                     "WHERE r.name = '" + name + "'"),
                  "abcdef0123456789|hlo_text|1\n")
            << (text_first ? "text first" : "values first");
      }
    }
    // A module with values alone takes their fingerprint.
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("values_alone"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto sink = writer.BeginFile(testing::ModuleFileOf(*run, "m.buffer-assignment.txt", "buffer_assignment", "v"));
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    (*sink)->OnAllocation(Allocation(0, 64));
    (*sink)->OnAllocatedValue(Value(1));
    ASSERT_TRUE(writer.CommitFile({ingest::FileVerdict::kIngested, "", 2, 0}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(sql, "SELECT length(m.fingerprint), m.fingerprint_source FROM modules m "
                                 "JOIN runs r USING (run_id) WHERE r.name = 'values_alone'"),
              "16|buffer_assignment\n");
  }
}

}  // namespace
}  // namespace xladb
