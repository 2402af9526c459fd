// Database::Open and CheckDatabaseFile (declared in store/backend/database.h): the one place that knows both
// backends, so the backend-neutral libraries below it link neither SQLite nor libpq.
#include <sys/stat.h>

#include <string>
#include <utility>

#include "store/backend/database.h"
#include "store/postgres/postgres_connection.h"
#include "store/postgres/postgres_open.h"
#include "store/sqlite/sqlite_open.h"

namespace xladb::store {

// A path that does not exist is left to Open(): read-write creates it, read-only fails in SQLite with its own
// message. Only a regular file is an SQLite database: a FIFO blocks the open or the first read forever, a
// device is none, and a folder would fail later with a vaguer message.
Status CheckDatabaseFile(const std::string& path) {
  if (IsPostgresUri(path)) return Status::Ok();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::Ok();
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  return Status::InvalidArgument("database " + path + " is " + kind +
                                 ", not a regular file: give an SQLite file (or a postgresql:// URI)");
}

StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path, Mode mode) {
  const bool read_only = mode == Mode::kReadOnly;
  if (IsPostgresUri(path)) {
    auto backend = OpenPostgresStore(path, read_only);
    if (!backend.ok()) return backend.status();
    return std::make_unique<Database>(std::move(backend.value()), path, mode);
  }
  if (Status file = CheckDatabaseFile(path); !file.ok()) return file;
  auto connection = OpenSqliteStore(path, read_only);
  if (!connection.ok()) return connection.status();
  return std::make_unique<Database>(std::move(connection.value()), path, mode);
}

}  // namespace xladb::store
