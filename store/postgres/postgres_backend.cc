#include "store/postgres/postgres_backend.h"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "store/backend/bulk_insert.h"

namespace xladb::store {
namespace {

constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;

// Throws what PostgreSQL said about the failed `result`, which it frees.
[[noreturn]] void ThrowAndClear(PGconn* conn, PGresult* result) {
  PostgresError error = ErrorOf(conn, result);
  PQclear(result);
  throw SqlError("PostgreSQL: " + error.message, std::move(error.sqlstate));
}

class PostgresStatement final : public SqlStatement {
 public:
  // `parameters`: how many the text has; each is NULL until bound, as in SQLite.
  PostgresStatement(PGconn* conn, PostgresPipeline* pipeline, std::string sql, int parameters)
      : conn_(conn), pipeline_(pipeline), sql_(std::move(sql)), values_(static_cast<size_t>(parameters)),
        types_(static_cast<size_t>(parameters), 0) {}
  ~PostgresStatement() override {
    Clear();
    pipeline_->SyncQuietly();
    if (!name_.empty()) PQclear(PQexec(conn_, ("DEALLOCATE " + name_).c_str()));  // fails harmlessly if aborted
  }

  void BindNull(int index) override { Set(index, std::nullopt, 0); }
  bool Step() override {
    if (result_ == nullptr) RunQuery();
    return ++row_ < PQntuples(result_);
  }
  int64_t Execute() override {
    Clear();
    RunQuery();
    const char* changed = PQcmdTuples(result_);
    const int64_t n = changed[0] == '\0' ? 0 : std::strtoll(changed, nullptr, 10);
    Clear();
    return n;
  }
  void ExecuteLater() override {
    Clear();
    // As RunQuery: prepared from the second run on, and at once (outside the pipeline), so the name is kept
    // only once the server has the statement (in a pipeline an earlier error would skip the Parse unseen).
    if (name_.empty() && runs_ > 0) {
      pipeline_->Sync();
      Prepare();
    }
    pipeline_->Enter();
    const std::vector<const char*> values = Values();
    const int n = static_cast<int>(values.size());
    ++runs_;
    const int sent = name_.empty()
                         ? PQsendQueryParams(conn_, sql_.c_str(), n, types_.data(), values.data(), nullptr, nullptr, 0)
                         : PQsendQueryPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    if (sent != 1) ThrowAndClear(conn_, nullptr);
    pipeline_->Sent();
  }
  void Reset() override { Clear(); }
  void ClearBindings() override {
    for (auto& v : values_) v.reset();
    for (Oid& t : types_) t = 0;
  }
  int ColumnCount() const override { return result_ ? PQnfields(result_) : 0; }
  bool IsNull(int column) const override { return PQgetisnull(result_, row_, column) != 0; }
  int64_t Int(int column) const override {
    const char* v = PQgetvalue(result_, row_, column);
    if (v[0] == 't' && v[1] == '\0') return 1;  // a boolean
    if (v[0] == 'f' && v[1] == '\0') return 0;
    const char* end = v + PQgetlength(result_, row_, column);
    int64_t n = 0;
    auto [at, ec] = std::from_chars(v, end, n);
    if (ec == std::errc() && at == end) return n;
    return static_cast<int64_t>(std::strtod(v, nullptr));  // a numeric or a real, truncated as SQLite does
  }
  double Real(int column) const override { return std::strtod(PQgetvalue(result_, row_, column), nullptr); }
  std::string Text(int column) const override {
    return std::string(PQgetvalue(result_, row_, column), static_cast<size_t>(PQgetlength(result_, row_, column)));
  }

 protected:
  // Untyped, as a literal would be: the server takes the type the context asks for (int4 for substr's
  // length, int8 against a BIGINT column).
  void BindInt(int index, int64_t value) override { Set(index, std::to_string(value), 0); }
  void BindReal(int index, double value) override {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest text that reads back exactly
    std::string text(buf, end);
    if (std::isnan(value)) text = "NaN";
    if (std::isinf(value)) text = value > 0 ? "Infinity" : "-Infinity";
    Set(index, std::move(text), kFloat8Oid);
  }
  void BindText(int index, std::string_view value) override { Set(index, std::string(value), kTextOid); }

 private:
  void Set(int index, std::optional<std::string> value, Oid type) {
    if (index < 1) throw SqlError("placeholder index " + std::to_string(index) + " is below 1");
    const auto i = static_cast<size_t>(index - 1);
    if (values_.size() <= i) {
      values_.resize(i + 1);
      types_.resize(i + 1, 0);
    }
    values_[i] = std::move(value);
    types_[i] = type;
  }
  // The bound values as libpq takes them (null for NULL).
  std::vector<const char*> Values() const {
    std::vector<const char*> values;
    values.reserve(values_.size());
    for (const auto& v : values_) values.push_back(v ? v->c_str() : nullptr);
    return values;
  }
  static std::string NextName() {
    static std::atomic<int64_t> next{0};
    return "xladb_" + std::to_string(next.fetch_add(1));
  }
  // Runs the statement: once as text (PQexecParams); from its second run on as a statement prepared on the
  // server, so PostgreSQL parses and plans it once (the writer runs each of its statements thousands of times).
  void RunQuery() {
    pipeline_->Sync();
    const std::vector<const char*> values = Values();
    const int n = static_cast<int>(values.size());
    if (name_.empty() && runs_ > 0) Prepare();
    ++runs_;
    result_ = name_.empty() ? PQexecParams(conn_, sql_.c_str(), n, types_.data(), values.data(), nullptr, nullptr, 0)
                            : PQexecPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    if (!name_.empty() && PQresultStatus(result_) == PGRES_FATAL_ERROR &&
        ErrorOf(conn_, result_).sqlstate == "26000") {
      PQclear(result_);  // the session forgot it (DISCARD ALL): prepared again
      result_ = nullptr;
      Prepare();
      result_ = PQexecPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    }
    const ExecStatusType status = PQresultStatus(result_);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      PGresult* failed = result_;
      result_ = nullptr;
      ThrowAndClear(conn_, failed);
    }
    row_ = -1;
  }
  void Prepare() {
    std::string name = NextName();
    PGresult* r = PQprepare(conn_, name.c_str(), sql_.c_str(), static_cast<int>(types_.size()), types_.data());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) ThrowAndClear(conn_, r);
    PQclear(r);
    name_ = std::move(name);
  }
  void Clear() {
    if (result_ != nullptr) PQclear(result_);
    result_ = nullptr;
    row_ = -1;
  }

  PGconn* conn_;
  PostgresPipeline* pipeline_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<Oid> types_;
  PGresult* result_ = nullptr;
  int row_ = -1;
  int64_t runs_ = 0;
  std::string name_;  // the server-side prepared statement, once there is one
};

}  // namespace

void PostgresPipeline::Enter() {
  if (active_) return;
  if (PQenterPipelineMode(conn_) != 1) ThrowAndClear(conn_, nullptr);
  active_ = true;
}

void PostgresPipeline::Sent() {
  ++waiting_;
  if (waiting_ >= kPipelineDepth) Sync();
}

void PostgresPipeline::Sync() {
  if (!active_) return;
  active_ = false;
  waiting_ = 0;
  std::optional<PostgresError> error;
  const bool synced = PQpipelineSync(conn_) == 1;
  if (!synced) error = ErrorOf(conn_, nullptr);
  // Each command's results end with a null; the sync point's result ends them all. Two nulls in a row mean
  // the connection broke (nothing more will come).
  bool after_null = false;
  while (synced) {
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      if (after_null) break;
      after_null = true;
      continue;
    }
    after_null = false;
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (status == PGRES_FATAL_ERROR && !error) error = ErrorOf(conn_, r);
    PQclear(r);
  }
  if (PQexitPipelineMode(conn_) != 1 && !error) error = ErrorOf(conn_, nullptr);
  if (error) throw SqlError("PostgreSQL: " + error->message, error->sqlstate);
}

void PostgresPipeline::SyncQuietly() noexcept {
  try {
    Sync();
  } catch (...) {
  }
}

PostgresBackend::~PostgresBackend() { pipeline_->SyncQuietly(); }

std::string NumberedPlaceholders(std::string_view sql, int* count) {
  std::string out;
  out.reserve(sql.size() + 16);
  int largest = 0;
  size_t i = 0;
  auto copy_until = [&](size_t end) {
    out.append(sql.substr(i, end - i));
    i = end;
  };
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {  // a string or a quoted name; a doubled quote stays inside
      size_t end = i + 1;
      while (end < sql.size() && !(sql[end] == c && (end + 1 >= sql.size() || sql[end + 1] != c))) {
        end += sql[end] == c ? 2 : 1;
      }
      copy_until(std::min(end + 1, sql.size()));
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const size_t end = sql.find('\n', i);
      copy_until(end == std::string_view::npos ? sql.size() : end);
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const size_t end = sql.find("*/", i + 2);
      copy_until(end == std::string_view::npos ? sql.size() : end + 2);
    } else if (c == '?') {
      size_t end = i + 1;
      while (end < sql.size() && std::isdigit(static_cast<unsigned char>(sql[end]))) ++end;
      const int n = end > i + 1 ? std::atoi(std::string(sql.substr(i + 1, end - i - 1)).c_str()) : largest + 1;
      largest = std::max(largest, n);
      out += '$' + std::to_string(n);
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  if (count != nullptr) *count = largest;
  return out;
}

std::unique_ptr<SqlStatement> PostgresBackend::Prepare(std::string_view sql) {
  int parameters = 0;
  std::string text = NumberedPlaceholders(sql, &parameters);
  return std::make_unique<PostgresStatement>(pg_->raw(), pipeline_.get(), std::move(text), parameters);
}

int64_t PostgresBackend::AppendRows(const BulkRows& rows) {
  pipeline_->Sync();
  const size_t columns = static_cast<size_t>(rows.insert.columns());
  const auto keys = static_cast<size_t>(rows.insert.key_columns());
  // A row's conflict key as a hash: equal keys give equal hashes, so a repeated key always starts a new
  // segment (a collision only starts one early, which is as correct).
  auto key_of = [&](size_t row) {
    size_t h = 0;
    for (size_t c = 0; c < keys; ++c) {
      const BulkCell& cell = rows.cells[row * columns + c];
      const size_t part = cell.kind == BulkCell::Kind::kInt ? std::hash<int64_t>()(cell.value)
                          : cell.kind == BulkCell::Kind::kText
                              ? std::hash<std::string_view>()(StoredText(rows.texts[static_cast<size_t>(cell.value)]))
                              : 0x9e3779b97f4a7c15ULL;
      h = h * 1000003 ^ part;
    }
    return h;
  };
  int64_t changed = 0;
  std::unordered_set<size_t> seen;
  size_t begin = 0;
  const size_t total = rows.rows();
  for (size_t row = 0; keys > 0 && row < total; ++row) {
    const size_t key = key_of(row);
    if (!seen.insert(key).second) {
      changed += AppendSegment(rows, begin, row);
      seen = {key};
      begin = row;
    }
  }
  if (begin < total) changed += AppendSegment(rows, begin, total);
  return changed;
}

int64_t PostgresBackend::AppendSegment(const BulkRows& rows, size_t begin, size_t end) {
  const BulkInsert& insert = rows.insert;
  BulkStaging& staging = bulk_[&insert];
  if (staging.sql.empty()) {
    // One staging table per BulkInsert of this session, emptied by each move. DELETE leaves dead rows that
    // autovacuum never visits in a temporary table, so the table is also truncated now and then (kTruncateRows).
    staging.table = "xladb_bulk_" + insert.table() + "_" + std::to_string(bulk_.size());
    staging.sql = "CREATE TEMPORARY TABLE IF NOT EXISTS " + staging.table + " AS SELECT " + insert.column_list() +
                  " FROM " + insert.table() + " WITH NO DATA; COPY " + staging.table + " (" + insert.column_list() +
                  ") FROM STDIN; WITH moved AS (DELETE FROM " + staging.table + " RETURNING " +
                  insert.column_list() + ") INSERT INTO " + insert.table() + "(" + insert.column_list() +
                  ") SELECT " + insert.column_list() + " FROM moved " + insert.conflict();
  }
  staging.rows_since_truncate += end - begin;
  const bool truncate = staging.rows_since_truncate >= kTruncateRows;
  if (truncate) staging.rows_since_truncate = 0;
  const std::string sql = truncate ? staging.sql + "; TRUNCATE " + staging.table : staging.sql;
  const size_t columns = static_cast<size_t>(insert.columns());
  CopyRows data;
  for (size_t row = begin; row < end; ++row) {
    for (size_t c = 0; c < columns; ++c) {
      const BulkCell& cell = rows.cells[row * columns + c];
      switch (cell.kind) {
        case BulkCell::Kind::kInt: data.Int(cell.value); break;
        case BulkCell::Kind::kText: data.Text(rows.texts[static_cast<size_t>(cell.value)]); break;
        case BulkCell::Kind::kNull: data.Null(); break;
      }
    }
    data.EndRow();
  }
  PGconn* conn = pg_->raw();
  if (PQsendQuery(conn, sql.c_str()) != 1) ThrowAndClear(conn, nullptr);
  // The results in order: the CREATE, the COPY's request for data (then the COPY's count), the INSERT; an
  // error ends the query string, and every result is read until libpq's null.
  PGresult* failed = nullptr;
  int64_t changed = 0;
  while (PGresult* r = PQgetResult(conn)) {
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_COPY_IN) {
      // In messages of at most 1 MiB (one CopyData message must stay under 1 GB, and its length is an int).
      constexpr size_t kChunk = size_t{1} << 20;
      const std::string& bytes = data.data();
      bool sent = true;
      for (size_t at = 0; sent && at < bytes.size(); at += kChunk) {
        sent = PQputCopyData(conn, bytes.data() + at, static_cast<int>(std::min(kChunk, bytes.size() - at))) == 1;
      }
      PQputCopyEnd(conn, sent ? nullptr : "the rows could not be sent");
    } else if (status == PGRES_COMMAND_OK) {
      if (std::string_view(PQcmdStatus(r)).substr(0, 7) == "INSERT ") {  // the move's count
        const char* count = PQcmdTuples(r);
        changed = count[0] == '\0' ? 0 : std::strtoll(count, nullptr, 10);
      }
    } else if (failed == nullptr) {
      failed = r;
      continue;
    }
    PQclear(r);
  }
  if (failed != nullptr) ThrowAndClear(conn, failed);
  return changed;
}

void PostgresBackend::Exec(std::string_view sql) {
  // A rollback discards what the statements still unanswered did, their errors with it: it must be sent
  // even when one of them failed.
  if (sql.rfind("ROLLBACK", 0) == 0) {
    pipeline_->SyncQuietly();
  } else {
    pipeline_->Sync();
  }
  Status done = pg_->Exec(std::string(sql));
  if (!done.ok()) throw SqlError(done.message(), pg_->last_sqlstate());
}

}  // namespace xladb::store
