// store/query/result_columns.h: a list of {expression, member} is the SELECT list and the reader, a NULL
// leaves the member's default, lists compose, and the module metrics land in ModuleMetricValues by name.
#include "store/query/result_columns.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_connection.h"

namespace xladb::store {
namespace {

struct Row {
  int64_t id = 0;
  int64_t size = -1;  // NULL reads as -1
  double rate = 0.5;
  std::string name = "unnamed";
  bool flag = false;
};

const ResultColumns<Row> kRowColumns = {
    {"id", &Row::id}, {"size", &Row::size}, {"rate", &Row::rate}, {"name", &Row::name}, {"flag", &Row::flag},
};

struct Extra {
  int64_t count = 0;
};

struct Metrics : ModuleMetricValues {
  std::string module;
};

class ResultColumnsTest : public ::testing::Test {
 protected:
  ResultColumnsTest() : db_(std::make_unique<SQLite::Database>(":memory:", SQLite::OPEN_READWRITE)) {
    db_.Exec("CREATE TABLE t (id INTEGER, size INTEGER, rate REAL, name TEXT, flag INTEGER)");
    db_.Exec("INSERT INTO t VALUES (1, 100, 0.25, 'a', 1), (2, NULL, NULL, NULL, NULL)");
  }
  SqliteConnection db_;
};

TEST_F(ResultColumnsTest, SelectListIsTheExpressionsInOrder) {
  EXPECT_EQ(kRowColumns.SelectList(), "id, size, rate, name, flag");
  EXPECT_EQ(kRowColumns.size(), 5);
}

TEST_F(ResultColumnsTest, ReadsEachColumnIntoItsMemberAndNullLeavesTheDefault) {
  auto q = db_.Prepare("SELECT " + kRowColumns.SelectList() + " FROM t ORDER BY id");
  ASSERT_TRUE(q->Step());
  const Row first = kRowColumns.Read(*q);
  EXPECT_EQ(first.id, 1);
  EXPECT_EQ(first.size, 100);
  EXPECT_EQ(first.rate, 0.25);
  EXPECT_EQ(first.name, "a");
  EXPECT_TRUE(first.flag);
  ASSERT_TRUE(q->Step());
  const Row second = kRowColumns.Read(*q);
  EXPECT_EQ(second.id, 2);
  EXPECT_EQ(second.size, -1);
  EXPECT_EQ(second.rate, 0.5);
  EXPECT_EQ(second.name, "unnamed");
  EXPECT_FALSE(second.flag);
}

TEST_F(ResultColumnsTest, ListsComposeInOneRow) {
  const ResultColumns<Extra> extra = {{"COUNT(*) OVER ()", &Extra::count}};
  const ResultColumns<Row> id_then_name =
      ResultColumns<Row>{{"id", &Row::id}}.Then(ResultColumns<Row>{{"name", &Row::name}});
  auto q = db_.Prepare("SELECT " + id_then_name.SelectList() + ", " + extra.SelectList() + " FROM t ORDER BY id");
  ASSERT_TRUE(q->Step());
  Row row;
  Extra e;
  EXPECT_EQ(extra.ReadInto(*q, &e, id_then_name.ReadInto(*q, &row)), 3);
  EXPECT_EQ(row.id, 1);
  EXPECT_EQ(row.name, "a");
  EXPECT_EQ(e.count, 2);
}

TEST_F(ResultColumnsTest, ModuleMetricsAreReadByName) {
  db_.Exec("CREATE TABLE mm (module TEXT, peak_bytes INTEGER, live_peak_padded_bytes INTEGER, total_bytes INTEGER, "
           "color0_total_bytes INTEGER, temp_bytes INTEGER, parameter_bytes INTEGER, output_bytes INTEGER)");
  db_.Exec("INSERT INTO mm VALUES ('jit_f', 1, 2, 3, 4, 5, NULL, 7)");
  const auto columns = ResultColumns<Metrics>{{"mm.module", &Metrics::module}}.WithModuleMetrics("mm");
  EXPECT_EQ(columns.size(), 1 + static_cast<int>(std::size(kModuleMetrics)));
  auto q = db_.Prepare("SELECT " + columns.SelectList() + " FROM mm");
  ASSERT_TRUE(q->Step());
  const Metrics m = columns.Read(*q);
  EXPECT_EQ(m.module, "jit_f");
  EXPECT_EQ(m.peak_bytes, 1);
  EXPECT_EQ(m.metric("live_peak_padded_bytes"), 2);
  EXPECT_EQ(m.metric("total_bytes"), 3);
  EXPECT_EQ(m.color0_total_bytes, 4);
  EXPECT_EQ(m.temp_bytes, 5);
  EXPECT_EQ(m.parameter_bytes, -1);
  EXPECT_EQ(m.metric("output_bytes"), 7);
  EXPECT_EQ(m.metric("not_a_metric"), -1);
}

TEST(ModuleMetricsTest, ArgumentsAreTheShortNamesThenTheNames) {
  EXPECT_EQ(ModuleMetricArguments(),
            (std::vector<std::string>{"peak", "total", "temp", "peak_bytes", "live_peak_padded_bytes", "total_bytes",
                                      "color0_total_bytes", "temp_bytes", "parameter_bytes", "output_bytes"}));
  EXPECT_EQ(MetricOfArgument("total"), "total_bytes");
  EXPECT_EQ(MetricOfArgument("output_bytes"), "output_bytes");
  EXPECT_EQ(MetricOfArgument("nonsense"), "nonsense");
  EXPECT_TRUE(IsPeakMetric("peak_bytes"));
  EXPECT_TRUE(IsPeakMetric("live_peak_padded_bytes"));
  EXPECT_FALSE(IsPeakMetric("total_bytes"));
  EXPECT_FALSE(IsPeakMetric("nonsense"));
}

}  // namespace
}  // namespace xladb::store
