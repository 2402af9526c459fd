// PostgresBackend's bulk rows (store/postgres/postgres_backend.h): a batch's rows sent as one array a column to
// a statement prepared once a table (`INSERT … SELECT unnest($1::bigint[]), …`: postgres_backend.h), split where
// a row's conflict key repeats (one INSERT may not touch a row twice) and where the arrays reach kMaxArrayBytes.

#include <atomic>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "store/backend/bulk_insert.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_wire_values.h"
#include "store/postgres/libpq_functions.h"

namespace xladb::store {

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
  if (pq::PQsendQueryPrepared(conn, statement.c_str(), static_cast<int>(values.size()), values.data(), lengths.data(),
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
    pq::PQclear(answer);  // null unless the error came after it
    throw;
  }
  const int64_t changed = RowsChanged(answer);
  const int rows = pq::PQntuples(answer), columns = pq::PQnfields(answer);
  for (int r = 0; returned != nullptr && r < rows; ++r) {
    for (int c = 0; c < columns; ++c) returned->push_back(std::strtoll(pq::PQgetvalue(answer, r, c), nullptr, 10));
  }
  pq::PQclear(answer);
  return changed;
}

}  // namespace xladb::store
