#include "store/postgres/postgres_backend.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/postgres/postgres_wire_values.h"
#include "store/postgres/libpq_functions.h"

namespace xladb::store {
void AppendFloat8Text(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else {
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
  }
}

int64_t RowsChanged(PGresult* result) {
  const char* count = result == nullptr ? "" : pq::PQcmdTuples(result);
  return count[0] == '\0' ? 0 : std::strtoll(count, nullptr, 10);
}

void ThrowAndClear(PGconn* conn, PGresult* result) {
  PostgresError error = ErrorOf(conn, result);
  pq::PQclear(result);
  throw SqlError("PostgreSQL: " + error.message, std::move(error.sqlstate));
}

namespace {

class PostgresStatement final : public SqlStatement {
 public:
  // `parameters`: how many the text has; each is NULL until bound, as in SQLite.
  PostgresStatement(PGconn* conn, PostgresPipeline* pipeline, std::string sql, int parameters)
      : conn_(conn), pipeline_(pipeline), sql_(std::move(sql)), values_(static_cast<size_t>(parameters)),
        types_(static_cast<size_t>(parameters), 0) {}
  ~PostgresStatement() override {
    pipeline_->SyncQuietly();  // first: a read run together may still be owed its rows
    Clear();
    if (!name_.empty()) pq::PQclear(pq::PQexec(conn_, ("DEALLOCATE " + name_).c_str()));  // fails harmlessly if aborted
  }

  void BindNull(int index) override { Set(index, std::nullopt, 0); }
  void BindIntArray(int index, std::span<const int64_t> values) override {
    std::string text = "{";
    char buf[24];
    for (int64_t v : values) {
      if (text.size() > 1) text += ',';
      text.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    }
    text += '}';
    Set(index, std::move(text), kInt8ArrayOid);
  }
  bool Step() override {
    if (result_ == nullptr) RunQuery();
    return ++row_ < pq::PQntuples(result_);
  }
  int64_t Execute() override {
    Clear();
    RunQuery();
    const int64_t n = RowsChanged(result_);
    Clear();
    return n;
  }
  void ExecuteLater() override { Send(false); }
  // Sends the statement into the pipeline; with `keep_rows` its answer becomes the result Step reads once the
  // pipeline is read (PostgresBackend::RunTogether).
  void Send(bool keep_rows) {
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
    const int sent =
        name_.empty() ? pq::PQsendQueryParams(conn_, sql_.c_str(), n, types_.data(), values.data(), nullptr, nullptr, 0)
                      : pq::PQsendQueryPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    if (sent != 1) ThrowAndClear(conn_, nullptr);
    pipeline_->Sent(keep_rows ? &result_ : nullptr);
  }
  void Reset() override { Clear(); }
  void ClearBindings() override {
    for (auto& v : values_) v.reset();
    for (Oid& t : types_) t = 0;
  }
  int ColumnCount() const override { return result_ ? pq::PQnfields(result_) : 0; }
  bool IsNull(int column) const override { return pq::PQgetisnull(result_, row_, column) != 0; }
  int64_t Int(int column) const override {
    const char* v = pq::PQgetvalue(result_, row_, column);
    if (v[0] == 't' && v[1] == '\0') return 1;  // a boolean
    if (v[0] == 'f' && v[1] == '\0') return 0;
    const char* end = v + pq::PQgetlength(result_, row_, column);
    int64_t n = 0;
    auto [at, ec] = std::from_chars(v, end, n);
    if (ec == std::errc() && at == end) return n;
    return static_cast<int64_t>(std::strtod(v, nullptr));  // a numeric or a real, truncated as SQLite does
  }
  double Real(int column) const override { return std::strtod(pq::PQgetvalue(result_, row_, column), nullptr); }
  std::string Text(int column) const override {
    return std::string(pq::PQgetvalue(result_, row_, column),
                       static_cast<size_t>(pq::PQgetlength(result_, row_, column)));
  }

 protected:
  // Untyped, as a literal would be: the server takes the type the context asks for (int4 for substr's
  // length, int8 against a BIGINT column).
  void BindInt(int index, int64_t value) override { Set(index, std::to_string(value), 0); }
  void BindReal(int index, double value) override {
    std::string text;
    AppendFloat8Text(text, value);
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
  // While statements wait in the pipeline (a file's SAVEPOINT, its rows sent without waiting), it joins them
  // and is answered with them: one round trip, where reading theirs first and then running it took two. (A
  // statement the session forgot, after a DISCARD ALL, is prepared again below only: the connections that get
  // one, the SQL endpoint's, never send without waiting.)
  void RunQuery() {
    if (pipeline_->active()) {
      try {
        Send(true);
        pipeline_->Sync();  // throws the first error among them and this one
      } catch (...) {
        Clear();  // its rows may have come before the error: a statement that threw holds none
        throw;
      }
      row_ = -1;
      return;
    }
    pipeline_->Sync();  // nothing waits; throws an error a destructor read and kept
    const std::vector<const char*> values = Values();
    const int n = static_cast<int>(values.size());
    if (name_.empty() && runs_ > 0) Prepare();
    ++runs_;
    result_ = name_.empty()
                  ? pq::PQexecParams(conn_, sql_.c_str(), n, types_.data(), values.data(), nullptr, nullptr, 0)
                  : pq::PQexecPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    if (!name_.empty() && pq::PQresultStatus(result_) == PGRES_FATAL_ERROR &&
        ErrorOf(conn_, result_).sqlstate == "26000") {
      pq::PQclear(result_);  // the session forgot it (DISCARD ALL): prepared again
      result_ = nullptr;
      Prepare();
      result_ = pq::PQexecPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    }
    const ExecStatusType status = pq::PQresultStatus(result_);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      PGresult* failed = result_;
      result_ = nullptr;
      ThrowAndClear(conn_, failed);
    }
    row_ = -1;
  }
  void Prepare() {
    std::string name = NextName();
    PGresult* r = pq::PQprepare(conn_, name.c_str(), sql_.c_str(), static_cast<int>(types_.size()), types_.data());
    if (pq::PQresultStatus(r) != PGRES_COMMAND_OK) ThrowAndClear(conn_, r);
    pq::PQclear(r);
    name_ = std::move(name);
  }
  void Clear() {
    if (result_ != nullptr) pq::PQclear(result_);
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
  if (pq::PQenterPipelineMode(conn_) != 1) ThrowAndClear(conn_, nullptr);
  active_ = true;
}

void PostgresPipeline::Sent(pg_result** result) {
  waiting_.push_back(result);
  if (waiting_.size() >= kPipelineDepth) Sync();
}

void PostgresPipeline::ThrowKept() {
  if (!dropped_) return;
  const SqlError kept = *std::exchange(dropped_, std::nullopt);
  throw kept;
}

void PostgresPipeline::Sync() {
  if (!active_) {
    ThrowKept();
    return;
  }
  active_ = false;
  const std::vector<pg_result**> waiting = std::exchange(waiting_, {});
  std::optional<PostgresError> error;
  const bool synced = pq::PQpipelineSync(conn_) == 1;
  if (!synced) error = ErrorOf(conn_, nullptr);
  // Each command's results end with a null; the sync point's result ends them all. Two nulls in a row mean
  // the connection broke (nothing more will come).
  bool after_null = false;
  size_t command = 0;
  while (synced) {
    PGresult* r = pq::PQgetResult(conn_);
    if (r == nullptr) {
      if (after_null) break;
      after_null = true;
      ++command;
      continue;
    }
    after_null = false;
    const ExecStatusType status = pq::PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      pq::PQclear(r);
      break;
    }
    if (status == PGRES_FATAL_ERROR && !error) error = ErrorOf(conn_, r);
    if ((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) && command < waiting.size() &&
        waiting[command] != nullptr) {
      *waiting[command] = r;  // the statement's to read and free
      continue;
    }
    pq::PQclear(r);
  }
  if (pq::PQexitPipelineMode(conn_) != 1 && !error) error = ErrorOf(conn_, nullptr);
  // The kept error came first: what failed after it is most likely "the transaction is aborted", its effect.
  ThrowKept();
  if (error) throw SqlError("PostgreSQL: " + error->message, error->sqlstate);
}

void PostgresPipeline::SyncQuietly() noexcept {
  try {
    Sync();
  } catch (const SqlError& e) {
    // Kept for the next Sync (a statement destroyed while its SAVEPOINT's answer was unread must not hide
    // that it failed); a ROLLBACK drops it (Forget).
    if (!dropped_) dropped_ = e;
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

namespace {

// One statement: no `;` outside its end (the text the writer gives Exec: SAVEPOINT, RELEASE, COMMIT).
bool IsOneStatement(std::string_view sql) {
  const size_t semicolon = sql.find(';');
  return semicolon == std::string_view::npos || semicolon + 1 == sql.size();
}

// SAVEPOINT or RELEASE: a part of the open transaction begun or ended.
bool MarksASavepoint(std::string_view sql) {
  return sql.rfind("RELEASE ", 0) == 0 || sql.rfind("SAVEPOINT ", 0) == 0;
}
// A statement Exec may send behind the answers waiting and read with them: one that ends or marks a part of
// the open transaction. (A BEGIN there would take the statements before it into its transaction; some
// statements may not run in a pipeline at all.)
bool JoinsThePipeline(std::string_view sql) {
  return IsOneStatement(sql) && (MarksASavepoint(sql) || sql == "COMMIT");
}

}  // namespace

void PostgresBackend::ExecLater(std::string_view sql) {
  if (!IsOneStatement(sql)) return Exec(sql);
  if (MarksASavepoint(sql)) {
    std::unique_ptr<SqlStatement>& statement = savepoint_statements_[std::string(sql)];
    if (!statement) statement = Prepare(sql);
    statement->ExecuteLater();
    return;
  }
  pipeline_->Enter();
  // The extended protocol (a pipeline takes no simple query), no parameters.
  if (pq::PQsendQueryParams(pg_->raw(), std::string(sql).c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
    ThrowAndClear(pg_->raw(), nullptr);
  }
  pipeline_->Sent();
}

void PostgresBackend::RunTogether(std::span<SqlStatement* const> statements) {
  for (SqlStatement* st : statements) static_cast<PostgresStatement*>(st)->Send(true);  // this backend's own
  pipeline_->Sync();
}

void PostgresBackend::Exec(std::string_view sql) {
  // A rollback discards what the statements still unanswered did, their errors with it: it must be sent
  // even when one of them failed.
  const bool rollback = sql.rfind("ROLLBACK", 0) == 0;
  if (rollback) {
    pipeline_->SyncQuietly();
  } else if (pipeline_->active() && JoinsThePipeline(sql)) {
    // Behind the answers waiting, and read with them: if one of them failed, the server skips this one
    // and Sync throws the first error, as it would have before this statement was sent.
    ExecLater(sql);
    pipeline_->Sync();
    return;
  } else {
    pipeline_->Sync();
  }
  Status done = pg_->Exec(std::string(sql));
  if (!done.ok()) throw SqlError(done.message(), pg_->last_sqlstate());
  if (rollback) pipeline_->Forget();  // rolled back: what failed before is undone (kept if the rollback failed)
}

}  // namespace xladb::store
