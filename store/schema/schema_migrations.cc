#include "store/schema/schema_migrations.h"

#include <iterator>

namespace xladb::store {

extern const char kMigrateV1Sql[];  // generated from migrate_v1.sql
extern const char kMigrateV2Sql[];  // generated from migrate_v2.sql
extern const char kMigrateV3Sql[];  // generated from migrate_v3.sql
extern const char kMigrateV4Sql[];  // generated from migrate_v4.sql
extern const char kMigrateV5Sql[];  // generated from migrate_v5.sql
extern const char kMigrateV6Sql[];  // generated from migrate_v6.sql
extern const char kMigrateV7Sql[];  // generated from migrate_v7.sql
extern const char kMigrateV8Sql[];  // generated from migrate_v8.sql
extern const char kMigrateV9Sql[];  // generated from migrate_v9.sql

namespace {

// Separates a migration's two parts (a whole line).
constexpr std::string_view kApplySchemaMarker = "\n-- @apply schema.sql\n";
constexpr const char* kMigrations[] = {kMigrateV1Sql, kMigrateV2Sql, kMigrateV3Sql, kMigrateV4Sql,
                                       kMigrateV5Sql, kMigrateV6Sql, kMigrateV7Sql,
                                       kMigrateV8Sql, kMigrateV9Sql};  // [N-1]: from version N to N+1
static_assert(std::size(kMigrations) == kSchemaVersion - 1, "one migration per schema version");

}  // namespace

std::pair<std::string_view, std::string_view> MigrationParts(int version) {
  const std::string_view migration = kMigrations[version - 1];
  const size_t marker = migration.find(kApplySchemaMarker);
  if (marker == std::string_view::npos) return {migration, {}};
  return {migration.substr(0, marker), migration.substr(marker)};
}

}  // namespace xladb::store
