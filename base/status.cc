#include "base/status.h"

namespace xladb {

const char* StatusCodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Status::Code::kNotFound: return "NOT_FOUND";
    case Status::Code::kDataLoss: return "DATA_LOSS";
    case Status::Code::kIoError: return "IO_ERROR";
    case Status::Code::kFailedPrecondition: return "FAILED_PRECONDITION";
    case Status::Code::kPermissionDenied: return "PERMISSION_DENIED";
    case Status::Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Status::Code::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace xladb
