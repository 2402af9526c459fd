// The migration from schema version 8 to 9 (store/schema/migrate_v8.sql) and the texts version 9 writes
// (store/facts/long_text.h): a version-8 file (built from tests/fixtures/store/schema_v8.sql, the schema as
// version 8 shipped) keeps its whole texts, which read the same through instruction_details; texts ingested
// after the migration are stored without the shape, op_name and source path they print, and read back whole;
// a part printed otherwise than its interned text (C-escaped) stays in the stored text.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/backend/database.h"
#include "store/facts/interned_texts.h"
#include "store/schema/schema_migrations.h"
#include "store/sqlite/sqlite_connection.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::store {
namespace {

// The instruction lines of the module below, as printed (without "ROOT ").
const std::string kAdd =
    "%add.3 = f32[256]{0} add(f32[256]{0} %a, f32[256]{0} %b), metadata={op_name=\"jit(step)/add\" "
    "source_file=\"/src/model.py\" source_line=7}";
const std::string kEscaped =
    "%mul.4 = f32[256]{0} multiply(f32[256]{0} %add.3, f32[256]{0} %b), metadata={op_name=\"jit(step)/\\\"odd\\\"\" "
    "source_file=\"/src/model.py\" source_line=9}";

void MakeVersion8File(const std::string& path) {
  const std::string schema_v8 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v8.sql");
  ASSERT_NE(schema_v8.find("version 8"), std::string::npos) << "tests/fixtures/store/schema_v8.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v8);
  raw.exec("PRAGMA user_version = 8");
  raw.exec(R"sql(
    INSERT INTO runs(run_id, name, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'old', 1, 'flag', 1, 1);
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, ingested_at_us)
      VALUES (1, 1, 'module_0001.jit_step.after_optimizations.txt', 'hlo_module', 'ingested', 10, 'h1', 1);
    INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend) VALUES (1, 1, 1, 'jit_step',
      'after_optimizations', 'gpu');
    INSERT INTO shapes(shape_id, text) VALUES (1, 'f32[256]{0}');
    INSERT INTO source_files(source_file_id, path) VALUES (1, '/src/model.py');
  )sql");
  SQLite::Statement name(raw, "INSERT INTO names(name_id, hash, text) VALUES (1, ?, 'jit(step)/add')");
  name.bind(1, static_cast<int64_t>(TextHash("jit(step)/add")));
  name.exec();
  SQLite::Statement text(raw, "INSERT INTO long_texts(text_id, hash, text) VALUES (1, ?, ?)");
  text.bind(1, static_cast<int64_t>(TextHash(kAdd)));
  text.bind(2, kAdd);
  text.exec();
  raw.exec("INSERT INTO instructions(module_id, name, opcode, shape_id, op_name_id, source_file_id, source_line, "
           "text_id, file_id) VALUES (1, 'add.3', 'add', 1, 1, 1, 7, 1, 1)");
}

std::string Text(SQLite::Database& sql, const std::string& query) { return sql.execAndGet(query).getString(); }

TEST(SchemaMigrationV9, StoredTextsStayWholeAndNewTextsAreCutAndReadBackWhole) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion8File(tmp / "v8.db"));
  auto db = Database::Open(tmp / "v8.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(Text(sql, "SELECT text FROM instruction_details WHERE module_id = 1 AND name = 'add.3'"), kAdd);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM long_texts WHERE shape_id IS NULL AND op_name_id IS NULL AND "
                           "source_file_id IS NULL").getInt(), 1);
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  for (const char* object : {"long_texts", "long_text_details", "instruction_details"}) {
    const std::string q = std::string("SELECT sql FROM sqlite_schema WHERE name = '") + object + "'";
    const std::string migrated = Text(sql, q), made = Text(SqliteOf(*fresh.value()), q);
    if (std::string(object) == "long_texts") {
      // ALTER TABLE appends the columns to the stored text; the columns are the same, in the same order.
      EXPECT_EQ(Text(sql, "SELECT group_concat(name || ' ' || type) FROM pragma_table_info('long_texts')"),
                Text(SqliteOf(*fresh.value()),
                     "SELECT group_concat(name || ' ' || type) FROM pragma_table_info('long_texts')"));
    } else {
      EXPECT_EQ(migrated, made) << object;
    }
  }

  // The same instruction ingested by version 9 into a new run: another row, without the parts, read whole.
  testing::WriteFile(tmp / "new/module_0001.jit_step.after_optimizations.txt",
                     "HloModule jit_step, entry_computation_layout={(f32[256]{0}, f32[256]{0})->f32[256]{0}}\n\n"
                     "ENTRY %main (a: f32[256], b: f32[256]) -> f32[256] {\n"
                     "  %a = f32[256]{0} parameter(0)\n"
                     "  %b = f32[256]{0} parameter(1)\n  " + kAdd + "\n  ROOT " + kEscaped + "\n}\n");
  auto summary = testing::IngestRun(*db.value(), tmp / "new", "new");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const std::string new_module = "(SELECT module_id FROM modules WHERE run_id = (SELECT run_id FROM runs "
                                 "WHERE name = 'new'))";
  EXPECT_EQ(Text(sql, "SELECT text FROM instruction_details WHERE name = 'add.3' AND module_id = " + new_module), kAdd);
  EXPECT_EQ(Text(sql, "SELECT text FROM instruction_details WHERE name = 'mul.4' AND module_id = " + new_module),
            kEscaped);
  EXPECT_EQ(Text(sql, "SELECT text FROM instruction_details WHERE module_id = 1 AND name = 'add.3'"), kAdd);
  // add.3's stored text: each part a placeholder byte.
  EXPECT_EQ(Text(sql, "SELECT replace(replace(replace(t.text, char(1), '<shape>'), char(2), '<op_name>'), char(3), "
                      "'<source>') FROM instructions i JOIN long_texts t ON t.text_id = i.text_id WHERE i.name = "
                      "'add.3' AND i.module_id = " + new_module),
            "%add.3 = <shape> add(f32[256]{0} %a, f32[256]{0} %b), metadata={op_name=\"<op_name>\" "
            "source_file=\"<source>\" source_line=7}");
  // mul.4's op_name is printed C-escaped, so it stays in the text; its shape and path are cut.
  EXPECT_EQ(Text(sql, "SELECT (t.shape_id IS NOT NULL) || (t.op_name_id IS NOT NULL) || (t.source_file_id IS NOT NULL) "
                      "FROM instructions i JOIN long_texts t ON t.text_id = i.text_id WHERE i.name = 'mul.4' AND "
                      "i.module_id = " + new_module),
            "101");
  // The old run's text, and the new run's four (the parameters a and b, add.3, mul.4).
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM long_texts").getInt(), 5);
}

}  // namespace
}  // namespace xladb::store
