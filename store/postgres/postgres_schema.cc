#include "store/postgres/postgres_schema.h"

#include <string>

#include "store/schema/schema_dialect.h"
#include "store/schema/schema_migrations.h"

namespace xladb::store {
namespace {

struct StoredSchema {
  int version = 0;  // 0: no store
  std::string id;   // "" without one
  bool recorded = false;  // xladb_schema_version() exists
};

StatusOr<StoredSchema> ReadStoredSchema(PostgresConnection& pg) {
  auto present = pg.Query("SELECT to_regclass('runs') IS NOT NULL, to_regproc('xladb_schema_id') IS NOT NULL, "
                          "to_regproc('xladb_schema_version') IS NOT NULL");
  if (!present.ok()) return present.status();
  const auto& row = present->values.at(0);
  auto is_true = [](const std::optional<std::string>& v) { return v && *v == "t"; };
  StoredSchema stored;
  if (is_true(row[1])) {
    auto id = pg.Query("SELECT xladb_schema_id()");
    if (!id.ok()) return id.status();
    stored.id = id->values.at(0).at(0).value_or("");
  }
  if (is_true(row[2])) {
    stored.recorded = true;
    auto version = pg.Query("SELECT xladb_schema_version()");
    if (!version.ok()) return version.status();
    stored.version = std::stoi(version->values.at(0).at(0).value_or("0"));
  } else if (is_true(row[0]) || !stored.id.empty()) {
    stored.version = kFirstPostgresSchemaVersion;  // written before versions were recorded
  }
  return stored;
}

Status Newer(int version) {
  return Status::FailedPrecondition("this PostgreSQL store has schema version " + std::to_string(version) +
                                    ", newer than this xladb's version " + std::to_string(kSchemaVersion) +
                                    ": use a newer xladb");
}

}  // namespace

Status PreparePostgresStoreForWriting(PostgresConnection& pg) {
  // A second look when another binary migrated the store while this one waited for the schema lock.
  for (int attempt = 0;; ++attempt) {
    auto stored = ReadStoredSchema(pg);
    if (!stored.ok()) return stored.status();
    if (stored->version > kSchemaVersion) return Newer(stored->version);
    if (stored->version != 0 && stored->version < kFirstPostgresSchemaVersion) {
      return Status::FailedPrecondition("this PostgreSQL store has schema version " +
                                        std::to_string(stored->version) + ", older than any PostgreSQL store");
    }
    if (stored->recorded && stored->version == kSchemaVersion && stored->id == PostgresSchemaId()) {
      return Status::Ok();
    }
    Status applied = pg.Exec(PostgresSchemaTransaction(stored->version));
    if (applied.ok()) return Status::Ok();
    const std::string sqlstate = pg.last_sqlstate();  // before the ROLLBACK clears it
    (void)pg.Exec("ROLLBACK");
    if (sqlstate == "55000") return Status::FailedPrecondition(applied.message());
    if (sqlstate == "40001" && attempt < 2) continue;
    return Status::IoError((stored->version != 0 && stored->version < kSchemaVersion
                                ? "migrating the PostgreSQL store from schema version " +
                                      std::to_string(stored->version) + ": "
                                : std::string("applying the PostgreSQL schema: ")) +
                           applied.message());
  }
}

Status CheckPostgresStoreForReading(PostgresConnection& pg) {
  auto stored = ReadStoredSchema(pg);
  if (!stored.ok()) return stored.status();
  if (stored->version == 0) {
    return Status::FailedPrecondition(
        "the PostgreSQL database holds no xladb store (`xladb copy FILE URI` or xladbd --db URI creates one)");
  }
  if (stored->version > kSchemaVersion) return Newer(stored->version);
  if (stored->version < kSchemaVersion) {
    return Status::FailedPrecondition("this PostgreSQL store has schema version " +
                                      std::to_string(stored->version) + ", this xladb reads version " +
                                      std::to_string(kSchemaVersion) +
                                      " (xladbd or `xladb ingest` migrates it when it opens the store)");
  }
  return Status::Ok();
}

}  // namespace xladb::store
