#include "service/store_measure.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "base/unix_time.h"
#include "store/admin/store_size.h"
#include "store/backend/database.h"

namespace xladb::service {

struct StoreMeasure::Shared {
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  bool measure_soon = false;
  bool exited = false;
  std::optional<Measure> last;
};

namespace {

using Clock = std::chrono::steady_clock;

// One measure of the store on `db` (opened, or opened again after a failure, here); nullopt and `why` when
// it failed.
std::optional<StoreMeasure::Measure> MeasureOnce(const std::string& db_path, std::unique_ptr<store::Database>& db,
                                                 std::string& why) {
  if (!db) {
    auto opened = store::Database::Open(db_path, store::Database::Mode::kReadOnly);
    if (!opened.ok()) {
      why = opened.status().message();
      return std::nullopt;
    }
    db = std::move(opened.value());
  }
  auto size = store::MeasureStore(*db);
  if (!size.ok()) {
    why = size.status().message();
    db.reset();  // a broken connection (a restarted PostgreSQL) is opened again next time
    return std::nullopt;
  }
  return StoreMeasure::Measure{size->runs, size->modules, size->bytes, static_cast<double>(UnixMicrosNow()) / 1e6};
}

void MeasureLoop(const std::shared_ptr<StoreMeasure::Shared>& shared, const std::string& db_path,
                 std::chrono::milliseconds period) {
  std::unique_ptr<store::Database> db;
  bool said_why = false;
  Clock::time_point last{};  // the first measure is at once
  std::unique_lock<std::mutex> lock(shared->mu);
  while (!shared->stopping) {
    // Every period, and a second after the last measure when a job ended since: at most one a second.
    Clock::time_point due = last + period;
    if (shared->measure_soon) due = std::min(due, last + std::chrono::seconds(1));
    if (Clock::now() < due) {
      shared->wake.wait_until(lock, due);  // woken early by MeasureSoon or the destructor: look again
      continue;
    }
    shared->measure_soon = false;
    lock.unlock();
    std::string why;
    const std::optional<StoreMeasure::Measure> measure = MeasureOnce(db_path, db, why);
    if (!measure && !said_why) {
      std::fprintf(stderr, "xladbd warn: metrics: cannot measure the store: %s\n", why.c_str());
      said_why = true;
    }
    last = Clock::now();
    lock.lock();
    if (measure) shared->last = measure;
  }
  shared->exited = true;
  shared->wake.notify_all();
}

}  // namespace

StoreMeasure::StoreMeasure(std::string db_path, std::chrono::milliseconds period)
    : shared_(std::make_shared<Shared>()),
      thread_([shared = shared_, db_path = std::move(db_path), period] { MeasureLoop(shared, db_path, period); }) {}

StoreMeasure::~StoreMeasure() {
  std::unique_lock<std::mutex> lock(shared_->mu);
  shared_->stopping = true;
  shared_->wake.notify_all();
  const bool exited = shared_->wake.wait_for(lock, std::chrono::seconds(5), [this] { return shared_->exited; });
  lock.unlock();
  if (exited) {
    thread_.join();
  } else {
    thread_.detach();  // stuck in a database call: it ends on its own, or with the process
  }
}

void StoreMeasure::MeasureSoon() {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->measure_soon = true;
  shared_->wake.notify_all();
}

std::optional<StoreMeasure::Measure> StoreMeasure::Last() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->last;
}

}  // namespace xladb::service
