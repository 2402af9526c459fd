// How values go to PostgreSQL and answers come back, shared by the backend's statements
// (postgres_backend.cc) and its bulk rows sent as arrays (postgres_bulk_arrays.cc). Private to store/postgres/.
//
// Pure helpers; thread-safe. ThrowAndClear throws SqlError (the backend's callers catch it).
#ifndef XLADB_STORE_POSTGRES_POSTGRES_WIRE_VALUES_H_
#define XLADB_STORE_POSTGRES_POSTGRES_WIRE_VALUES_H_

#include <libpq-fe.h>

#include <cstdint>
#include <string>

namespace xladb::store {

// The types' OIDs (pg_type) of parameters bound with their type, and of arrays' elements.
inline constexpr Oid kInt8Oid = 20;
inline constexpr Oid kTextOid = 25;
inline constexpr Oid kFloat8Oid = 701;
inline constexpr Oid kInt8ArrayOid = 1016;

// Appends `value` as float8's input reads it: the shortest text that reads back exactly, or NaN, Infinity,
// -Infinity. A bound parameter and an element of a bulk array (unquoted) take the same text.
void AppendFloat8Text(std::string& out, double value);

// The rows a command inserted, updated or deleted (0 for one that tells none, or no result).
int64_t RowsChanged(PGresult* result);

// Throws what PostgreSQL said about the failed `result` (nullptr: the connection's last error), which it frees.
[[noreturn]] void ThrowAndClear(PGconn* conn, PGresult* result);

}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_POSTGRES_WIRE_VALUES_H_
