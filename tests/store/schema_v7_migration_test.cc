// The migration from schema version 6 to 7 (store/schema/migrate_v6.sql, store/schema/module_rekey.h): a version-6 file
// (built from tests/fixtures/store/schema_v6.sql, the schema as version 6 shipped) is re-keyed in place:
// module folders lose their leading generic dump folders unless that would collide with another row's key,
// `module_<ID>` placeholders take their ENTRY computation's name, signatures lose `/*index=N*/` comments,
// and identity keys follow. The migrated file has the schema of a new one (no modules_to_rekey left).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/facts/module_facts.h"
#include "store/schema/schema_migrations.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

constexpr const char* kTfName = "cluster_0__XlaCompiledKernel_true__XlaNumConstantArgs_0__XlaNumResourceArgs_0_.12";

// One run: jit_a in xla_dump/ with a tuple parameter printed with an index comment; jit_b in
// xla_dump/host0; jit_c twice (#5 in xla_dump/ and #5 in the root: stripping would collide); module_0 (a
// 2020 TensorFlow file name) whose ENTRY computation is kTfName; jit_d in host1/xla_dump (not leading).
void MakeVersion6File(const std::string& path) {
  const std::string schema_v6 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v6.sql");
  ASSERT_NE(schema_v6.find("version 6"), std::string::npos) << "tests/fixtures/store/schema_v6.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v6);
  raw.exec("PRAGMA user_version = 6");
  raw.exec(std::string(R"sql(
    INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, ingested_at_us)
      VALUES (1, 1, 'xla_dump/module_0001.jit_a.sm_8.0_gpu_after_optimizations-buffer-assignment.txt',
              'buffer_assignment', 'ingested', 10, 'h1', 1);
    INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend, folder, identity_key)
      VALUES (1, 1, 1, 'jit_a', 'after_optimizations', 'gpu', 'xla_dump', 'stale'),
             (2, 1, 2, 'jit_b', 'after_optimizations', 'gpu', 'xla_dump/host0', 'stale'),
             (3, 1, 5, 'jit_c', 'after_optimizations', 'gpu', 'xla_dump', 'stale'),
             (4, 1, 5, 'jit_c', 'after_optimizations', 'gpu', '', 'stale'),
             (5, 1, 0, 'module_0', 'after_optimizations', 'cpu', 'dumps/xla_dump', 'stale'),
             (6, 1, 7, 'jit_d', 'after_optimizations', 'gpu', 'host1/xla_dump', 'stale');
    INSERT INTO module_summary(module_id) VALUES (1), (2), (3), (4), (5), (6);
    INSERT INTO allocations(module_id, allocation_index, size_bytes, color, is_parameter, parameter_number,
                            parameter_shape, parameter_shape_index, is_output, output_shape, is_constant,
                            is_thread_local, is_maybe_live_out, is_preallocated_temp, file_id)
      VALUES (1, 0, 8, 0, 1, 0, '(f32[2], /*index=1*/s32[])', '{}', 1, 'f32[2]', 0, 0, 1, 0, 1);
    INSERT INTO computations(module_id, name, is_entry, instruction_count, file_id)
      VALUES (5, ')sql") + kTfName + R"sql(', 1, 3, 1), (5, 'add_F32.4', 0, 3, 1);
  )sql");
}

struct Row {
  std::string name, folder, signature, key;
};

Row ModuleRow(SQLite::Database& sql, int module_id) {
  SQLite::Statement q(sql, "SELECT name, folder, entry_signature, identity_key FROM modules WHERE module_id = ?");
  q.bind(1, module_id);
  if (!q.executeStep()) return {};
  return {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
          q.getColumn(3).getString()};
}

TEST(SchemaMigrationV7, ModulesAreRekeyedBelowTheDumpRoot) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion6File(tmp / "v6.db"));
  auto db = Database::Open(tmp / "v6.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'modules_to_rekey'").getInt(), 0);

  const Row a = ModuleRow(sql, 1);
  EXPECT_EQ(a.folder, "");
  EXPECT_EQ(a.signature, "((f32[2], s32[])) -> f32[2]");  // the comment is gone
  EXPECT_EQ(a.key, ModuleIdentityKey("jit_a", "after_optimizations", "((f32[2], s32[])) -> f32[2]", ""));
  EXPECT_EQ(ModuleRow(sql, 2).folder, "host0");
  EXPECT_EQ(ModuleRow(sql, 2).key, ModuleIdentityKey("jit_b", "after_optimizations", "", "host0"));
  // #5 in xla_dump/ would collide with #5 in the root: it keeps its folder (and gets its key).
  EXPECT_EQ(ModuleRow(sql, 3).folder, "xla_dump");
  EXPECT_EQ(ModuleRow(sql, 3).key, ModuleIdentityKey("jit_c", "after_optimizations", "", "xla_dump"));
  EXPECT_EQ(ModuleRow(sql, 4).folder, "");
  const Row tf = ModuleRow(sql, 5);
  EXPECT_EQ(tf.name, kTfName);
  EXPECT_EQ(tf.folder, "");  // both generic levels go
  EXPECT_EQ(tf.key, ModuleIdentityKey(kTfName, "after_optimizations", "", ""));
  EXPECT_EQ(ModuleRow(sql, 6).folder, "host1/xla_dump");  // only leading generic folders go
}

TEST(SchemaMigrationV7, MigratedFileHasTheSchemaOfANewFileAndReopensUnchanged) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion6File(tmp / "v6.db"));
  {
    auto db = Database::Open(tmp / "v6.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
  }
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  auto reopened = Database::Open(tmp / "v6.db");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto tables = [](SQLite::Database& sql) {
    std::string names;
    SQLite::Statement q(sql, "SELECT type || ':' || name FROM sqlite_schema ORDER BY type, name");
    while (q.executeStep()) names += q.getColumn(0).getString() + "\n";
    return names;
  };
  EXPECT_EQ(tables(SqliteOf(*reopened.value())), tables(SqliteOf(*fresh.value())));
  EXPECT_EQ(ModuleRow(SqliteOf(*reopened.value()), 2).folder, "host0");
}

}  // namespace
}  // namespace xladb::store
