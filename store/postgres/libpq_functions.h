// libpq, loaded when the first PostgreSQL store is opened rather than when the program starts: a program
// linked to libpq maps it and the libraries it needs (GSSAPI, LDAP, SASL, GnuTLS: 19 of xladb's 90) and
// relocates them at every start, a third of the page faults of `xladb --version` that a SQLite user pays for
// nothing (an empty program linked to xladb's libraries starts in 38-42 ms, without libpq's in 29-33 ms, on
// the machine of docs/PERFORMANCE.md, where a page fault costs tens of microseconds).
//
// XLADB_LIBPQ_FUNCTIONS lists every libpq function the store calls, once; the store calls them as
// pq::PQexec(…), …: the same names and arguments as libpq-fe.h declares (whose types it still uses), through
// pointers LoadLibpq() fills from the library Debian's libpq5 installs (libpq.so.5).
//
// Contract: LoadLibpq() loads the library once per process (thread-safe; later calls return the first
// result): Status::Ok, or an error that says what is missing. A pq:: function may be called only after a
// LoadLibpq() that succeeded (every PostgreSQL connection is opened after one: PostgresConnection::Connect);
// calling one before aborts the program with a message, as a null function pointer would without it.
#ifndef XLADB_STORE_POSTGRES_LIBPQ_FUNCTIONS_H_
#define XLADB_STORE_POSTGRES_LIBPQ_FUNCTIONS_H_

#include <libpq-fe.h>

#include "base/status.h"

#define XLADB_LIBPQ_FUNCTIONS(X)                                                                            \
  X(PQclear) X(PQcmdTuples) X(PQconnectdb) X(PQdescribePrepared) X(PQenterPipelineMode) X(PQerrorMessage)   \
  X(PQexec) X(PQexecParams) X(PQexecPrepared) X(PQexitPipelineMode) X(PQfinish) X(PQfname) X(PQftype)       \
  X(PQgetResult) X(PQgetisnull) X(PQgetlength) X(PQgetvalue) X(PQnfields) X(PQntuples) X(PQpipelineSync)    \
  X(PQprepare) X(PQputCopyData) X(PQputCopyEnd) X(PQresultErrorField) X(PQresultErrorMessage)               \
  X(PQresultStatus) X(PQsendQueryParams) X(PQsendQueryPrepared) X(PQsetSingleRowMode) X(PQstatus)

namespace xladb::store {

[[nodiscard]] Status LoadLibpq();

namespace pq {

// The loaded functions (LoadLibpq).
struct Functions {
#define XLADB_LIBPQ_POINTER(name) decltype(&::name) name = nullptr;
  XLADB_LIBPQ_FUNCTIONS(XLADB_LIBPQ_POINTER)
#undef XLADB_LIBPQ_POINTER
};
const Functions& Loaded();

#define XLADB_LIBPQ_CALL(name)                  \
  template <typename... Args>                   \
  inline auto name(Args... args) {              \
    return Loaded().name(args...);              \
  }
XLADB_LIBPQ_FUNCTIONS(XLADB_LIBPQ_CALL)
#undef XLADB_LIBPQ_CALL

}  // namespace pq
}  // namespace xladb::store

#endif  // XLADB_STORE_POSTGRES_LIBPQ_FUNCTIONS_H_
