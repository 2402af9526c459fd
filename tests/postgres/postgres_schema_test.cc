// store/postgres/postgres_schema.h: a PostgreSQL store records its schema version; a binary refuses a store of a newer
// version (for writing and for reading) and leaves it as it was, also when the store becomes newer while it
// waits for the schema lock; a store written before versions were recorded opens as version 6 (and a writer
// migrates it, its modules re-keyed once however many writers open it at once); a store whose schema text
// changed within a version gets the missing parts back.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/schema/schema_migrations.h"
#include "store/backend/database.h"
#include "store/facts/module_facts.h"
#include "store/postgres/postgres_schema.h"
#include "store/schema/schema_dialect.h"
#include "tests/postgres/postgres_test_server.h"

namespace xladb {
namespace {

class PostgresSchemaVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pg_.connection(), nullptr) << pg_.why();
    auto db = store::Database::Open(pg_.uri());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
  }
  void Exec(const std::string& sql) {
    Status done = pg_.connection()->Exec(sql);
    ASSERT_TRUE(done.ok()) << sql << ": " << done.ToString();
  }
  void PretendVersion(int version) {
    Exec("CREATE OR REPLACE FUNCTION xladb_schema_version() RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$SELECT " +
         std::to_string(version) + "$$");
  }

  testing::PostgresTestSchema pg_{"schema_versions"};
};

TEST_F(PostgresSchemaVersions, ANewStoreRecordsItsVersionAndId) {
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion));
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_id()"), store::PostgresSchemaId());
  // Opened again, a current store is left alone (its id and version are what this binary writes).
  auto again = store::Database::Open(pg_.uri());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto reader = store::Database::Open(pg_.uri(), store::Database::Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
}

TEST_F(PostgresSchemaVersions, AStoreOfANewerVersionIsRefusedAndLeftAsItWas) {
  const int newer = store::kSchemaVersion + 1;
  PretendVersion(newer);
  Exec("CREATE OR REPLACE FUNCTION xladb_schema_id() RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$SELECT 'newer'$$");
  Exec("CREATE TABLE newer_table(x BIGINT)");
  Exec("DROP VIEW module_memory CASCADE");  // the newer schema's views differ: an older binary must not recreate them

  for (auto mode : {store::Database::Mode::kReadWrite, store::Database::Mode::kReadOnly}) {
    auto db = store::Database::Open(pg_.uri(), mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(db.status().message().find("schema version " + std::to_string(newer) + ", newer than this xladb's"),
              std::string::npos)
        << db.status().ToString();
  }
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(newer));
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_id()"), "newer");
  EXPECT_EQ(pg_.Value("SELECT to_regclass('module_memory') IS NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT to_regclass('newer_table') IS NOT NULL"), "t");
}

// The version is checked again under the schema lock: a binary that read an older version, then waited while a
// newer binary upgraded the store, applies nothing.
TEST_F(PostgresSchemaVersions, TheVersionIsCheckedAgainUnderTheLock) {
  PretendVersion(store::kSchemaVersion + 1);
  Exec("DROP VIEW module_memory CASCADE");
  Status applied = pg_.connection()->Exec(store::PostgresSchemaTransaction(store::kSchemaVersion));
  EXPECT_FALSE(applied.ok());
  EXPECT_EQ(pg_.connection()->last_sqlstate(), "55000") << applied.ToString();
  Exec("ROLLBACK");
  EXPECT_EQ(pg_.Value("SELECT to_regclass('module_memory') IS NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion + 1));
}

// The same through the writer's open: the store reads as current (the first call of its version function),
// then, under the lock, as newer (the calls after it): refused as FailedPrecondition, nothing applied.
TEST_F(PostgresSchemaVersions, AStoreThatBecameNewerWhileTheWriterWaitedIsRefused) {
  const std::string current = std::to_string(store::kSchemaVersion);
  Exec("CREATE SEQUENCE version_calls");
  Exec("CREATE OR REPLACE FUNCTION xladb_schema_version() RETURNS INTEGER LANGUAGE sql VOLATILE AS "
       "$$SELECT CASE WHEN nextval('version_calls') = 1 THEN " + current + " ELSE " + current + " + 1 END$$");
  Exec("CREATE OR REPLACE FUNCTION xladb_schema_id() RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$SELECT 'older'$$");
  Exec("DROP VIEW module_memory CASCADE");
  auto db = store::Database::Open(pg_.uri());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), Status::Code::kFailedPrecondition) << db.status().ToString();
  EXPECT_NE(db.status().message().find("newer than this xladb"), std::string::npos) << db.status().ToString();
  EXPECT_EQ(pg_.Value("SELECT to_regclass('module_memory') IS NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_id()"), "older");
}

// Read as version 6: a reader refuses it as older than this binary's, a writer migrates it.
TEST_F(PostgresSchemaVersions, AStoreWrittenBeforeVersionsWereRecordedOpensAsVersion6) {
  Exec("DROP FUNCTION xladb_schema_version()");
  auto reader = store::Database::Open(pg_.uri(), store::Database::Mode::kReadOnly);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("has schema version 6, this xladb reads version " +
                                           std::to_string(store::kSchemaVersion)),
            std::string::npos)
      << reader.status().ToString();
  auto writer = store::Database::Open(pg_.uri());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion));
}

// The migration to version 7 re-keys a version-6 store's modules below the dump root (store/schema/module_rekey.h)
// in the transaction after the schema's; two writers opening the store at once re-key it once, and both open.
TEST_F(PostgresSchemaVersions, AVersion6StoreIsRekeyedOnceByWritersOpeningItAtOnce) {
  Exec("INSERT INTO runs(run_id, name, run_time_us, run_time_source, created_at_us, updated_at_us) "
       "VALUES (1, 'r', 1, 'flag', 1, 1)");
  Exec("INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend, folder, identity_key) VALUES "
       "(1, 1, 1, 'jit_a', 'after_optimizations', 'gpu', 'xla_dump', 'stale'), "
       "(2, 1, 2, 'jit_b', 'after_optimizations', 'gpu', 'xla_dump/host0', 'stale')");
  PretendVersion(6);
  std::vector<std::thread> writers;
  std::vector<Status> opened(2, Status::Ok());
  for (size_t i = 0; i < opened.size(); ++i) {
    writers.emplace_back([&, i] {
      auto db = store::Database::Open(pg_.uri());
      opened[i] = db.status();
    });
  }
  for (std::thread& t : writers) t.join();
  for (const Status& s : opened) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion));
  EXPECT_EQ(pg_.Value("SELECT to_regclass('modules_to_rekey') IS NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT folder FROM modules WHERE module_id = 1"), "");
  EXPECT_EQ(pg_.Value("SELECT folder FROM modules WHERE module_id = 2"), "host0");
  EXPECT_EQ(pg_.Value("SELECT identity_key FROM modules WHERE module_id = 2"),
            store::ModuleIdentityKey("jit_b", "after_optimizations", "", "host0"));
}

// A version-8 store (long_texts without the columns of cut parts, and no long_text_details) gets them, and its
// whole texts read as they were through instruction_details.
TEST_F(PostgresSchemaVersions, AVersion8StoreGetsTheColumnsOfCutTextsAndKeepsItsTexts) {
  Exec("DROP VIEW long_text_details CASCADE");  // and instruction_details, which reads it
  Exec("ALTER TABLE long_texts DROP COLUMN shape_id, DROP COLUMN op_name_id, DROP COLUMN source_file_id");
  Exec("INSERT INTO runs(run_id, name, run_time_us, run_time_source, created_at_us, updated_at_us) "
       "VALUES (1, 'r', 1, 'flag', 1, 1)");
  Exec("INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend) "
       "VALUES (1, 1, 1, 'jit_a', 'after_optimizations', 'gpu')");
  Exec("INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, ingested_at_us) "
       "VALUES (1, 1, 'f.txt', 'hlo_module', 'ingested', 1, 'h', 1)");
  const std::string text = "%add = f32[8]{0} add(%x, %y), metadata={op_name=\"jit(a)/add\"}";
  Exec("INSERT INTO long_texts(text_id, hash, text) VALUES (1, 7, '" + text + "')");
  Exec("INSERT INTO instructions(module_id, name, text_id, file_id) VALUES (1, 'add', 1, 1)");
  // Version 8's instruction_details, which the migration replaces in place (CREATE OR REPLACE VIEW).
  Exec("CREATE VIEW instruction_details AS SELECT i.module_id, i.name, cn.text AS computation, i.opcode, "
       "sh.text AS shape, i.op_type, opn.text AS op_name, sf.path AS source_file, i.source_line, i.fusion_kind, "
       "i.custom_call_target, i.is_root, i.sequence_index, t.text AS text, i.file_id FROM instructions i "
       "LEFT JOIN names cn ON cn.name_id = i.computation_id LEFT JOIN shapes sh ON sh.shape_id = i.shape_id "
       "LEFT JOIN names opn ON opn.name_id = i.op_name_id "
       "LEFT JOIN source_files sf ON sf.source_file_id = i.source_file_id "
       "LEFT JOIN long_texts t ON t.text_id = i.text_id");
  PretendVersion(8);
  auto db = store::Database::Open(pg_.uri());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion));
  EXPECT_EQ(pg_.Value("SELECT COUNT(*) FROM long_texts WHERE shape_id IS NULL AND op_name_id IS NULL AND "
                      "source_file_id IS NULL"),
            "1");
  EXPECT_EQ(pg_.Value("SELECT text FROM instruction_details WHERE name = 'add'"), text);
}

// Version 10 adds store_counters (store/facts/interned_removals.h): a version-9 store gets the table, empty.
TEST_F(PostgresSchemaVersions, AVersion9StoreGetsTheStoreCounters) {
  Exec("DROP TABLE store_counters");
  PretendVersion(9);
  auto db = store::Database::Open(pg_.uri());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_version()"), std::to_string(store::kSchemaVersion));
  EXPECT_EQ(pg_.Value("SELECT COUNT(*) FROM store_counters"), "0");
}

TEST_F(PostgresSchemaVersions, ASchemaChangedWithinAVersionIsReapplied) {
  Exec("DROP INDEX modules_by_key");
  Exec("DROP VIEW retrace_groups CASCADE");
  Exec("CREATE OR REPLACE FUNCTION xladb_schema_id() RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$SELECT 'older'$$");
  auto writer = store::Database::Open(pg_.uri());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_EQ(pg_.Value("SELECT to_regclass('modules_by_key') IS NOT NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT to_regclass('retrace_groups') IS NOT NULL"), "t");
  EXPECT_EQ(pg_.Value("SELECT xladb_schema_id()"), store::PostgresSchemaId());
}

TEST_F(PostgresSchemaVersions, AnEmptyDatabaseIsNoStoreToRead) {
  testing::PostgresTestSchema empty{"schema_versions_empty"};
  ASSERT_NE(empty.connection(), nullptr) << empty.why();
  auto reader = store::Database::Open(empty.uri(), store::Database::Mode::kReadOnly);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("holds no xladb store"), std::string::npos) << reader.status().ToString();
}

}  // namespace
}  // namespace xladb
