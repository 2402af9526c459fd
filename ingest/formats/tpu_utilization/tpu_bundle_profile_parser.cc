#include "ingest/formats/tpu_utilization/tpu_bundle_profile_parser.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "ingest/text/hlo_instruction_text.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

using Severity = IssueRecord::Severity;

constexpr std::string_view kHeader = "HLO: ";
constexpr std::string_view kNoInstruction = "<no-hlo-instruction>";
constexpr std::string_view kCounterPrefix = " - ";
constexpr std::string_view kRatioSeparator = ") - ";
constexpr std::string_view kFractionOpen = ": (";

}  // namespace

double UtilizationRatio(int64_t numerator, int64_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

std::string FormatUtilizationRatio(int64_t numerator, int64_t denominator) {
  if (denominator == 0) return "0";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", UtilizationRatio(numerator, denominator));
  return buffer;
}

void TpuBundleProfileParser::ParseLine(std::string_view line, int64_t line_no) {
  if (line.empty()) {
    in_block_ = false;
    return;
  }
  saw_text_ = true;
  if (line.starts_with(kHeader)) {
    ParseHeader(line.substr(kHeader.size()), line_no);
    return;
  }
  if (line.starts_with(kCounterPrefix)) {
    if (!in_block_) {
      CountUnknownLine(line, line_no, "bundle profile (counter outside an `HLO:` block)");
      return;
    }
    if (ParseCounter(line, line_no)) return;
  }
  CountUnknownLine(line, line_no, "bundle profile");
}

void TpuBundleProfileParser::ParseHeader(std::string_view text, int64_t line_no) {
  UtilizationBlockRecord block;
  block.ordinal = block_count_++;
  if (text == kNoInstruction) {
    kernel_ = std::string(kNoInstruction);
  } else if (std::optional<InstructionRecord> instruction = ParseHloInstructionText(text)) {
    kernel_ = instruction->name;
    if (emitted_instructions_.insert(kernel_).second) sink()->OnInstruction(std::move(*instruction));
  } else {
    const size_t assign = text.find(" = ");
    std::string_view key = assign == std::string_view::npos ? text : text.substr(0, assign);
    if (key.starts_with('%')) key.remove_prefix(1);
    kernel_ = std::string(key);
    Report(Severity::kWarning, line_no,
           "`HLO:` block " + std::to_string(block.ordinal) + " does not hold an instruction; keyed by '" +
               std::string(key.substr(0, 200)) + "'");
  }
  block.kernel = kernel_;
  in_block_ = true;
  sink()->OnUtilizationBlock(std::move(block));
}

bool TpuBundleProfileParser::ParseCounter(std::string_view line, int64_t line_no) {
  std::string_view rest = line.substr(kCounterPrefix.size());
  const size_t ratio_at = rest.rfind(kRatioSeparator);
  if (ratio_at == std::string_view::npos) return false;
  const std::string_view ratio_text = rest.substr(ratio_at + kRatioSeparator.size());
  rest = rest.substr(0, ratio_at);  // `<COUNTER>: (<num>/<den>`
  const size_t open = rest.rfind(kFractionOpen);
  if (open == std::string_view::npos || open == 0) return false;
  const std::string_view counter = rest.substr(0, open);
  const std::string_view fraction = rest.substr(open + kFractionOpen.size());
  const size_t slash = fraction.find('/');
  if (slash == std::string_view::npos || ratio_text.empty()) return false;
  const std::string_view num_text = fraction.substr(0, slash);
  const std::string_view den_text = fraction.substr(slash + 1);

  std::optional<int64_t> numerator = ParseInt64(num_text);
  std::optional<int64_t> denominator = ParseInt64(den_text);
  std::optional<double> ratio = ParseDouble(ratio_text);
  if (!numerator || *numerator < 0 || !denominator || *denominator < 0 || !ratio) {
    Report(Severity::kInvariant, line_no,
           "counter '" + std::string(counter) + "' in block " + std::to_string(block_count_ - 1) +
               " has an unreadable or negative value: (" + std::string(num_text) + "/" + std::string(den_text) +
               ") - " + std::string(ratio_text));
    return true;
  }

  const std::string where =
      "counter '" + std::string(counter) + "' in block " + std::to_string(block_count_ - 1) + " (" + kernel_ + ")";
  if (*numerator > *denominator) {
    Report(Severity::kInvariant, line_no,
           where + ": achieved " + std::to_string(*numerator) + " exceeds peak " + std::to_string(*denominator));
  }
  if (!std::isfinite(*ratio)) {
    // Stored as the quotient (a store keeps no NaN alike everywhere: SQLite's REAL takes it as NULL).
    ratio = UtilizationRatio(*numerator, *denominator);
    Report(Severity::kInvariant, line_no,
           where + ": ratio " + std::string(ratio_text) + " is not a finite number; stored as " +
               std::to_string(*numerator) + "/" + std::to_string(*denominator) + " = " +
               FormatUtilizationRatio(*numerator, *denominator));
  } else if (*denominator != 0) {
    const std::string expected = FormatUtilizationRatio(*numerator, *denominator);
    if (ratio_text != expected) {
      Report(Severity::kInvariant, line_no,
             where + ": ratio " + std::string(ratio_text) + " is not " + std::to_string(*numerator) + "/" +
                 std::to_string(*denominator) + " = " + expected);
    }
  }

  UtilizationCounterRecord record;
  record.block_ordinal = block_count_ - 1;
  record.kernel = kernel_;
  record.counter = std::string(counter);
  record.numerator = *numerator;
  record.denominator = *denominator;
  record.ratio_text = std::string(ratio_text);
  record.ratio = *ratio;
  sink()->OnUtilizationCounter(std::move(record));
  return true;
}

Status TpuBundleProfileParser::Finish() {
  if (block_count_ > 0) return Status::Ok();
  if (!saw_text_) {
    Report(Severity::kWarning, 0, "empty bundle profile");
    return Status::Ok();
  }
  Report(Severity::kError, 0, "not a TPU bundle profile: no `HLO:` block");
  return Status::DataLoss("not a TPU bundle profile: no `HLO: ` block header in the file");
}

}  // namespace xladb::ingest
