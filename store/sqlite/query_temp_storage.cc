#include "store/sqlite/query_temp_storage.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace xladb::store {
namespace {

constexpr char kVfsName[] = "xladb-query-temp";
constexpr int kCountedKinds =
    SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL;

std::atomic<int64_t> g_limit{-1};
std::atomic<int64_t> g_in_use{0};
std::atomic<int64_t> g_high_water{0};
thread_local bool t_refused = false;

// Adds `bytes` to the budget, or records a refusal and returns false when that would pass the limit.
bool Charge(int64_t bytes) {
  const int64_t limit = g_limit.load(std::memory_order_relaxed);
  int64_t in_use = g_in_use.load(std::memory_order_relaxed);
  do {
    if (limit >= 0 && in_use + bytes > limit) {
      t_refused = true;
      return false;
    }
  } while (!g_in_use.compare_exchange_weak(in_use, in_use + bytes, std::memory_order_relaxed));
  const int64_t now = in_use + bytes;
  int64_t high = g_high_water.load(std::memory_order_relaxed);
  while (now > high && !g_high_water.compare_exchange_weak(high, now, std::memory_order_relaxed)) {
  }
  return true;
}

void Release(int64_t bytes) { g_in_use.fetch_sub(bytes, std::memory_order_relaxed); }

sqlite3_vfs* g_base = nullptr;  // the default VFS, set once before the shim is registered
sqlite3_vfs g_vfs;

// A counted temp file: this header, then the base VFS's file object (szOsFile bytes) right after it.
struct CountedFile {
  sqlite3_file base;
  sqlite3_file* real;
  int64_t charged;  // the bytes this file holds of the budget: its highest written end
};
static_assert(sizeof(CountedFile) % 8 == 0, "the base file object that follows must stay aligned");

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<CountedFile*>(f)->real; }

int CountedClose(sqlite3_file* f) {
  auto* file = reinterpret_cast<CountedFile*>(f);
  int rc = file->real->pMethods->xClose(file->real);
  Release(file->charged);
  file->charged = 0;
  return rc;
}

int CountedRead(sqlite3_file* f, void* buf, int amount, sqlite3_int64 offset) {
  return Real(f)->pMethods->xRead(Real(f), buf, amount, offset);
}

// Moves the file's charge to `end` (up: only within the budget) around `op`, which does the I/O.
template <typename Op>
int Resize(CountedFile* file, int64_t end, bool may_shrink, Op op) {
  const int64_t grow = end - file->charged;
  if (grow > 0 && !Charge(grow)) return SQLITE_FULL;
  int rc = op();
  if (grow > 0) {
    if (rc == SQLITE_OK) file->charged = end;
    else Release(grow);
  } else if (grow < 0 && may_shrink && rc == SQLITE_OK) {
    Release(-grow);
    file->charged = end;
  }
  return rc;
}

int CountedWrite(sqlite3_file* f, const void* buf, int amount, sqlite3_int64 offset) {
  auto* file = reinterpret_cast<CountedFile*>(f);
  return Resize(file, offset + amount, /*may_shrink=*/false,
                [&] { return file->real->pMethods->xWrite(file->real, buf, amount, offset); });
}

int CountedTruncate(sqlite3_file* f, sqlite3_int64 size) {
  auto* file = reinterpret_cast<CountedFile*>(f);
  return Resize(file, size, /*may_shrink=*/true, [&] { return file->real->pMethods->xTruncate(file->real, size); });
}

int CountedSync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int CountedFileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
int CountedLock(sqlite3_file* f, int lock) { return Real(f)->pMethods->xLock(Real(f), lock); }
int CountedUnlock(sqlite3_file* f, int lock) { return Real(f)->pMethods->xUnlock(Real(f), lock); }
int CountedCheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}

int CountedFileControl(sqlite3_file* f, int op, void* arg) {
  // Size hints and chunk sizes let the base VFS grow a file without a write; they are only advice, so a
  // counted file declines them and grows by writes alone.
  if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE) return SQLITE_NOTFOUND;
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}

int CountedSectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int CountedDeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }

// Version 1: no shared memory (temp files have none) and no memory mapping, so every byte goes through
// CountedWrite.
const sqlite3_io_methods kCountedMethods = {
    .iVersion = 1,
    .xClose = CountedClose,
    .xRead = CountedRead,
    .xWrite = CountedWrite,
    .xTruncate = CountedTruncate,
    .xSync = CountedSync,
    .xFileSize = CountedFileSize,
    .xLock = CountedLock,
    .xUnlock = CountedUnlock,
    .xCheckReservedLock = CountedCheckReservedLock,
    .xFileControl = CountedFileControl,
    .xSectorSize = CountedSectorSize,
    .xDeviceCharacteristics = CountedDeviceCharacteristics,
    .xShmMap = nullptr,
    .xShmLock = nullptr,
    .xShmBarrier = nullptr,
    .xShmUnmap = nullptr,
    .xFetch = nullptr,
    .xUnfetch = nullptr,
};

int ShimOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  if ((flags & kCountedKinds) == 0) return g_base->xOpen(g_base, name, f, flags, out_flags);
  auto* file = reinterpret_cast<CountedFile*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  file->charged = 0;
  int rc = g_base->xOpen(g_base, name, file->real, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (file->real->pMethods != nullptr) file->real->pMethods->xClose(file->real);
    f->pMethods = nullptr;  // SQLite calls no xClose on a file whose open failed and has no methods
    return rc;
  }
  f->pMethods = &kCountedMethods;
  return SQLITE_OK;
}

// Everything but xOpen goes to the default VFS, called with its own object.
int ShimDelete(sqlite3_vfs*, const char* name, int sync_dir) { return g_base->xDelete(g_base, name, sync_dir); }
int ShimAccess(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int ShimFullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* ShimDlOpen(sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void ShimDlError(sqlite3_vfs*, int n, char* out) { g_base->xDlError(g_base, n, out); }
void (*ShimDlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_base->xDlSym(g_base, handle, symbol);
}
void ShimDlClose(sqlite3_vfs*, void* handle) { g_base->xDlClose(g_base, handle); }
int ShimRandomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int ShimSleep(sqlite3_vfs*, int micros) { return g_base->xSleep(g_base, micros); }
int ShimCurrentTime(sqlite3_vfs*, double* out) { return g_base->xCurrentTime(g_base, out); }
int ShimGetLastError(sqlite3_vfs*, int n, char* out) { return g_base->xGetLastError(g_base, n, out); }
int ShimCurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) { return g_base->xCurrentTimeInt64(g_base, out); }

bool RegisterShim() {
  g_base = sqlite3_vfs_find(nullptr);
  if (g_base == nullptr) return false;
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = std::min(g_base->iVersion, 2);
  g_vfs.szOsFile = static_cast<int>(sizeof(CountedFile)) + g_base->szOsFile;
  g_vfs.mxPathname = g_base->mxPathname;
  g_vfs.zName = kVfsName;
  g_vfs.xOpen = ShimOpen;
  g_vfs.xDelete = ShimDelete;
  g_vfs.xAccess = ShimAccess;
  g_vfs.xFullPathname = ShimFullPathname;
  g_vfs.xDlOpen = ShimDlOpen;
  g_vfs.xDlError = ShimDlError;
  g_vfs.xDlSym = ShimDlSym;
  g_vfs.xDlClose = ShimDlClose;
  g_vfs.xRandomness = ShimRandomness;
  g_vfs.xSleep = ShimSleep;
  g_vfs.xCurrentTime = ShimCurrentTime;
  g_vfs.xGetLastError = ShimGetLastError;
  if (g_vfs.iVersion >= 2) g_vfs.xCurrentTimeInt64 = ShimCurrentTimeInt64;
  return sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0) == SQLITE_OK;
}

}  // namespace

void SetQueryTempStorageLimit(int64_t bytes) { g_limit.store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed); }
int64_t QueryTempStorageLimit() { return g_limit.load(std::memory_order_relaxed); }
int64_t QueryTempStorageInUse() { return g_in_use.load(std::memory_order_relaxed); }
int64_t QueryTempStorageHighWater() { return g_high_water.load(std::memory_order_relaxed); }
void ResetQueryTempStorageHighWater() { g_high_water.store(g_in_use.load(std::memory_order_relaxed)); }

bool TakeQueryTempStorageRefusal() {
  bool refused = t_refused;
  t_refused = false;
  return refused;
}

const char* QueryTempStorageVfs() {
  static const bool registered = RegisterShim();
  return registered ? kVfsName : nullptr;
}

}  // namespace xladb::store
