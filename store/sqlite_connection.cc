#include "store/sqlite_connection.h"

#include <sqlite3.h>

namespace xladb::store {
namespace {

// One sqlite3_stmt; every failure throws SqlError with SQLite's message.
class SqliteStatement final : public SqlStatement {
 public:
  SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
    Check(sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &q_, nullptr));
    if (q_ == nullptr) throw SqlError("empty statement");
  }
  ~SqliteStatement() override { sqlite3_finalize(q_); }

  void BindNull(int index) override { Check(sqlite3_bind_null(q_, index)); }
  bool Step() override {
    const int rc = sqlite3_step(q_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(q_);  // the statement's error becomes the connection's message
    throw SqlError(sqlite3_errmsg(db_));
  }
  int64_t Execute() override {
    while (Step()) {
    }
    sqlite3_reset(q_);
    return sqlite3_changes64(db_);
  }
  void BindTextRef(int index, std::string_view value) override {
    Check(sqlite3_bind_text64(q_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
  }
  void Reset() override { sqlite3_reset(q_); }
  void ClearBindings() override { sqlite3_clear_bindings(q_); }
  int ColumnCount() const override { return sqlite3_column_count(q_); }
  bool IsNull(int column) const override { return sqlite3_column_type(q_, column) == SQLITE_NULL; }
  int64_t Int(int column) const override { return sqlite3_column_int64(q_, column); }
  double Real(int column) const override { return sqlite3_column_double(q_, column); }
  std::string Text(int column) const override {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q_, column));
    return text == nullptr ? std::string() : std::string(text, static_cast<size_t>(sqlite3_column_bytes(q_, column)));
  }

 protected:
  void BindInt(int index, int64_t value) override { Check(sqlite3_bind_int64(q_, index, value)); }
  void BindReal(int index, double value) override { Check(sqlite3_bind_double(q_, index, value)); }
  void BindText(int index, std::string_view value) override {
    Check(sqlite3_bind_text64(q_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }

 private:
  void Check(int rc) const {
    if (rc != SQLITE_OK) throw SqlError(sqlite3_errmsg(db_));
  }

  sqlite3* db_;
  sqlite3_stmt* q_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlStatement> SqliteConnection::Prepare(std::string_view sql) {
  return std::make_unique<SqliteStatement>(db_.getHandle(), sql);
}

void SqliteConnection::Exec(std::string_view sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_.getHandle(), std::string(sql).c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errmsg(db_.getHandle());
    sqlite3_free(error);
    throw SqlError(message);
  }
}

}  // namespace xladb::store
