// The schema on both backends from its one source (store/schema/schema.sql, store/schema/schema_dialect.h): PostgreSQL
// accepts the translated text, and both expose the same tables, columns (in order, with matching types),
// indexes and views, and the views whose text differs per dialect give the same rows.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/schema/schema_dialect.h"
#include "tests/postgres/postgres_test_server.h"
#include "tests/store/test_dirs.h"

namespace xladb {
namespace {

using store::SqlDialect;

// An object's kind ('table', 'view') and its columns in order, each "name type" (type lower-case, empty for
// view columns, whose types the two databases infer differently).
struct Shape {
  std::string kind;
  std::vector<std::string> columns;
  bool operator==(const Shape&) const = default;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// PostgreSQL's name for a column type of schema.sql.
std::string PostgresType(const std::string& sqlite_type) {
  const std::string t = Lower(sqlite_type);
  if (t == "integer") return "bigint";
  if (t == "real") return "double precision";
  return t;
}

std::map<std::string, Shape> SqliteShapes(SQLite::Database& db) {
  std::map<std::string, Shape> shapes;
  SQLite::Statement objects(db, "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') "
                                "AND name NOT LIKE 'sqlite_%'");
  while (objects.executeStep()) {
    Shape& shape = shapes[objects.getColumn(0).getString()];
    shape.kind = objects.getColumn(1).getString();
    SQLite::Statement columns(db, "SELECT name, type FROM pragma_table_info(?) ORDER BY cid");
    columns.bind(1, objects.getColumn(0).getString());
    while (columns.executeStep()) {
      shape.columns.push_back(columns.getColumn(0).getString() + " " +
                              (shape.kind == "table" ? PostgresType(columns.getColumn(1).getString()) : ""));
    }
  }
  return shapes;
}

std::map<std::string, Shape> PostgresShapes(store::PostgresConnection& pg) {
  std::map<std::string, Shape> shapes;
  auto rows = pg.Query(
      "SELECT t.table_name, CASE t.table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END, c.column_name, "
      "       c.data_type "
      "FROM information_schema.tables t JOIN information_schema.columns c "
      "  ON c.table_schema = t.table_schema AND c.table_name = t.table_name "
      "WHERE t.table_schema = current_schema() ORDER BY t.table_name, c.ordinal_position");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok()) return shapes;
  for (const auto& row : rows->values) {
    Shape& shape = shapes[*row[0]];
    shape.kind = *row[1];
    shape.columns.push_back(*row[2] + " " + (shape.kind == "table" ? *row[3] : ""));
  }
  return shapes;
}

class SchemaParity : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    Status applied = pg_.connection()->Exec(store::SchemaSql(SqlDialect::kPostgresql));
    ASSERT_TRUE(applied.ok()) << applied.ToString();
    auto db = store::Database::Open(tmp_ / "parity.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    sqlite_ = std::move(db.value());
  }

  testing::PostgresTestSchema pg_{"schema_parity"};
  testing::TempDir tmp_;
  std::unique_ptr<store::Database> sqlite_;
};

TEST_F(SchemaParity, BothBackendsHaveTheSameTablesColumnsAndViews) {
  const auto sqlite = SqliteShapes(SqliteOf(*sqlite_));
  const auto postgres = PostgresShapes(*pg_.connection());
  ASSERT_GE(sqlite.size(), 37u);  // 26 tables and 11 views in schema.sql
  for (const auto& [name, shape] : sqlite) {
    auto it = postgres.find(name);
    if (it == postgres.end()) {
      ADD_FAILURE() << shape.kind << " " << name << " is missing on PostgreSQL";
      continue;
    }
    EXPECT_EQ(it->second.kind, shape.kind) << name;
    EXPECT_EQ(it->second.columns, shape.columns) << name;
  }
  for (const auto& [name, shape] : postgres) {
    EXPECT_TRUE(sqlite.count(name)) << shape.kind << " " << name << " exists on PostgreSQL only";
  }
}

TEST_F(SchemaParity, BothBackendsHaveTheSameIndexes) {
  std::vector<std::string> sqlite;
  SQLite::Statement q(SqliteOf(*sqlite_),
                      "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name");
  while (q.executeStep()) sqlite.push_back(q.getColumn(0).getString());
  ASSERT_GE(sqlite.size(), 10u);
  auto pg = pg_.connection()->Query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                                    "ORDER BY indexname");
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  std::vector<std::string> postgres;
  for (const auto& row : pg->values) postgres.push_back(*row[0]);
  for (const std::string& name : sqlite) {
    EXPECT_NE(std::find(postgres.begin(), postgres.end(), name), postgres.end()) << "index " << name;
  }
}

TEST_F(SchemaParity, ApplyingTheSchemaAgainChangesNothing) {
  const auto before = PostgresShapes(*pg_.connection());
  Status again = pg_.connection()->Exec(store::SchemaSql(SqlDialect::kPostgresql));
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(PostgresShapes(*pg_.connection()), before);
}

// value_positions and value_uses have one text per dialect (JSON functions differ): the same stored value
// must unpack to the same rows on both.
TEST_F(SchemaParity, JsonViewsUnpackTheSameRows) {
  const char* inserts =
      "INSERT INTO runs(run_id, name, run_time_us, run_time_source, created_at_us, updated_at_us) "
      "VALUES (1, 'r', 0, 'flag', 0, 0);"
      "INSERT INTO modules(module_id, run_id, name, stage, backend) VALUES (1, 1, 'jit_f', '', '');"
      "INSERT INTO buffer_values(module_id, value_id, instruction, shape_index, is_phi, positions, uses, "
      "                          uses_state, file_id) VALUES "
      "(1, 7, 'add.1', '{}', 0, NULL, '[[\"mul.2\",0,\"{}\"],[\"tuple.3\",1,\"{1}\"]]', 'listed', 1),"
      "(1, 8, 'tuple.3', '{1}', 0, '[[\"tuple.3\",\"{1}\"],[\"gte.\\\"4\\\"\",\"{}\"]]', '[]', 'listed', 1);";
  ASSERT_NO_THROW(SqliteOf(*sqlite_).exec(inserts));
  Status inserted = pg_.connection()->Exec(inserts);
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  for (const char* view : {"value_positions", "value_uses"}) {
    const std::string sql = std::string("SELECT * FROM ") + view + " ORDER BY value_id, ordinal";
    const testing::TextRows sqlite = testing::SqliteRows(SqliteOf(*sqlite_), sql);
    const testing::TextRows postgres = testing::PostgresRows(*pg_.connection(), sql);
    EXPECT_EQ(postgres, sqlite) << view;
    EXPECT_EQ(sqlite.size(), std::string(view) == "value_positions" ? 3u : 2u) << view;
  }
}

}  // namespace
}  // namespace xladb
