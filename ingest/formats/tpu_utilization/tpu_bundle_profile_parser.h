// TpuBundleProfileParser: reads libtpu's `<timestamp>-<unit>-<NN>-hlo-static-bundle-profile.txt` utilization
// counters (§8). libtpu is closed source, so there is no public printer: the grammar is inferred from seed 001
// and the 30 public samples (libtpu of 2025-12 … 2026-01). XLA's xla/tests/two_plus_two_simple_test.cc only
// checks that the file starts with `HLO: <no-hlo-instruction>`.
//
// Lines → records
//   `HLO: <no-hlo-instruction>`          → UtilizationBlockRecord{ordinal, kernel = "<no-hlo-instruction>"}
//   `HLO: <instruction long text>`       → UtilizationBlockRecord{ordinal, kernel = instruction name}, and an
//                                          InstructionRecord (ParseHloInstructionText) the first time that
//                                          name is seen in the file
//   ` - <COUNTER>: (<num>/<den>) - <ratio>`
//                                        → UtilizationCounterRecord of the current block; COUNTER may contain
//                                          spaces (`MXU_0 matpush`), ratio is `%g` (`0.140374`, `6.6072e-05`)
//   empty line                           → ends the block
// Blocks are numbered from 0 in file order; the same kernel may repeat (key by ordinal). Counters may be
// absent from a block.
//
// Invariants checked (kInvariant, never fatal): numerator <= denominator; the printed ratio equals
// FormatUtilizationRatio(num, den) (6 significant digits), not checked when den is 0; the printed ratio is a
// finite number (`nan`, `inf`: the record's ratio is then UtilizationRatio(num, den), its text as printed).
// A counter line outside a block, or any other line, is counted with CountUnknownLine. Negative or
// past-int64 numbers are reported and the line skipped. An `HLO:` text that is not an instruction gives a
// kWarning and a block keyed by the text before ` = ` (or the whole text).
//
// Contract: the sink is not owned and must outlive the parser. Memory: the longest line plus the set of
// instruction names already emitted. Finish() fails (kDataLoss, plus a kError issue) when the input has
// non-empty lines but no `HLO:` block; an empty input is OK with a kWarning. Not thread-safe.
#ifndef XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_BUNDLE_PROFILE_PARSER_H_
#define XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_BUNDLE_PROFILE_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "ingest/text/line_parser.h"

namespace xladb::ingest {

// The ratio text libtpu prints for num/den: a C++ stream's default float format, i.e. printf("%g") (6
// significant digits) of the double quotient. Returns "0" when den is 0. Shared with the per-bundle report
// parser, which synthesises ratios in the same form.
std::string FormatUtilizationRatio(int64_t numerator, int64_t denominator);
// The same quotient as a double: 0 when den is 0.
double UtilizationRatio(int64_t numerator, int64_t denominator);

class TpuBundleProfileParser : public LineParser {
 public:
  explicit TpuBundleProfileParser(RecordSink* sink) : LineParser(sink) {}

  void ParseLine(std::string_view line, int64_t line_no) override;
  Status Finish() override;

 private:
  void ParseHeader(std::string_view text, int64_t line_no);
  // False if the line does not have the counter shape.
  bool ParseCounter(std::string_view line, int64_t line_no);

  bool in_block_ = false;
  int64_t block_count_ = 0;
  bool saw_text_ = false;  // any non-empty line
  std::string kernel_;
  std::unordered_set<std::string> emitted_instructions_;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_FORMATS_TPU_UTILIZATION_TPU_BUNDLE_PROFILE_PARSER_H_
