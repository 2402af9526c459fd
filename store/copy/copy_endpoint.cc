#include "store/copy/copy_endpoint.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <cstdio>
#include <string_view>
#include <utility>

#include "store/postgres/postgres_schema.h"
#include "store/postgres/postgres_sql_query.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/query/statement_text.h"
#include "store/schema/schema_dialect.h"

namespace xladb::store {
namespace {

constexpr size_t kCopyChunkBytes = size_t{1} << 20;
constexpr int kFetchRows = 1000;

// ---------------------------------------------------------------------------------------------------------
// SQLite

class SqliteEndpoint : public CopyEndpoint {
 public:
  explicit SqliteEndpoint(Database* db) : sql_(SqliteOf(*db)) {}

  std::string Placeholder(int) const override { return "?"; }
  Status Open(bool as_source) override {
    as_source_ = as_source;
    return Status::Ok();  // Database::Open has applied (or migrated to) the schema
  }
  Status Begin() override { return Guard([&] { sql_.exec(as_source_ ? "BEGIN" : "BEGIN IMMEDIATE"); }); }
  Status Commit() override { return Guard([&] { sql_.exec("COMMIT"); }); }
  void Rollback() override {
    insert_.reset();
    try {
      sql_.exec("ROLLBACK");
    } catch (...) {
    }
  }
  StatusOr<std::vector<Row>> Query(const std::string& sql, const Row& params) override {
    std::vector<Row> rows;
    Status st = Guard([&] {
      SQLite::Statement q(sql_, sql);
      for (size_t i = 0; i < params.size(); ++i) Bind(q, static_cast<int>(i) + 1, params[i]);
      while (q.executeStep()) rows.push_back(Read(q));
    });
    if (!st.ok()) return st;
    return rows;
  }
  Status ReadRows(const std::string& sql, int64_t key, const std::function<Status(const Row&)>& on_row) override {
    Status result = Status::Ok();
    Status st = Guard([&] {
      SQLite::Statement q(sql_, sql);
      q.bind(1, key);
      while (result.ok() && q.executeStep()) result = on_row(Read(q));
    });
    return st.ok() ? result : st;
  }
  Status BeginTable(const std::string& table, const std::vector<std::string>& columns) override {
    std::string text = "INSERT INTO " + table + " (";
    for (size_t i = 0; i < columns.size(); ++i) text += (i ? ", " : "") + columns[i];
    text += ") VALUES (";
    for (size_t i = 0; i < columns.size(); ++i) text += i ? ", ?" : "?";
    text += ")";
    rows_ = 0;
    return Guard([&] { insert_ = std::make_unique<SQLite::Statement>(sql_, text); });
  }
  Status AddRow(const Row& row) override {
    return Guard([&] {
      insert_->reset();
      for (size_t i = 0; i < row.size(); ++i) Bind(*insert_, static_cast<int>(i) + 1, row[i]);
      rows_ += insert_->exec();
    });
  }
  StatusOr<int64_t> EndTable() override {
    insert_.reset();
    return rows_;
  }
  // Rowids continue past the largest stored id by themselves; xladb's SQLite stores keep no planner statistics.
  Status Finish() override { return Status::Ok(); }
  Status Tidy(const std::vector<std::string>&) override { return Status::Ok(); }

 private:
  template <typename Fn>
  Status Guard(Fn&& fn) {
    return CatchSqlErrors("SQLite", [&]() -> Status {
      fn();
      return Status::Ok();
    });
  }
  static void Bind(SQLite::Statement& q, int index, const SqlValue& v) {
    if (auto* i = std::get_if<int64_t>(&v)) q.bind(index, *i);
    else if (auto* d = std::get_if<double>(&v)) q.bind(index, *d);
    else if (auto* s = std::get_if<std::string>(&v)) q.bind(index, *s);
    else if (auto* b = std::get_if<SqlBlob>(&v)) q.bind(index, b->bytes.data(), static_cast<int>(b->bytes.size()));
    else q.bind(index);
  }
  static Row Read(SQLite::Statement& q) {
    Row row(static_cast<size_t>(q.getColumnCount()));
    for (int c = 0; c < q.getColumnCount(); ++c) {
      SQLite::Column cell = q.getColumn(c);
      switch (cell.getType()) {
        case SQLITE_INTEGER: row[static_cast<size_t>(c)] = static_cast<int64_t>(cell.getInt64()); break;
        case SQLITE_FLOAT: row[static_cast<size_t>(c)] = cell.getDouble(); break;
        case SQLITE_TEXT: row[static_cast<size_t>(c)] = cell.getString(); break;
        case SQLITE_BLOB:
          row[static_cast<size_t>(c)] =
              SqlBlob{std::string(static_cast<const char*>(cell.getBlob()), static_cast<size_t>(cell.getBytes()))};
          break;
        default: break;  // NULL
      }
    }
    return row;
  }

  SQLite::Database& sql_;
  bool as_source_ = false;
  std::unique_ptr<SQLite::Statement> insert_;
  int64_t rows_ = 0;
};

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL

class PostgresEndpoint : public CopyEndpoint {
 public:
  explicit PostgresEndpoint(PostgresConnection* pg) : pg_(*pg) {}

  std::string Placeholder(int n) const override { return "$" + std::to_string(n); }
  Status Open(bool as_source) override {
    as_source_ = as_source;
    if (as_source) return Status::Ok();
    return PreparePostgresStoreForWriting(pg_);
  }
  Status Begin() override {
    return pg_.Exec(as_source_ ? "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN");
  }
  Status Commit() override { return pg_.Exec("COMMIT"); }
  void Rollback() override { (void)pg_.Exec("ROLLBACK"); }
  StatusOr<std::vector<Row>> Query(const std::string& sql, const Row& params) override {
    std::vector<std::string> texts;
    for (const SqlValue& v : params) texts.push_back(Text(v));
    auto result = pg_.Query(sql, texts);
    if (!result.ok()) return result.status();
    std::vector<Row> rows;
    for (const auto& cells : result->values) rows.push_back(Values(cells, result->column_types));
    return rows;
  }
  Status ReadRows(const std::string& sql, int64_t key, const std::function<Status(const Row&)>& on_row) override {
    // A cursor, so a big table is read 1,000 rows at a time. The key is an integer: spelled into the text.
    std::string text = sql;
    const size_t at = text.find("$1");
    if (at != std::string::npos) text.replace(at, 2, std::to_string(key));
    if (Status declared = pg_.Exec("DECLARE xladb_copy NO SCROLL CURSOR FOR " + text); !declared.ok()) {
      return declared;
    }
    Status result = Status::Ok();
    while (result.ok()) {
      auto batch = pg_.Query("FETCH " + std::to_string(kFetchRows) + " FROM xladb_copy");
      if (!batch.ok()) {
        result = batch.status();
        break;
      }
      for (const auto& cells : batch->values) {
        result = on_row(Values(cells, batch->column_types));
        if (!result.ok()) break;
      }
      if (static_cast<int>(batch->values.size()) < kFetchRows) break;
    }
    Status closed = pg_.Exec("CLOSE xladb_copy");
    return result.ok() ? closed : result;
  }
  Status BeginTable(const std::string& table, const std::vector<std::string>& columns) override {
    rows_.Clear();
    sent_ = Status::Ok();
    return pg_.BeginCopy(table, columns);
  }
  Status AddRow(const Row& row) override {
    for (const SqlValue& v : row) {
      if (std::holds_alternative<std::monostate>(v)) {
        rows_.Null();
      } else {
        rows_.Text(Text(v));
      }
    }
    rows_.EndRow();
    if (rows_.data().size() >= kCopyChunkBytes) {
      if (sent_.ok()) sent_ = pg_.PutCopyData(rows_.data());
      rows_.Clear();
    }
    return sent_;
  }
  StatusOr<int64_t> EndTable() override {
    if (sent_.ok() && !rows_.data().empty()) sent_ = pg_.PutCopyData(rows_.data());
    rows_.Clear();
    StatusOr<int64_t> stored = pg_.EndCopy();  // always end the COPY, so the connection is usable again
    if (!sent_.ok()) return sent_;
    return stored;
  }
  Status Finish() override {
    // Every identity column of the schema's tables continues past the largest stored id. Names are quoted by
    // format(), server-side.
    return pg_.Exec(
        "DO $$ DECLARE c record; BEGIN "
        "FOR c IN SELECT table_name, column_name FROM information_schema.columns "
        "         WHERE table_schema = current_schema() AND is_identity = 'YES' LOOP "
        "  EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), COALESCE((SELECT MAX(%I) FROM %I), 0) "
        "                  + 1, false)', quote_ident(c.table_name), c.column_name, c.column_name, c.table_name); "
        "END LOOP; END $$");
  }
  Status Tidy(const std::vector<std::string>& tables) override {
    if (tables.empty()) return Status::Ok();
    // The tables filled are vacuumed and analyzed, so the copy is at once what autovacuum would make of it
    // later: planner statistics that describe it (until then a query is planned on an empty table's
    // estimates), and pages marked all-visible with their rows' hint bits set (until then the first reads
    // write them, and autovacuum comes by a minute later to read every copied page again, competing with the
    // first queries). Only those tables, each named with the store's schema; the names are the schema's own
    // (store/facts/store_tables.h). VACUUM runs outside a transaction: one statement, on its own.
    auto schema = pg_.Query("SELECT quote_ident(current_schema())");
    if (!schema.ok()) return schema.status();
    if (schema->values.size() != 1 || schema->values[0].size() != 1 || !schema->values[0][0]) {
      return Status::IoError("copy: the destination has no current schema to vacuum");
    }
    std::string names;
    for (const std::string& t : tables) names += (names.empty() ? "" : ", ") + *schema->values[0][0] + "." + t;
    return pg_.Exec("VACUUM (ANALYZE) " + names);
  }

 private:
  // A value as PostgreSQL reads it in text: doubles with 17 significant digits, the same double there.
  static std::string Text(const SqlValue& v) {
    char number[40];
    if (auto* i = std::get_if<int64_t>(&v)) {
      std::snprintf(number, sizeof number, "%lld", static_cast<long long>(*i));
      return number;
    }
    if (auto* d = std::get_if<double>(&v)) {
      std::snprintf(number, sizeof number, "%.17g", *d);
      return number;
    }
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    if (auto* b = std::get_if<SqlBlob>(&v)) {
      std::string hex = "\\x";
      for (unsigned char c : b->bytes) {
        std::snprintf(number, sizeof number, "%02x", c);
        hex += number;
      }
      return hex;
    }
    return "";
  }
  static Row Values(const std::vector<std::optional<std::string>>& cells, const std::vector<uint32_t>& types) {
    Row row(cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c]) row[c] = FromPostgresText(*cells[c], types[c]);
    }
    return row;
  }

  PostgresConnection& pg_;
  bool as_source_ = false;
  CopyRows rows_;
  Status sent_ = Status::Ok();
};

}  // namespace

std::unique_ptr<CopyEndpoint> SqliteCopyEndpoint(Database* db) { return std::make_unique<SqliteEndpoint>(db); }
std::unique_ptr<CopyEndpoint> PostgresCopyEndpoint(PostgresConnection* pg) {
  return std::make_unique<PostgresEndpoint>(pg);
}

}  // namespace xladb::store
