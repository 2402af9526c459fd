// Schema versions: a database of the current version opens as is; a newer one is refused with a message
// naming both versions; the schema is applied idempotently (opening twice changes nothing); a version-1 file
// (built here from tests/fixtures/store/schema_v1.sql, the schema as released) is migrated in place on a
// read-write open, all or nothing, and refused with a hint on a read-only one.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/schema/schema_migrations.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

TEST(SchemaVersion, NewerDatabaseIsRefusedNamingBothVersions) {
  testing::TempDir tmp;
  std::string path = tmp / "x.db";
  ASSERT_TRUE(Database::Open(path).ok());
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  }
  for (auto mode : {Database::Mode::kReadWrite, Database::Mode::kReadOnly}) {
    auto db = Database::Open(path, mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(db.status().message().find(std::to_string(kSchemaVersion + 1)), std::string::npos);
    EXPECT_NE(db.status().message().find(std::to_string(kSchemaVersion)), std::string::npos);
  }
}

TEST(SchemaVersion, ReopeningKeepsTheSchemaAndVersion) {
  testing::TempDir tmp;
  std::string path = tmp / "x.db";
  ASSERT_TRUE(Database::Open(path).ok());
  int64_t objects = 0;
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    objects = raw.execAndGet("SELECT COUNT(*) FROM sqlite_schema").getInt64();
    EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  }
  EXPECT_GT(objects, 30);
  ASSERT_TRUE(Database::Open(path).ok());
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM sqlite_schema").getInt64(), objects);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
}

// A new file gets kNewFilePageSize-byte pages; a file made by SQLite's default (4 KiB pages, as every store was
// before) keeps its pages, takes the schema and answers.
TEST(SchemaVersion, NewFilesHaveEightKibPagesAndOlderFilesKeepTheirs) {
  testing::TempDir tmp;
  ASSERT_TRUE(Database::Open(tmp / "new.db").ok());
  {
    SQLite::Database raw(tmp / "new.db", SQLite::OPEN_READONLY);
    EXPECT_EQ(raw.execAndGet("PRAGMA page_size").getInt(), 8192);
    EXPECT_EQ(raw.execAndGet("PRAGMA auto_vacuum").getInt(), 2);  // incremental
  }
  {
    SQLite::Database old(tmp / "old.db", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    old.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE made_before(x)");
  }
  auto reopened = Database::Open(tmp / "old.db");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  SQLite::Database raw(tmp / "old.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA page_size").getInt(), 4096);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM runs").getInt(), 0);
}

TEST(SchemaVersion, ANonDatabaseFileIsAClearError) {
  testing::TempDir tmp;
  testing::WriteFile(tmp / "notes.db", "these are my notes, not a database, and they are longer than a header\n");
  auto db = Database::Open(tmp / "notes.db");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("notes.db"), std::string::npos) << db.status().message();
}

// ---------------------------------------------------------------------------------------------------
// Migration from version 1

constexpr int64_t kTextId = -1234567890123456789;  // version 1 long_texts.text_id: a signed XXH3-64
constexpr char kLongText[] =
    "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %param.0), kind=kLoop, calls=%fused_computation, "
    "metadata={op_type=\"add\" op_name=\"jit(train_step)/add\" source_file=\"/src/model.py\" source_line=42}";

// A version-1 file as xladb 1 left it: the released schema, user_version 1, and no rows.
void MakeEmptyVersion1File(const std::string& path) {
  const std::string schema_v1 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v1.sql");
  ASSERT_NE(schema_v1.find("version 1"), std::string::npos) << "tests/fixtures/store/schema_v1.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v1);
  raw.exec("PRAGMA user_version = 1");
}

// One run, file and module; value 0 (fusion.1) with a live range [3, 7], value 1 (param.0) without one;
// instructions fusion.1 (schedule time 0, /src/model.py, whole text in long_texts), param.0 (/src/model.py)
// and tuple.2 (no metadata); one peak buffer (value 0).
void MakeVersion1File(const std::string& path) {
  MakeEmptyVersion1File(path);
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  raw.exec(R"sql(
    INSERT INTO runs VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000,
                             1700000000000000);
    INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend)
    VALUES (1, 1, 7, 'jit_train_step', 'after_optimizations', 'gpu');
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, module_id, line_count,
                           ingested_at_us)
    VALUES (1, 1, 'module_0007.jit_train_step.after_optimizations-buffer-assignment.txt', 'buffer_assignment',
            'ingested', 1234, '0123456789abcdef0123456789abcdef', 1, 40, 1700000000000000);
    INSERT INTO shapes VALUES (1, 'f32[8]{0}');
    INSERT INTO buffer_values(module_id, value_id, instruction, shape_index, is_phi, color, allocation_index,
                              offset_bytes, size_bytes, shape_id, live_start, live_end, positions, uses,
                              uses_state, file_id)
    VALUES (1, 0, 'fusion.1', '{}', 0, 0, 0, 0, 32, 1, 3, 7, '[["fusion.1","{}"]]', '[["tuple.2",0,"{}"]]',
            'listed', 1),
           (1, 1, 'param.0', '{}', 0, 0, 1, 0, 32, 1, NULL, NULL, '[["param.0","{}"],["tuple.2","{0}"]]',
            '[["fusion.1",0,"{}"]]', 'listed', 1);
    INSERT INTO peak_buffers VALUES (1, 0, 'fusion.1', '{}', 32, 32, 0, 1);
  )sql");
  SQLite::Statement text(raw, "INSERT INTO long_texts VALUES (?, ?)");
  text.bind(1, static_cast<int64_t>(kTextId));
  text.bind(2, kLongText);
  text.exec();
  SQLite::Statement ins(raw, R"sql(
    INSERT INTO instructions(module_id, name, computation, opcode, shape_id, op_type, op_name, source_file,
                             source_line, fusion_kind, is_root, sequence_index, schedule_time, text_id, file_id)
    VALUES (1, 'fusion.1', 'main', 'fusion', 1, 'add', 'jit(train_step)/add', '/src/model.py', 42, 'kLoop', 0,
            1, 0, ?, 1),
           (1, 'param.0', 'main', 'parameter', 1, NULL, NULL, '/src/model.py', 7, NULL, 0, 0, NULL, NULL, 1),
           (1, 'tuple.2', 'main', 'tuple', NULL, NULL, NULL, NULL, NULL, NULL, 1, 2, NULL, NULL, 1))sql");
  ins.bind(1, static_cast<int64_t>(kTextId));
  ins.exec();
}

std::vector<std::string> Columns(SQLite::Database& db, const std::string& table) {
  std::vector<std::string> names;
  SQLite::Statement q(db, "SELECT name FROM pragma_table_info(?)");
  q.bind(1, table);
  while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  return names;
}

bool HasColumn(SQLite::Database& db, const std::string& table, const std::string& column) {
  for (const auto& name : Columns(db, table)) {
    if (name == column) return true;
  }
  return false;
}

std::string ObjectType(SQLite::Database& db, const std::string& name) {
  SQLite::Statement q(db, "SELECT type FROM sqlite_schema WHERE name = ?");
  q.bind(1, name);
  return q.executeStep() ? q.getColumn(0).getString() : "";
}

int64_t Count(SQLite::Database& db, const std::string& from) {
  return db.execAndGet("SELECT COUNT(*) FROM " + from).getInt64();
}

TEST(SchemaMigration, Version1FixtureIsTheReleasedSchema) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(tmp / "v1.db"));
  SQLite::Database raw(tmp / "v1.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 1);
  EXPECT_EQ(ObjectType(raw, "live_ranges"), "view");
  EXPECT_TRUE(HasColumn(raw, "buffer_values", "live_start"));
  EXPECT_TRUE(HasColumn(raw, "instructions", "schedule_time"));
  EXPECT_EQ(ObjectType(raw, "schedule"), "");
  EXPECT_EQ(Count(raw, "live_ranges"), 1);
  EXPECT_EQ(Count(raw, "instruction_sequence"), 1);
}

TEST(SchemaMigration, Version1FileIsMigratedInPlace) {
  testing::TempDir tmp;
  const std::string path = tmp / "v1.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(path));
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());

  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(kSchemaVersion, 10);
  EXPECT_EQ(sql.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM pragma_foreign_key_check").getInt64(), 0);

  // Rows that did not move are all there.
  EXPECT_EQ(Count(sql, "runs"), 1);
  EXPECT_EQ(Count(sql, "dump_files"), 1);
  EXPECT_EQ(Count(sql, "modules"), 1);
  EXPECT_EQ(Count(sql, "peak_buffers"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT group_concat(value_id || ':' || instruction || ':' || size_bytes, ' ') "
                           "FROM (SELECT * FROM buffer_values ORDER BY value_id)")
                .getString(),
            "0:fusion.1:32 1:param.0:32");

  // Live ranges: a table of their own now, with the one value that had a range; the columns left
  // buffer_values, and the view live_ranges keeps its version-1 columns.
  EXPECT_EQ(ObjectType(sql, "buffer_live_ranges"), "table");
  EXPECT_EQ(ObjectType(sql, "live_ranges"), "view");
  EXPECT_FALSE(HasColumn(sql, "buffer_values", "live_start"));
  EXPECT_FALSE(HasColumn(sql, "buffer_values", "live_end"));
  EXPECT_EQ(Count(sql, "buffer_live_ranges"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT module_id || ':' || value_id || ':' || live_start || ':' || live_end || ':' || "
                           "file_id FROM buffer_live_ranges")
                .getString(),
            "1:0:3:7:1");

  // The schedule: a table of its own, with the one instruction that had a schedule time.
  EXPECT_EQ(ObjectType(sql, "schedule"), "table");
  EXPECT_FALSE(HasColumn(sql, "instructions", "schedule_time"));
  EXPECT_EQ(Count(sql, "schedule"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT module_id || ':' || time || ':' || instruction || ':' || file_id FROM schedule")
                .getString(),
            "1:0:fusion.1:1");

  // Instructions: all three, their source file interned once.
  EXPECT_FALSE(HasColumn(sql, "instructions", "source_file"));
  EXPECT_TRUE(HasColumn(sql, "instructions", "source_file_id"));
  EXPECT_TRUE(HasColumn(sql, "instructions", "instruction_id"));
  EXPECT_EQ(Count(sql, "instructions"), 3);
  EXPECT_EQ(Count(sql, "source_files"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT path FROM source_files").getString(), "/src/model.py");
  EXPECT_EQ(sql.execAndGet("SELECT group_concat(i.name || ':' || IFNULL(sf.path, '-') || ':' || "
                           "IFNULL(i.source_line, '-'), ' ') FROM (SELECT * FROM instructions ORDER BY name) i "
                           "LEFT JOIN source_files sf USING (source_file_id)")
                .getString(),
            "fusion.1:/src/model.py:42 param.0:/src/model.py:7 tuple.2:-:-");
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(DISTINCT source_file_id) FROM instructions").getInt64(), 1);
  EXPECT_EQ(sql.execAndGet("SELECT opcode FROM instructions WHERE module_id = 1 AND name = 'tuple.2'").getString(),
            "tuple");

  // The long text: found by its hash (version 1's text_id), and from its instruction through the new text_id.
  EXPECT_EQ(Count(sql, "long_texts"), 1);
  {
    SQLite::Statement q(sql, "SELECT text FROM long_texts WHERE hash = ?");
    q.bind(1, static_cast<int64_t>(kTextId));
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getString(), kLongText);
  }
  EXPECT_EQ(sql.execAndGet("SELECT t.text FROM instructions i JOIN long_texts t USING (text_id) "
                           "WHERE i.name = 'fusion.1'")
                .getString(),
            kLongText);

  // The views over the moved facts run and give what was inserted.
  EXPECT_EQ(Count(sql, "live_ranges"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT value_id || ':' || instruction || ':' || shape_index || ':' || live_start || "
                           "':' || live_end FROM live_ranges")
                .getString(),
            "0:fusion.1:{}:3:7");
  EXPECT_EQ(Count(sql, "instruction_sequence"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT time || ':' || instruction || ':' || opcode FROM instruction_sequence")
                .getString(),
            "0:fusion.1:fusion");
  EXPECT_EQ(Count(sql, "peak_buffer_details"), 1);
  EXPECT_EQ(sql.execAndGet("SELECT value_id || ':' || shape || ':' || opcode || ':' || source_file || ':' || "
                           "source_line || ':' || live_start || ':' || live_end FROM peak_buffer_details")
                .getString(),
            "0:f32[8]{0}:fusion:/src/model.py:42:3:7");
  EXPECT_EQ(Count(sql, "instruction_details"), 3);
  EXPECT_EQ(sql.execAndGet("SELECT shape || ':' || source_file || ':' || text FROM instruction_details "
                           "WHERE name = 'fusion.1'")
                .getString(),
            std::string("f32[8]{0}:/src/model.py:") + kLongText);
  // Version 6 interned computation and op_name; the view spells them out as version 1 stored them.
  EXPECT_EQ(sql.execAndGet("SELECT computation || ':' || op_name FROM instruction_details WHERE name = 'fusion.1'")
                .getString(),
            "main:jit(train_step)/add");
  EXPECT_EQ(Count(sql, "value_positions"), 3);  // value 0: its own; value 1: its own and tuple.2 {0}
  EXPECT_EQ(sql.execAndGet("SELECT group_concat(value_id || ':' || ordinal || ':' || instruction || ':' || "
                           "shape_index, ' ') FROM (SELECT * FROM value_positions ORDER BY value_id, ordinal)")
                .getString(),
            "0:0:fusion.1:{} 1:0:param.0:{} 1:1:tuple.2:{0}");
  EXPECT_EQ(Count(sql, "value_uses"), 2);

  // The version-1 tables renamed during the migration are gone.
  EXPECT_EQ(ObjectType(sql, "instructions_v1"), "");
  EXPECT_EQ(ObjectType(sql, "long_texts_v1"), "");
}

TEST(SchemaMigration, MigratedFileReopensUnchanged) {
  testing::TempDir tmp;
  const std::string path = tmp / "v1.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(path));
  ASSERT_TRUE(Database::Open(path).ok());
  std::string schema;
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    schema = raw.execAndGet("SELECT group_concat(type || ' ' || name || ' ' || IFNULL(sql, ''), char(10)) "
                            "FROM (SELECT * FROM sqlite_schema ORDER BY name)")
                 .getString();
  }
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("SELECT group_concat(type || ' ' || name || ' ' || IFNULL(sql, ''), char(10)) "
                           "FROM (SELECT * FROM sqlite_schema ORDER BY name)")
                .getString(),
            schema);
  EXPECT_EQ(Count(sql, "buffer_live_ranges"), 1);
  EXPECT_EQ(Count(sql, "schedule"), 1);
  EXPECT_EQ(Count(sql, "instructions"), 3);
  EXPECT_EQ(Count(sql, "source_files"), 1);
  auto ro = Database::Open(path, Database::Mode::kReadOnly);
  EXPECT_TRUE(ro.ok()) << ro.status().ToString();
}

// Each table's columns and each view's and index's SQL, by name.
std::map<std::string, std::string> SchemaShape(SQLite::Database& db) {
  std::map<std::string, std::string> shape;
  SQLite::Statement objects(db, "SELECT type, name, IFNULL(sql, '') FROM sqlite_schema");
  while (objects.executeStep()) {
    const std::string type = objects.getColumn(0).getString();
    const std::string name = objects.getColumn(1).getString();
    std::string description = type + ": ";
    if (type == "table") {
      SQLite::Statement columns(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid");
      columns.bind(1, name);
      while (columns.executeStep()) {
        description += columns.getColumn(0).getString() + " " + columns.getColumn(1).getString() +
                       (columns.getColumn(2).getInt() ? " NOT NULL" : "") +
                       (columns.getColumn(3).getInt() ? " PK" + columns.getColumn(3).getString() : "") + ", ";
      }
      description += db.execAndGet("SELECT COUNT(*) FROM pragma_index_list('" + name + "')").getString() +
                     " indexes";
    } else {
      description += objects.getColumn(2).getString();
    }
    shape[name] = description;
  }
  return shape;
}

// A migrated file must be indistinguishable, in tables, columns, indexes and views, from a file created by
// this version: writers and queries assume the current schema, whichever way the file got it.
TEST(SchemaMigration, MigratedFileHasTheSchemaOfANewFile) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeEmptyVersion1File(tmp / "v1.db"));
  auto migrated = Database::Open(tmp / "v1.db");
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  const auto want = SchemaShape(SqliteOf(*fresh.value()));
  const auto got = SchemaShape(SqliteOf(*migrated.value()));
  for (const auto& [name, description] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      ADD_FAILURE() << name << " is missing from the migrated file";
    } else {
      EXPECT_EQ(it->second, description) << name << " differs in the migrated file";
    }
  }
  for (const auto& [name, description] : got) {
    EXPECT_TRUE(want.count(name)) << name << " is left over in the migrated file: " << description;
  }
}

// Version 2 writes positions = NULL for a value whose only position is its own; value_positions lists such a
// value all the same. That must hold in a migrated file too, for values written after the migration.
TEST(SchemaMigration, MigratedFileListsTheOwnPositionOfValuesWrittenAfterIt) {
  testing::TempDir tmp;
  const std::string path = tmp / "v1.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(path));
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  sql.exec("INSERT INTO buffer_values(module_id, value_id, instruction, shape_index, is_phi, positions, uses, "
           "uses_state, file_id) VALUES (1, 2, 'tuple.2', '{}', 0, NULL, '[]', 'none', 1)");
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM value_positions WHERE value_id = 2").getInt64(), 1);
  EXPECT_EQ(Count(sql, "value_positions"), 4);
}

// A migration that fails part-way (here: a version-1 file whose instructions table was dropped by hand)
// is an error naming the version it migrates from, and leaves the file exactly as it was.
TEST(SchemaMigration, FailedMigrationIsRolledBack) {
  testing::TempDir tmp;
  const std::string path = tmp / "v1.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(path));
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("DROP TABLE instructions");
  }
  auto db = Database::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("version 1"), std::string::npos) << db.status().message();
  EXPECT_NE(db.status().message().find("instructions"), std::string::npos) << db.status().message();

  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 1);
  EXPECT_EQ(ObjectType(raw, "live_ranges"), "view");  // dropped by the migration's first statement
  EXPECT_EQ(ObjectType(raw, "instruction_sequence"), "view");
  EXPECT_EQ(ObjectType(raw, "peak_buffer_details"), "view");
  EXPECT_EQ(ObjectType(raw, "long_texts"), "table");  // not renamed to long_texts_v1
  EXPECT_EQ(ObjectType(raw, "long_texts_v1"), "");
  EXPECT_EQ(ObjectType(raw, "schedule"), "");
  EXPECT_EQ(ObjectType(raw, "source_files"), "");
  EXPECT_TRUE(HasColumn(raw, "buffer_values", "live_start"));
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM buffer_values WHERE live_start IS NOT NULL").getInt64(), 1);
  EXPECT_EQ(Count(raw, "long_texts"), 1);
}

TEST(SchemaMigration, ReadOnlyOpenOfVersion1FileSaysHowToMigrate) {
  testing::TempDir tmp;
  const std::string path = tmp / "v1.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion1File(path));
  auto ro = Database::Open(path, Database::Mode::kReadOnly);
  ASSERT_FALSE(ro.ok());
  EXPECT_EQ(ro.status().code(), Status::Code::kFailedPrecondition);
  const std::string& message = ro.status().message();
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("version 1"), std::string::npos) << message;
  EXPECT_NE(message.find("version " + std::to_string(kSchemaVersion)), std::string::npos) << message;
  EXPECT_NE(message.find("migrates it"), std::string::npos) << message;
  EXPECT_NE(message.find("xladb ingest"), std::string::npos) << message;
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 1);  // untouched
  }
  // Doing what it says (a read-write open) makes the file readable.
  ASSERT_TRUE(Database::Open(path).ok());
  EXPECT_TRUE(Database::Open(path, Database::Mode::kReadOnly).ok());
}


// ---------------------------------------------------------------------------------------------------
// Migration from version 2

// A version-2 file as xladb 2 left it (tests/fixtures/store/schema_v2.sql, the schema as released), with one
// run, one module and one allocation.
void MakeVersion2File(const std::string& path) {
  const std::string schema_v2 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v2.sql");
  ASSERT_NE(schema_v2.find("version 2"), std::string::npos) << "tests/fixtures/store/schema_v2.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v2);
  raw.exec("PRAGMA user_version = 2");
  raw.exec(R"sql(
    INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);
    INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend)
      VALUES (1, 1, 7, 'jit_train_step', 'after_optimizations', 'tpu');
    INSERT INTO module_summary(module_id) VALUES (1);
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, module_id, line_count,
                           unknown_lines, issue_count, rows_written, ingested_at_us)
      VALUES (1, 1, 'module_0007.jit_train_step.after_optimizations-buffer-assignment.txt', 'buffer_assignment',
              'ingested', 10, 'abc', 1, 3, 0, 0, 1, 1700000000000000);
    INSERT INTO allocations(module_id, allocation_index, size_bytes, color, is_parameter, is_output, is_constant,
                            is_thread_local, is_maybe_live_out, is_preallocated_temp, file_id)
      VALUES (1, 0, 4096, 0, 0, 0, 0, 0, 0, 1, 1);
  )sql");
}

TEST(SchemaMigration, Version2FileGainsModuleFoldersAndUploadDigests) {
  testing::TempDir tmp;
  const std::string path = tmp / "v2.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion2File(path));
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(sql.execAndGet("PRAGMA integrity_check").getString(), "ok");
  // Every module ingested before version 3 was keyed without its folder: the run root.
  EXPECT_EQ(sql.execAndGet("SELECT folder FROM modules WHERE module_id = 1").getString(), "");
  EXPECT_TRUE(sql.execAndGet("SELECT content_digest FROM runs WHERE run_id = 1").isNull());
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM pragma_table_info('module_memory') WHERE name = 'folder'").getInt(),
            1);
  EXPECT_EQ(Count(sql, "allocations"), 1);
}

TEST(SchemaMigration, MigratedVersion2FileHasTheSchemaOfANewFile) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion2File(tmp / "v2.db"));
  auto migrated = Database::Open(tmp / "v2.db");
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(SchemaShape(SqliteOf(*migrated.value())), SchemaShape(SqliteOf(*fresh.value())));
}

// A version-3 file: one module whose buffer assignment had two parameters, a tuple output and a preallocated
// temp, with live ranges of three values (two of them sharing one slice).
void MakeVersion3File(const std::string& path) {
  const std::string schema_v3 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v3.sql");
  ASSERT_NE(schema_v3.find("version 3"), std::string::npos) << "tests/fixtures/store/schema_v3.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v3);
  raw.exec("PRAGMA user_version = 3");
  raw.exec(R"sql(
    INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);
    INSERT INTO modules(module_id, run_id, xla_module_id, name, stage, backend, folder)
      VALUES (1, 1, 7, 'jit_train_step', 'after_optimizations', 'tpu', 'host0');
    INSERT INTO module_summary(module_id, allocation_count) VALUES (1, 3);
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, module_id, line_count,
                           unknown_lines, issue_count, rows_written, ingested_at_us)
      VALUES (1, 1, 'host0/module_0007.jit_train_step.after_optimizations-buffer-assignment.txt',
              'buffer_assignment', 'ingested', 10, 'abc', 1, 3, 0, 0, 1, 1700000000000000);
    INSERT INTO allocations(module_id, allocation_index, size_bytes, color, is_parameter, parameter_number,
                            parameter_shape, parameter_shape_index, is_output, output_shape, is_constant,
                            is_thread_local, is_maybe_live_out, is_preallocated_temp, file_id)
      VALUES (1, 0, 4096, 0, 1, 1, 's32[]', '{}', 0, NULL, 0, 0, 0, 0, 1),
             (1, 1, 8192, 0, 1, 0, 'f32[8,128]', '{}', 0, NULL, 0, 0, 0, 0, 1),
             (1, 2, 1024, 1, 0, NULL, NULL, NULL, 1, '(f32[8], f32[8])', 0, 0, 1, 0, 1),
             (1, 3, 2048, 0, 0, NULL, NULL, NULL, 0, NULL, 0, 0, 0, 1, 1);
    INSERT INTO buffer_values(module_id, value_id, instruction, shape_index, is_phi, allocation_index, offset_bytes,
                              size_bytes, file_id)
      VALUES (1, 0, 'p0', '{}', 0, 1, 0, 8192, 1),
             (1, 1, 'a', '{}', 0, 3, 0, 2048, 1),
             (1, 2, 'b', '{}', 0, 3, 0, 2048, 1);
    INSERT INTO buffer_live_ranges(module_id, value_id, live_start, live_end, file_id)
      VALUES (1, 0, 0, 2, 1), (1, 1, 1, 3, 1), (1, 2, 2, 5, 1);
  )sql");
}

// Migrating computes what ingest computes for version 4: the entry signature (parameters in number order,
// the output shape), the identity key, the padded live peak and the memory spaces. Expected values from the
// rows above: at time 2, p0 (8192) and the slice (3, 0, 2048) shared by a and b are live: 10240.
TEST(SchemaMigration, Version3FileGainsModuleIdentityAndPaddedPeak) {
  testing::TempDir tmp;
  const std::string path = tmp / "v3.db";
  ASSERT_NO_FATAL_FAILURE(MakeVersion3File(path));
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(sql.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(sql.execAndGet("SELECT entry_signature FROM modules WHERE module_id = 1").getString(),
            "(f32[8,128], s32[]) -> (f32[8], f32[8])");
  const std::string key = sql.execAndGet("SELECT identity_key FROM modules WHERE module_id = 1").getString();
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(key, ModuleIdentityKey("jit_train_step", "after_optimizations", "(f32[8,128], s32[]) -> (f32[8], f32[8])",
                                   "host0"));
  EXPECT_NE(key, ModuleIdentityKey("jit_train_step", "after_optimizations", "(f32[8,128], s32[]) -> (f32[8], f32[8])",
                                   "host1"));
  EXPECT_EQ(sql.execAndGet("SELECT live_peak_padded_bytes FROM module_summary WHERE module_id = 1").getInt64(), 10240);
  EXPECT_EQ(sql.execAndGet("SELECT live_peak_padded_time FROM module_summary WHERE module_id = 1").getInt64(), 1);
  EXPECT_EQ(sql.execAndGet("SELECT color0_total_bytes FROM module_summary WHERE module_id = 1").getInt64(),
            4096 + 8192 + 2048);
  EXPECT_EQ(sql.execAndGet("SELECT group_concat(color || ':' || allocation_count || ':' || total_bytes, ' ') "
                           "FROM (SELECT * FROM module_memory_spaces WHERE module_id = 1 ORDER BY color)")
                .getString(),
            "0:3:14336 1:1:1024");
  EXPECT_EQ(sql.execAndGet("SELECT identity_key FROM module_memory WHERE module_id = 1").getString(), key);
}

TEST(SchemaMigration, MigratedVersion3FileHasTheSchemaOfANewFile) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion3File(tmp / "v3.db"));
  auto migrated = Database::Open(tmp / "v3.db");
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  auto fresh = Database::Open(tmp / "new.db");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(SchemaShape(SqliteOf(*migrated.value())), SchemaShape(SqliteOf(*fresh.value())));
}

// A version-4 file: the schema of tests/fixtures/store/schema_v4.sql with one run.
void MakeVersion4File(const std::string& path) {
  const std::string schema_v4 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v4.sql");
  ASSERT_NE(schema_v4.find("version 4"), std::string::npos) << "tests/fixtures/store/schema_v4.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v4);
  raw.exec("PRAGMA user_version = 4");
  raw.exec(R"sql(
    INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);
  )sql");
}

// Opens the older file at `path`, which migrates it, and checks what every migration leaves: the current
// version, an intact file, and the schema of a new file (made at `fresh_path` to compare). Null on failure.
std::unique_ptr<Database> OpenMigrated(const std::string& path, const std::string& fresh_path) {
  auto db = Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return nullptr;
  SQLite::Database& sql = SqliteOf(*db.value());
  EXPECT_EQ(sql.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(sql.execAndGet("PRAGMA integrity_check").getString(), "ok");
  auto fresh = Database::Open(fresh_path);
  EXPECT_TRUE(fresh.ok()) << fresh.status().ToString();
  if (fresh.ok()) {
    EXPECT_EQ(SchemaShape(sql), SchemaShape(SqliteOf(*fresh.value())));
  }
  return std::move(db.value());
}

TEST(SchemaMigration, Version4FileGainsThePrunedMark) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion4File(tmp / "v4.db"));
  auto db = OpenMigrated(tmp / "v4.db", tmp / "new.db");
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(SqliteOf(*db).execAndGet("SELECT detail_pruned_at_us FROM runs WHERE run_id = 1").isNull());
}

// A version-5 file: the schema of tests/fixtures/store/schema_v5.sql with one run of three files (one of them an
// error), one module with a buffer assignment and one without, and instructions whose computation and op_name
// are texts (two of them the same op_name).
void MakeVersion5File(const std::string& path) {
  const std::string schema_v5 = testing::ReadFile(std::string(XLADB_FIXTURE_DIR) + "/store/schema_v5.sql");
  ASSERT_NE(schema_v5.find("version 5"), std::string::npos) << "tests/fixtures/store/schema_v5.sql missing?";
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(schema_v5);
  raw.exec("PRAGMA user_version = 5");
  raw.exec(R"sql(
    INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)
      VALUES (1, 'run-a', '/dumps/run-a', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);
    INSERT INTO dump_files(file_id, run_id, path, kind, verdict, size_bytes, content_hash, ingested_at_us)
      VALUES (1, 1, 'a-buffer-assignment.txt', 'buffer_assignment', 'ingested', 10, 'h1', 1),
             (2, 1, 'a.txt', 'hlo_module', 'ingested', 10, 'h2', 1),
             (3, 1, 'b-buffer-assignment.txt', 'buffer_assignment', 'error', 10, 'h3', 1);
    INSERT INTO modules(module_id, run_id, name, stage, backend)
      VALUES (1, 1, 'jit_a', 'after_optimizations', 'gpu'), (2, 1, 'jit_b', 'after_optimizations', 'gpu');
    INSERT INTO module_summary(module_id, allocation_count) VALUES (1, 2), (2, 0);
    INSERT INTO instructions(module_id, name, computation, opcode, op_name, file_id)
      VALUES (1, 'add.1', 'main', 'add', 'jit(a)/add', 2), (1, 'add.2', 'main', 'add', 'jit(a)/add', 2),
             (1, 'p.0', 'body.3', 'parameter', NULL, 2), (1, 'c.4', NULL, NULL, NULL, 1);
  )sql");
}

TEST(SchemaMigration, Version5FileGainsRunSummaryAndInternedNames) {
  testing::TempDir tmp;
  ASSERT_NO_FATAL_FAILURE(MakeVersion5File(tmp / "v5.db"));
  auto db = OpenMigrated(tmp / "v5.db", tmp / "new.db");
  ASSERT_NE(db, nullptr);
  SQLite::Database& sql = SqliteOf(*db);
  // 3 files, 2 ingested, 1 error; jit_a has allocations, jit_b none.
  EXPECT_EQ(sql.execAndGet("SELECT file_count || '/' || ingested_file_count || '/' || error_file_count || '/' || "
                           "module_count FROM runs WHERE run_id = 1").getString(),
            "3/2/1/1");
  // The names as inserted, spelled out by the view; 'jit(a)/add' is stored once.
  SQLite::Statement q(sql, "SELECT name, IFNULL(computation, '-'), IFNULL(op_name, '-') FROM instruction_details "
                           "ORDER BY name");
  std::vector<std::string> rows;
  while (q.executeStep()) {
    rows.push_back(q.getColumn(0).getString() + ":" + q.getColumn(1).getString() + ":" + q.getColumn(2).getString());
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"add.1:main:jit(a)/add", "add.2:main:jit(a)/add", "c.4:-:-",
                                            "p.0:body.3:-"}));
  EXPECT_EQ(Count(sql, "names"), 3);
  EXPECT_EQ(sql.execAndGet("SELECT hash FROM names WHERE text = 'jit(a)/add'").getInt64(), TextHash("jit(a)/add"));
}

}  // namespace
}  // namespace xladb::store
