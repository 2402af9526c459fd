#include "ingest/formats/tpu_utilization/tpu_per_bundle_utilization_parser.h"

#include <optional>
#include <utility>

#include "ingest/text/blank_text.h"
#include "ingest/text/printed_number.h"
#include "ingest/formats/tpu_utilization/tpu_bundle_profile_parser.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kCapacityTitle = "== CAPACTIY:";  // sic, as libtpu prints it
constexpr std::string_view kCapacityTitleFixed = "== CAPACITY:";
constexpr std::string_view kUtilizationTitle = "== UTILIZATION:";
constexpr std::string_view kAllBundles = "<all-bundles>";

}  // namespace

void TpuPerBundleUtilizationParser::ParseLine(std::string_view line, int64_t line_no) {
  if (line.empty()) return;
  switch (state_) {
    case State::kStart:
      if (line == kCapacityTitle || line == kCapacityTitleFixed) {
        state_ = State::kUnits;
        return;
      }
      break;
    case State::kUnits:
      ParseUnits(line, line_no);
      return;
    case State::kCapacity:
      ParseCapacity(line, line_no);
      return;
    case State::kBeforeUtilization:
      if (line == kUtilizationTitle) {
        state_ = State::kBundles;
        UtilizationBlockRecord block;
        block.ordinal = 0;
        block.kernel = std::string(kAllBundles);
        sink()->OnUtilizationBlock(std::move(block));
        return;
      }
      break;
    case State::kBundles:
      ParseBundle(line, line_no);
      return;
  }
  CountUnknownLine(line, line_no, "per-bundle utilization report");
}

void TpuPerBundleUtilizationParser::ParseUnits(std::string_view line, int64_t line_no) {
  std::vector<Unit> units;
  std::string_view rest = line;
  while (true) {
    const size_t bar = rest.find('|');
    const std::string_view name = StripBlanks(rest.substr(0, bar));
    if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) {
      CountUnknownLine(line, line_no, "per-bundle utilization unit header");
      return;
    }
    units.push_back(Unit{std::string(name), 0, 0});
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  units_ = std::move(units);
  state_ = State::kCapacity;
}

bool TpuPerBundleUtilizationParser::SplitCounts(std::string_view line, std::vector<int64_t>* counts,
                                                bool* out_of_range) {
  counts->clear();
  *out_of_range = false;
  size_t pos = 0;
  while (pos < line.size()) {
    if (IsBlank(line[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && !IsBlank(line[end])) ++end;
    const std::string_view token = line.substr(pos, end - pos);
    pos = end;
    const size_t digits = token.front() == '-' ? 1 : 0;
    if (token.size() == digits || token.find_first_not_of("0123456789", digits) != std::string_view::npos) {
      return false;
    }
    std::optional<int64_t> value = ParseInt64(token);
    if (!value || *value < 0) {
      *out_of_range = true;
      counts->push_back(-1);
    } else {
      counts->push_back(*value);
    }
  }
  return !counts->empty();
}

void TpuPerBundleUtilizationParser::ParseCapacity(std::string_view line, int64_t line_no) {
  bool out_of_range = false;
  if (!SplitCounts(line, &counts_, &out_of_range)) {
    CountUnknownLine(line, line_no, "per-bundle utilization capacity row");
    return;
  }
  if (out_of_range || counts_.size() != units_.size()) {
    Report(Severity::kInvariant, line_no,
           "capacity row has " + std::to_string(counts_.size()) + " values for " + std::to_string(units_.size()) +
               " units, or a negative / out-of-range value: " + std::string(line.substr(0, 200)));
    return;
  }
  for (size_t i = 0; i < units_.size(); ++i) units_[i].capacity = counts_[i];
  state_ = State::kBeforeUtilization;
}

void TpuPerBundleUtilizationParser::ParseBundle(std::string_view line, int64_t line_no) {
  bool out_of_range = false;
  if (!SplitCounts(line, &counts_, &out_of_range)) {
    CountUnknownLine(line, line_no, "per-bundle utilization rows");
    return;
  }
  const int64_t bundle = bundles_;
  if (out_of_range || counts_.size() != units_.size()) {
    Report(Severity::kInvariant, line_no,
           "bundle " + std::to_string(bundle) + " has " + std::to_string(counts_.size()) + " counts for " +
               std::to_string(units_.size()) + " units, or a negative / out-of-range count; row skipped");
    return;
  }
  for (size_t i = 0; i < units_.size(); ++i) {
    int64_t sum = 0;
    if (__builtin_add_overflow(units_[i].used, counts_[i], &sum)) {
      Report(Severity::kInvariant, line_no,
             "bundle " + std::to_string(bundle) + ": the sum of unit " + units_[i].name +
                 " counts overflows int64; row skipped");
      return;
    }
  }
  for (size_t i = 0; i < units_.size(); ++i) {
    Unit& unit = units_[i];
    unit.used += counts_[i];
    if (counts_[i] > unit.capacity && ++capacity_violations_ <= kMaxRecordedCapacityViolations) {
      Report(Severity::kInvariant, line_no,
             "bundle " + std::to_string(bundle) + ": unit " + unit.name + " count " + std::to_string(counts_[i]) +
                 " exceeds its capacity " + std::to_string(unit.capacity));
    }
  }
  ++bundles_;
}

Status TpuPerBundleUtilizationParser::Finish() {
  if (state_ != State::kBundles) {
    Report(Severity::kError, 0, "not a per-bundle utilization report: no capacity table and `== UTILIZATION:`");
    return Status::DataLoss(
        "not a per-bundle utilization report: missing `== CAPACTIY:` table or `== UTILIZATION:` line");
  }
  if (capacity_violations_ > kMaxRecordedCapacityViolations) {
    Report(Severity::kInvariant, 0,
           std::to_string(capacity_violations_ - kMaxRecordedCapacityViolations) +
               " more unit counts exceed their capacity (not listed one by one)");
  }
  for (const Unit& unit : units_) {
    UtilizationCounterRecord record;
    record.block_ordinal = 0;
    record.kernel = std::string(kAllBundles);
    record.counter = unit.name;
    record.numerator = unit.used;
    if (__builtin_mul_overflow(unit.capacity, bundles_, &record.denominator)) {
      Report(Severity::kInvariant, 0,
             "unit " + unit.name + ": capacity " + std::to_string(unit.capacity) + " × " + std::to_string(bundles_) +
                 " bundles overflows int64; counter skipped");
      continue;
    }
    record.ratio_text = FormatUtilizationRatio(record.numerator, record.denominator);
    record.ratio = UtilizationRatio(record.numerator, record.denominator);
    sink()->OnUtilizationCounter(std::move(record));
  }
  return Status::Ok();
}

}  // namespace xladb::ingest
