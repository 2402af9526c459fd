// A group's derived module facts (store/facts/module_facts.h) read a list of modules at a time, up to 256 a
// statement: a group of more modules than one list (61 copies of the seed run: 305 modules in one group) must
// give each module the facts that module gets when its files are committed one at a time, on both backends.
#include <gtest/gtest.h>

#include <string>

#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/sql_rows.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb {
namespace {

// Each module's derived facts but its ids and its folder (which the identity key hashes), one row for each
// distinct set, in a stable order.
std::string DistinctFactsOf(store::SqlConnection& sql, const std::string& run) {
  return testing::Rows(
      sql,
      "SELECT DISTINCT m.name, m.stage, m.entry_signature, COALESCE(m.entry_signature_confirmed, -1), m.fingerprint, "
      "       s.total_bytes, s.allocation_count, s.value_count, s.peak_bytes, s.live_peak_padded_bytes, "
      "       s.live_peak_padded_time, s.color0_total_bytes, "
      "       (SELECT COUNT(*) || ':' || COALESCE(SUM(x.live_peak_padded_bytes), 0) FROM module_memory_spaces x "
      "         WHERE x.module_id = m.module_id), "
      "       (SELECT COUNT(*) FROM kernel_spill_summary k WHERE k.module_id = m.module_id) "
      "FROM modules m JOIN module_summary s USING (module_id) JOIN runs r USING (run_id) "
      "WHERE r.name = '" + run + "' ORDER BY 1, 2, 3");
}

class DerivedFactsOnBothBackends : public testing::BothBackends {};

TEST_F(DerivedFactsOnBothBackends, MoreModulesThanOneReadEachGetWhatTheyGetAlone) {
  constexpr int kCopies = 61;  // 5 modules each
  const std::string many = tmp_ / "many", alone = tmp_ / "alone";
  for (int i = 0; i < kCopies; ++i) testing::MakeSeedRun(many + "/host" + std::to_string(i));
  testing::MakeSeedRun(alone + "/host0");
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    store::SqlConnection& sql = db->connection();
    SCOPED_TRACE(Name(sql));
    auto one_group = testing::IngestRun(*db, many, "many", {}, store::GroupCommit{3600, int64_t{1} << 40});
    ASSERT_TRUE(one_group.ok()) << one_group.status().ToString();
    auto one_a_file = testing::IngestRun(*db, alone, "alone", {}, store::GroupCommit{0, 0});
    ASSERT_TRUE(one_a_file.ok()) << one_a_file.status().ToString();

    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(*) FROM modules m JOIN runs r USING (run_id) WHERE r.name = 'many'"),
              std::to_string(5 * kCopies) + "\n");
    const std::string expected = DistinctFactsOf(sql, "alone");
    EXPECT_EQ(DistinctFactsOf(sql, "many"), expected);
    // The facts compared are real: seed 000's module prints 8 allocations and `Total bytes used: 18629632`.
    EXPECT_NE(expected.find("|18629632|8|"), std::string::npos) << expected;
    // Every copy has its own memory spaces (the padded peak per color), none shared or lost.
    EXPECT_EQ(testing::Rows(sql, "SELECT COUNT(DISTINCT x.module_id) FROM module_memory_spaces x "
                                 "JOIN modules m USING (module_id) JOIN runs r USING (run_id) WHERE r.name = 'many'"),
              testing::Rows(sql, "SELECT " + std::to_string(kCopies) + " * COUNT(DISTINCT x.module_id) "
                                 "FROM module_memory_spaces x JOIN modules m USING (module_id) "
                                 "JOIN runs r USING (run_id) WHERE r.name = 'alone'"));
  }
}

}  // namespace
}  // namespace xladb
