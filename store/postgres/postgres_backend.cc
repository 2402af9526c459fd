#include "store/postgres/postgres_backend.h"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include "store/backend/bulk_insert.h"

namespace xladb::store {
namespace {

constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kInt8ArrayOid = 1016;

// Appends `value` as float8's input reads it: the shortest text that reads back exactly, or NaN, Infinity,
// -Infinity. A bound parameter and an element of a bulk array (unquoted) take the same text.
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

// The rows a command inserted, updated or deleted (0 for one that tells none, or no result).
int64_t RowsChanged(PGresult* result) {
  const char* count = result == nullptr ? "" : PQcmdTuples(result);
  return count[0] == '\0' ? 0 : std::strtoll(count, nullptr, 10);
}

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
    pipeline_->SyncQuietly();  // first: a read run together may still be owed its rows
    Clear();
    if (!name_.empty()) PQclear(PQexec(conn_, ("DEALLOCATE " + name_).c_str()));  // fails harmlessly if aborted
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
    return ++row_ < PQntuples(result_);
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
    const int sent = name_.empty()
                         ? PQsendQueryParams(conn_, sql_.c_str(), n, types_.data(), values.data(), nullptr, nullptr, 0)
                         : PQsendQueryPrepared(conn_, name_.c_str(), n, values.data(), nullptr, nullptr, 0);
    if (sent != 1) ThrowAndClear(conn_, nullptr);
    pipeline_->Sent(keep_rows ? &result_ : nullptr);
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
  const bool synced = PQpipelineSync(conn_) == 1;
  if (!synced) error = ErrorOf(conn_, nullptr);
  // Each command's results end with a null; the sync point's result ends them all. Two nulls in a row mean
  // the connection broke (nothing more will come).
  bool after_null = false;
  size_t command = 0;
  while (synced) {
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      if (after_null) break;
      after_null = true;
      ++command;
      continue;
    }
    after_null = false;
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (status == PGRES_FATAL_ERROR && !error) error = ErrorOf(conn_, r);
    if ((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) && command < waiting.size() &&
        waiting[command] != nullptr) {
      *waiting[command] = r;  // the statement's to read and free
      continue;
    }
    PQclear(r);
  }
  if (PQexitPipelineMode(conn_) != 1 && !error) error = ErrorOf(conn_, nullptr);
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

int64_t PostgresBackend::Append(const BulkRows& rows, bool wait, std::vector<int64_t>* returned) {
  if (returned != nullptr) RequireReturning(rows.insert);
  const size_t columns = static_cast<size_t>(rows.insert.columns());
  const auto keys = static_cast<size_t>(rows.insert.key_columns());
  // A row's conflict key as a hash: equal keys give equal hashes, so a repeated key always starts a new
  // segment (a collision only starts one early, which is as correct).
  auto key_of = [&](size_t row) {
    size_t h = 0;
    for (size_t c = 0; c < keys; ++c) {
      const BulkCell& cell = rows.cells[row * columns + c];
      const size_t part = cell.kind == BulkCell::Kind::kInt    ? std::hash<int64_t>()(cell.value)
                          : cell.kind == BulkCell::Kind::kReal ? std::hash<double>()(cell.real())
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
      changed += AppendSegment(rows, begin, row, wait, returned);
      seen = {key};
      begin = row;
    }
  }
  if (begin < total) changed += AppendSegment(rows, begin, total, wait, returned);
  return changed;
}

namespace {

// Appends `text` to a text-format array literal as one quoted element (a backslash before `"` and `\`).
void AppendArrayText(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : StoredText(text)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

PostgresBackend::ArrayInsert PostgresBackend::PrepareArrayInsert(const BulkInsert& insert) {
  pipeline_->Sync();
  // The columns' types, for the arrays' casts and their elements' binary form (the table as the session's
  // search_path finds it).
  StatusOr<PostgresConnection::Rows> types =
      pg_->Query("SELECT a.attname, format_type(a.atttypid, NULL), a.atttypid FROM pg_attribute a "
                 "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped",
                 {insert.table()});
  if (!types.ok()) throw SqlError(types.status().message(), pg_->last_sqlstate());
  std::unordered_map<std::string, std::pair<std::string, Oid>> type_of;
  for (const auto& row : types->values) {
    const Oid oid = static_cast<Oid>(std::strtoul(row[2].value_or("0").c_str(), nullptr, 10));
    type_of[row[0].value_or("")] = {row[1].value_or(""), oid};
  }
  ArrayInsert prepared;
  std::string arrays;
  int n = 0;
  for (const std::string& column : insert.column_names()) {
    const auto type = type_of.find(column);
    if (type == type_of.end()) throw SqlError("PostgreSQL: table " + insert.table() + " has no column " + column);
    arrays += (n > 0 ? ", unnest($" : "unnest($") + std::to_string(n + 1) + "::" + type->second.first + "[])";
    prepared.element_types.push_back(type->second.second);
    ++n;
  }
  const std::string sql = "INSERT INTO " + insert.table() + "(" + insert.column_list() + ") SELECT " +
                          arrays + " " + insert.conflict() +
                          (insert.returning().empty() ? "" : " RETURNING " + insert.returning());
  static std::atomic<int64_t> next{0};  // a name never used before in the session, even after a failed prepare
  prepared.name = "xladb_bulk_" + insert.table() + "_" + std::to_string(next.fetch_add(1));
  Exec("PREPARE " + prepared.name + " AS " + sql);  // the parameters' types from their casts
  return prepared;
}

namespace {

// One column of a segment as an array parameter: in binary form (array_recv's: a header, then each element's
// length and bytes, integers big-endian) where the column is bigint, text or double precision and every cell
// is of its kind or NULL; else as a text-format literal (array_in's), which the server converts as it would a
// literal. Binary elements need no quoting and no number parsing: the server's bind of the 200 MiB buffer
// assignment's arrays took about half the time (docs/PERFORMANCE.md).
class ArrayParameter {
 public:
  void Start(Oid element_type, bool binary) {
    element_type_ = element_type;
    binary_ = binary;
    elements_ = 0;
    has_null_ = false;
    out_.clear();
    if (binary_) {
      out_.resize(20);  // ndim, flags, element type, then the dimension's length and lower bound: Finish
    } else {
      out_ += '{';
    }
  }
  // Appends one cell; returns the bytes it added.
  size_t Add(const BulkCell& cell, std::span<const std::string> texts) {
    const size_t before = out_.size();
    if (binary_) {
      AddBinary(cell, texts);
    } else {
      AddText(cell, texts);
    }
    ++elements_;
    return out_.size() - before;
  }
  // The parameter's bytes, complete.
  const std::string& Finish() {
    if (binary_) {
      PutAt(0, 1);  // one dimension
      PutAt(4, has_null_ ? 1 : 0);
      PutAt(8, element_type_);
      PutAt(12, static_cast<uint32_t>(elements_));
      PutAt(16, 1);  // lower bound
    } else {
      out_ += '}';
    }
    return out_;
  }
  bool binary() const { return binary_; }

  // Whether cells of `kind` go into a binary array of `element_type` (NULL goes into any).
  static bool BinaryFits(Oid element_type, BulkCell::Kind kind) {
    switch (kind) {
      case BulkCell::Kind::kNull: return element_type == kInt8Oid || element_type == kTextOid ||
                                         element_type == kFloat8Oid;
      case BulkCell::Kind::kInt: return element_type == kInt8Oid;
      case BulkCell::Kind::kText: return element_type == kTextOid;
      case BulkCell::Kind::kReal: return element_type == kFloat8Oid;
    }
    return false;
  }

 private:
  static constexpr Oid kInt8Oid = 20;

  void Put32(uint32_t v) {
    const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
    out_.append(b, 4);
  }
  void Put64(uint64_t v) {
    Put32(static_cast<uint32_t>(v >> 32));
    Put32(static_cast<uint32_t>(v));
  }
  void PutAt(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[at + static_cast<size_t>(i)] = static_cast<char>(v >> (24 - 8 * i));
  }
  void AddBinary(const BulkCell& cell, std::span<const std::string> texts) {
    switch (cell.kind) {
      case BulkCell::Kind::kNull:
        Put32(0xffffffffu);  // length -1
        has_null_ = true;
        break;
      case BulkCell::Kind::kInt:
        Put32(8);
        Put64(static_cast<uint64_t>(cell.value));
        break;
      case BulkCell::Kind::kReal:
        Put32(8);
        Put64(std::bit_cast<uint64_t>(cell.real()));
        break;
      case BulkCell::Kind::kText: {
        const std::string_view text = StoredText(texts[static_cast<size_t>(cell.value)]);
        Put32(static_cast<uint32_t>(text.size()));
        out_.append(text);
        break;
      }
    }
  }
  void AddText(const BulkCell& cell, std::span<const std::string> texts) {
    if (elements_ > 0) out_ += ',';
    char digits[24];
    switch (cell.kind) {
      case BulkCell::Kind::kInt:
        out_.append(digits, std::to_chars(digits, digits + sizeof digits, cell.value).ptr);
        break;
      case BulkCell::Kind::kReal: AppendFloat8Text(out_, cell.real()); break;
      case BulkCell::Kind::kText: AppendArrayText(out_, texts[static_cast<size_t>(cell.value)]); break;
      case BulkCell::Kind::kNull: out_ += "NULL"; break;
    }
  }

  Oid element_type_ = 0;
  bool binary_ = false;
  size_t elements_ = 0;
  bool has_null_ = false;
  std::string out_;
};

}  // namespace

int64_t PostgresBackend::AppendSegment(const BulkRows& rows, size_t begin, size_t end, bool wait,
                                       std::vector<int64_t>* returned) {
  const BulkInsert& insert = rows.insert;
  ArrayInsert& statement = bulk_[&insert];
  if (statement.name.empty()) statement = PrepareArrayInsert(insert);
  const size_t columns = static_cast<size_t>(insert.columns());
  // Each column binary when all its cells of the segment fit (ArrayParameter::BinaryFits).
  std::vector<bool> binary(columns, true);
  for (size_t row = begin; row < end; ++row) {
    for (size_t c = 0; c < columns; ++c) {
      if (binary[c] && !ArrayParameter::BinaryFits(statement.element_types[c], rows.cells[row * columns + c].kind)) {
        binary[c] = false;
      }
    }
  }
  int64_t changed = 0;
  std::vector<ArrayParameter> arrays(columns);
  while (begin < end) {
    // Rows from `begin` until the arrays hold kMaxArrayBytes (at least one row): a statement's parameters
    // stay far below the server's 1 GB a message whatever the texts.
    for (size_t c = 0; c < columns; ++c) arrays[c].Start(statement.element_types[c], binary[c]);
    size_t bytes = 0;
    size_t row = begin;
    for (; row < end && (row == begin || bytes < kMaxArrayBytes); ++row) {
      for (size_t c = 0; c < columns; ++c) bytes += arrays[c].Add(rows.cells[row * columns + c], rows.texts);
    }
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (ArrayParameter& a : arrays) {
      const std::string& parameter = a.Finish();
      values.push_back(parameter.c_str());
      lengths.push_back(static_cast<int>(parameter.size()));
      formats.push_back(a.binary() ? 1 : 0);
    }
    changed += SendArrays(statement.name, values, lengths, formats, wait, returned);
    begin = row;
  }
  return changed;
}

int64_t PostgresBackend::SendArrays(const std::string& statement, const std::vector<const char*>& values,
                                    const std::vector<int>& lengths, const std::vector<int>& formats, bool wait,
                                    std::vector<int64_t>* returned) {
  // Behind the statements waiting in the pipeline, and read with them: one round trip, or none of its own.
  PGconn* conn = pg_->raw();
  pipeline_->Enter();
  if (PQsendQueryPrepared(conn, statement.c_str(), static_cast<int>(values.size()), values.data(), lengths.data(),
                          formats.data(), 0) != 1) {
    ThrowAndClear(conn, nullptr);
  }
  if (!wait) {
    pipeline_->Sent();
    return 0;
  }
  PGresult* answer = nullptr;
  try {
    pipeline_->Sent(&answer);
    pipeline_->Sync();
  } catch (...) {
    PQclear(answer);  // null unless the error came after it
    throw;
  }
  const int64_t changed = RowsChanged(answer);
  const int rows = PQntuples(answer), columns = PQnfields(answer);
  for (int r = 0; returned != nullptr && r < rows; ++r) {
    for (int c = 0; c < columns; ++c) returned->push_back(std::strtoll(PQgetvalue(answer, r, c), nullptr, 10));
  }
  PQclear(answer);
  return changed;
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
  if (PQsendQueryParams(pg_->raw(), std::string(sql).c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
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
