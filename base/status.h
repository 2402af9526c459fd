// Status: the error value every xladb layer returns instead of throwing.
//
// Contract
//   * A Status is either OK or carries a code and a human-readable message that names what went wrong
//     and, where it helps, what to do about it.
//   * Functions that can fail return Status (or StatusOr<T>); no exception crosses a module boundary.
//   * Both types are [[nodiscard]]: a call whose Status is dropped does not compile (the build uses -Werror).
//     Where dropping one is right (a best-effort cleanup on a path that already failed), say so with
//     IgnoreError() and a comment why.
//   * Status is a small value type: copy it freely. It is not thread-safe to mutate one instance from two
//     threads, like any std::string.
#ifndef XLADB_BASE_STATUS_H_
#define XLADB_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace xladb {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,   // the caller asked for something malformed (bad flag, bad path)
    kNotFound,          // a file, run or module that does not exist
    kDataLoss,          // input that cannot be read as what it claims to be
    kIoError,           // the operating system refused a read or write
    kFailedPrecondition,// the database or input is in a state that forbids the call
    kPermissionDenied,  // refused by policy (allowed roots, authorizer, token)
    kResourceExhausted, // a configured limit was hit (rows, bytes, time)
    kInternal,          // a bug in xladb
  };

  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status DataLoss(std::string m) { return Status(Code::kDataLoss, std::move(m)); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status FailedPrecondition(std::string m) { return Status(Code::kFailedPrecondition, std::move(m)); }
  static Status PermissionDenied(std::string m) { return Status(Code::kPermissionDenied, std::move(m)); }
  static Status ResourceExhausted(std::string m) { return Status(Code::kResourceExhausted, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK" or "<code name>: <message>".
  std::string ToString() const;
  // Drops this Status on purpose (a best-effort step whose failure changes nothing); the call site says why.
  void IgnoreError() const {}

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* StatusCodeName(Status::Code code);

// StatusOr<T>: a T or a non-OK Status. Accessing value() of an error is a bug (asserts in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: must not be OK
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace xladb

#endif  // XLADB_BASE_STATUS_H_
