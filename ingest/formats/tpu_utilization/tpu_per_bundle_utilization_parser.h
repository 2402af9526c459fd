// TpuPerBundleUtilizationParser: reads libtpu's `<timestamp>-<unit>-<NN>-final_hlo-static-per-bundle-
// utilization.txt` (closed source, no public printer; grammar from the 2 public samples, libtpu of
// 2025-12 … 2026-01):
//
//   == CAPACTIY:                                   (sic; `== CAPACITY:` is accepted too)
//     MXU|  XLU| VALU|  EUP| LOAD|STORE| SALU      unit names, '|'-separated, right-aligned
//       2     2     4     1     3     2     2      issue capacity of each unit per bundle
//   == UTILIZATION:
//   0 0 0 0 0 0 1                                  one row per bundle: units used in that bundle
//   …
//
// It is mapped onto the bundle-profile records (§8) so both reports land in the same tables:
//   `== UTILIZATION:` → UtilizationBlockRecord{ordinal 0, kernel "<all-bundles>"}
//   end of input      → per unit, in header order, UtilizationCounterRecord{counter = unit name,
//                       numerator = sum of the unit's counts over all bundles,
//                       denominator = capacity × number of bundles,
//                       ratio_text = FormatUtilizationRatio(num, den), ratio = num/den (0 when den is 0)}
//
// Invariant checked (kInvariant): no bundle count exceeds its unit's capacity (the first 20 violations are
// recorded one by one, the rest as one summary issue). A row with the wrong number of counts, a negative
// count or a sum past int64 is reported and skipped; other lines are counted with CountUnknownLine.
//
// Contract: the sink is not owned and must outlive the parser. Memory O(units): rows are summed as they
// stream by. Finish() fails (kDataLoss, plus a kError issue) when there is no capacity table or no
// `== UTILIZATION:` line. Not thread-safe; one instance per file.
#ifndef XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_PER_BUNDLE_UTILIZATION_PARSER_H_
#define XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_PER_BUNDLE_UTILIZATION_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/text/line_parser.h"

namespace xladb::ingest {

class TpuPerBundleUtilizationParser : public LineParser {
 public:
  static constexpr int kMaxRecordedCapacityViolations = 20;

  explicit TpuPerBundleUtilizationParser(RecordSink* sink) : LineParser(sink) {}

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

 private:
  enum class State { kStart, kUnits, kCapacity, kBeforeUtilization, kBundles };

  struct Unit {
    std::string name;
    int64_t capacity = 0;
    int64_t used = 0;  // sum over bundles
  };

  // Splits a row of blank-separated non-negative integers into *counts; false if a token is not an
  // integer (then the line is not a row). Sets *out_of_range when a token is negative or past int64.
  static bool SplitCounts(std::string_view line, std::vector<int64_t>* counts, bool* out_of_range);
  void ParseUnits(std::string_view line, int64_t line_no);
  void ParseCapacity(std::string_view line, int64_t line_no);
  void ParseBundle(std::string_view line, int64_t line_no);

  State state_ = State::kStart;
  std::vector<Unit> units_;
  std::vector<int64_t> counts_;  // scratch for the current row, reused
  int64_t bundles_ = 0;
  int64_t capacity_violations_ = 0;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_PER_BUNDLE_UTILIZATION_PARSER_H_
