// A writer on PostgreSQL looks the interned texts of a batch up by their hashes (InternedTexts::Ids,
// store/facts/interned_texts.h) on a connection of its own. Planned against a table the ingest is still filling
// (no statistics yet, a few pages), a batch of thousands of keys looked cheaper as one pass over the whole table
// than as index probes, so every batch read all of long_texts and names again: a cost that grows with the
// table, in parallel workers besides. The texts' connection is told to read by key (RunWriter::Impl::
// OpenInternedTexts); this test holds it to that through the server's own counters: after a run of two files
// with thousands of distinct texts and op_names, neither table was read by a sequential scan on any of the
// writer's connections, and both were read through their indexes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "ingest/records/ingest_target.h"
#include "ingest/records/record_sink.h"
#include "ingest/records/records.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

// Sequential and index scans of a table of the test's schema, as the statistics collector counts them.
struct Scans {
  int64_t sequential = 0;
  int64_t by_index = 0;
};

// A connection's counters reach the server's statistics when it is idle, at most once a second, or when it
// ends; pg_stat_force_next_flush makes `db`'s connection report what it did so far before the call returns.
void ReportScans(store::Database& db) { db.connection().Exec("SELECT pg_stat_force_next_flush()"); }

Scans ScansOf(testing::PostgresTestSchema& pg, const std::string& table) {
  (void)pg.Value("SELECT pg_stat_clear_snapshot()::text");
  const std::string where =
      " FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = '" + table + "'";
  return {std::stoll(pg.Value("SELECT COALESCE(seq_scan, 0)" + where)),
          std::stoll(pg.Value("SELECT COALESCE(idx_scan, 0)" + where))};
}

// A file of module `module` with `count` instructions, each with a text and an op_name of its own.
Status WriteDistinctInstructions(store::RunWriter& writer, int64_t run, const std::string& module, int count) {
  auto sink = writer.BeginFile(testing::ModuleFileOf(run, module + ".txt", "hlo_module", module, module));
  if (!sink.ok()) return sink.status();
  if (*sink == nullptr) return Status::Internal("taken for another writer's file");
  for (int i = 0; i < count; ++i) {
    ingest::InstructionRecord r;
    r.name = "add." + std::to_string(i);
    r.opcode = "add";
    r.op_name = "jit(" + module + ")/add_" + std::to_string(i);
    r.text = r.name + " = f32[" + std::to_string(i + 1) + "]{0} add(a, b), metadata={op_name=\"" + r.op_name + "\"}";
    (*sink)->OnInstruction(std::move(r));
  }
  return testing::CommitOrAbort(writer);
}

TEST(InternedLookupsOnPostgresql, ABatchOfTextsIsLookedUpByKeyNotByReadingTheTable) {
  testing::PostgresTestSchema pg("interned_lookups");
  ASSERT_NE(pg.connection(), nullptr) << pg.why();
  auto db = store::Database::Open(pg.uri());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ReportScans(*db.value());  // making the schema scans its tables (its indexes are built from them)
  const Scans texts_before = ScansOf(pg, "long_texts"), names_before = ScansOf(pg, "names");
  {
    store::RunWriter writer(db.value().get());
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    // The second file's batches are looked up in tables that hold the first file's 3,000 rows.
    ASSERT_TRUE(WriteDistinctInstructions(writer, *run, "jit_f", 3000).ok());
    ASSERT_TRUE(WriteDistinctInstructions(writer, *run, "jit_g", 3000).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
  }  // the texts' connection closes: its server process reports its counters as it exits
  ReportScans(*db.value());  // and the writer's own connection, which stays open, reports what it read
  // The texts' counters arrive a moment after their process ends: wait for the lookups of names (a table the
  // writer's own connection does not read) to be counted, one way or the other.
  Scans texts = ScansOf(pg, "long_texts"), names = ScansOf(pg, "names");
  for (int waited_ms = 0; names.sequential + names.by_index == names_before.sequential + names_before.by_index;
       waited_ms += 50) {
    ASSERT_LT(waited_ms, 20000) << "the texts' connection's scans of names were never counted";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    texts = ScansOf(pg, "long_texts");
    names = ScansOf(pg, "names");
  }
  EXPECT_EQ(texts.sequential - texts_before.sequential, 0) << "long_texts was read whole";
  EXPECT_EQ(names.sequential - names_before.sequential, 0) << "names was read whole";
  EXPECT_GT(texts.by_index - texts_before.by_index, 0);
  EXPECT_GT(names.by_index - names_before.by_index, 0);
  // Counted last: these two reads are sequential scans of the test's own.
  EXPECT_EQ(pg.Value("SELECT COUNT(*) FROM long_texts"), "6000");
  EXPECT_EQ(pg.Value("SELECT COUNT(*) FROM names"), "6000");
}

}  // namespace
}  // namespace xladb
