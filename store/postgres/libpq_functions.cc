#include "store/postgres/libpq_functions.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace xladb::store {
namespace {

constexpr char kLibrary[] = "libpq.so.5";  // Debian's libpq5 (the soname libpq-dev links against)

pq::Functions functions;
Status load_status = Status::Ok();
std::atomic<bool> loaded{false};  // set after `functions`, once

Status Load() {
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::FailedPrecondition(std::string("PostgreSQL's client library could not be loaded (") +
                                      (why ? why : kLibrary) + "): install libpq5");
  }
#define XLADB_LIBPQ_LOOKUP(name)                                                                    \
  functions.name = reinterpret_cast<decltype(functions.name)>(dlsym(library, #name));               \
  if (functions.name == nullptr) {                                                                  \
    return Status::FailedPrecondition(std::string(kLibrary) + " has no " #name ": libpq 14 or newer " \
                                      "is needed (pipeline mode)");                                 \
  }
  XLADB_LIBPQ_FUNCTIONS(XLADB_LIBPQ_LOOKUP)
#undef XLADB_LIBPQ_LOOKUP
  return Status::Ok();  // the library stays loaded for the process's life
}

}  // namespace

Status LoadLibpq() {
  static std::once_flag once;
  std::call_once(once, [] {
    load_status = Load();
    loaded.store(load_status.ok(), std::memory_order_release);
  });
  return load_status;
}

const pq::Functions& pq::Loaded() {
  if (!loaded.load(std::memory_order_acquire)) {
    std::fprintf(stderr, "xladb: a libpq function was called before libpq was loaded (LoadLibpq)\n");
    std::abort();
  }
  return functions;
}

}  // namespace xladb::store
