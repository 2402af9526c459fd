#include "service/metrics/service_events.h"

#include <atomic>
#include <iterator>

namespace xladb::service::metrics {
namespace {

std::atomic<int64_t> g_refusals[std::size(kRefusalCaps)];
std::atomic<double> g_last_prune_seconds{0};

}  // namespace

std::string_view RefusalCapName(RefusalCap cap) {
  switch (cap) {
#define XLADB_REFUSAL_NAME(enumerator, label, what) \
  case RefusalCap::enumerator: return label;
    XLADB_REFUSAL_CAPS(XLADB_REFUSAL_NAME)
#undef XLADB_REFUSAL_NAME
  }
  return "unknown";
}

void CountRefusal(RefusalCap cap) { g_refusals[static_cast<size_t>(cap)].fetch_add(1, std::memory_order_relaxed); }

int64_t RefusalCount(RefusalCap cap) { return g_refusals[static_cast<size_t>(cap)].load(std::memory_order_relaxed); }

void NotePrune(double unix_seconds) { g_last_prune_seconds.store(unix_seconds, std::memory_order_relaxed); }

double LastPruneSeconds() { return g_last_prune_seconds.load(std::memory_order_relaxed); }

}  // namespace xladb::service::metrics
