#include "store/sqlite/sqlite_connection.h"

#include <sqlite3.h>

#include <cctype>

#include "store/backend/bulk_insert.h"

namespace xladb::store {
namespace {

// `sql` without a trailing `RETURNING <name>` of an INSERT (that name must be the table's INTEGER PRIMARY KEY),
// or "" when it has none. SQLite answers RETURNING through an ephemeral table, which made an ingest 15% slower
// (interned names and texts are inserted this way by the hundred thousand); the rowid is free.
std::string_view WithoutReturnedRowid(std::string_view sql) {
  const size_t at = sql.rfind(" RETURNING ");
  if (at == std::string_view::npos || sql.substr(0, 7) != "INSERT ") return {};
  for (char c : sql.substr(at + 11)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return {};
  }
  return sql.substr(0, at);
}

// One sqlite3_stmt; every failure throws SqlError with SQLite's message. An INSERT … RETURNING <rowid> runs
// without its RETURNING, and answers one row (sqlite3_last_insert_rowid) when it inserted one.
class SqliteStatement final : public SqlStatement {
 public:
  // `returning`: kAsWritten runs a RETURNING clause as SQLite does (a multi-row insert's: every row's).
  enum class Returning { kRowidEmulated, kAsWritten };
  SqliteStatement(sqlite3* db, std::string_view sql, Returning returning = Returning::kRowidEmulated) : db_(db) {
    const std::string_view plain = returning == Returning::kAsWritten ? std::string_view() : WithoutReturnedRowid(sql);
    returns_rowid_ = !plain.empty();
    if (returns_rowid_) sql = plain;
    Check(sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &q_, nullptr));
    if (q_ == nullptr) throw SqlError("empty statement");
  }
  ~SqliteStatement() override { sqlite3_finalize(q_); }

  void BindNull(int index) override { Check(sqlite3_bind_null(q_, index)); }
  bool Step() override {
    if (returns_rowid_) return StepInsert();
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
    row_ = Row::kNone;
    return sqlite3_changes64(db_);
  }
  void BindTextRef(int index, std::string_view value) override {
    Check(sqlite3_bind_text64(q_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
  }
  void Reset() override {
    sqlite3_reset(q_);
    row_ = Row::kNone;
  }
  void ClearBindings() override { sqlite3_clear_bindings(q_); }
  int ColumnCount() const override { return returns_rowid_ ? 1 : sqlite3_column_count(q_); }
  bool IsNull(int column) const override {
    return returns_rowid_ ? false : sqlite3_column_type(q_, column) == SQLITE_NULL;
  }
  int64_t Int(int column) const override { return returns_rowid_ ? rowid_ : sqlite3_column_int64(q_, column); }
  double Real(int column) const override {
    return returns_rowid_ ? static_cast<double>(rowid_) : sqlite3_column_double(q_, column);
  }
  std::string Text(int column) const override {
    if (returns_rowid_) return std::to_string(rowid_);
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
  // The emulated RETURNING: the first Step inserts and answers the rowid when a row went in, the next ends.
  bool StepInsert() {
    if (row_ != Row::kNone) {
      row_ = Row::kDone;
      return false;
    }
    const int rc = sqlite3_step(q_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
      sqlite3_reset(q_);
      throw SqlError(sqlite3_errmsg(db_));
    }
    const bool inserted = sqlite3_changes64(db_) > 0;
    rowid_ = sqlite3_last_insert_rowid(db_);
    sqlite3_reset(q_);
    row_ = inserted ? Row::kRow : Row::kDone;
    return inserted;
  }

  sqlite3* db_;
  sqlite3_stmt* q_ = nullptr;
  bool returns_rowid_ = false;
  enum class Row { kNone, kRow, kDone } row_ = Row::kNone;
  int64_t rowid_ = 0;
};

// INSERT INTO table(columns) VALUES (?,…),… conflict [RETURNING …], for `rows` rows.
std::string ValuesInsert(const BulkInsert& insert, size_t rows) {
  std::string tuple = "(?";
  for (int c = 1; c < insert.columns(); ++c) tuple += ",?";
  tuple += ")";
  std::string sql = "INSERT INTO " + insert.table() + "(" + insert.column_list() + ") VALUES ";
  for (size_t r = 0; r < rows; ++r) sql.append(r ? "," : "").append(tuple);
  sql.append(" ").append(insert.conflict());
  if (!insert.returning().empty()) sql.append(" RETURNING ").append(insert.returning());
  return sql;
}

}  // namespace

bool SqliteConnection::WritesAlone() const { return sqlite3_get_autocommit(db_.getHandle()) == 0; }

int64_t SqliteConnection::Append(const BulkRows& rows, std::vector<int64_t>* returned) {
  BulkStatements& statements = bulk_[&rows.insert];
  const size_t columns = static_cast<size_t>(rows.insert.columns());
  const int returned_columns = rows.insert.returned_columns();
  if (returned != nullptr) RequireReturning(rows.insert);
  const size_t total = rows.rows();
  int64_t changed = 0;
  for (size_t done = 0; done < total;) {
    // The widest statement that fits what is left: kBatchRows rows, or a power of two below it.
    size_t size_class = 0;
    while (size_class + 1 < statements.by_size.size() && (size_t{2} << size_class) <= total - done) ++size_class;
    const size_t n = size_t{1} << size_class;
    std::unique_ptr<SqlStatement>& st = statements.by_size[size_class];
    if (!st) {
      st = std::make_unique<SqliteStatement>(db_.getHandle(), ValuesInsert(rows.insert, n),
                                             SqliteStatement::Returning::kAsWritten);
    }
    for (size_t c = 0; c < n * columns; ++c) {
      const BulkCell& cell = rows.cells[done * columns + c];
      const int index = static_cast<int>(c) + 1;
      switch (cell.kind) {
        case BulkCell::Kind::kInt: st->Bind(index, cell.value); break;
        case BulkCell::Kind::kReal: st->Bind(index, cell.real()); break;
        case BulkCell::Kind::kText: st->BindTextRef(index, rows.texts[static_cast<size_t>(cell.value)]); break;
        case BulkCell::Kind::kNull: st->BindNull(index); break;
      }
    }
    if (returned_columns == 0) {
      changed += st->Execute();
    } else {
      while (st->Step()) {
        ++changed;
        for (int c = 0; c < returned_columns && returned != nullptr; ++c) returned->push_back(st->Int(c));
      }
      st->Reset();
    }
    done += n;
  }
  return changed;
}

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
