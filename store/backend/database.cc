#include "store/backend/database.h"

#include <exception>
#include <string>
#include <utility>

namespace xladb::store {

Database::Database(std::unique_ptr<SqlConnection> connection, std::string path, Mode mode)
    : connection_(std::move(connection)), path_(std::move(path)), mode_(mode) {}

Database::~Database() = default;

Status Database::Exec(const std::string& sql) {
  try {
    connection_->Exec(sql);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Internal(e.what());
  }
}

}  // namespace xladb::store
