#include "ingest/text/entry_sharding.h"

#include <string_view>

namespace xladb::ingest {
namespace {

// The value of the instruction's top-level `sharding=` attribute, "" when it has none.
std::string_view ShardingOf(const HloInstructionPieces& instruction) {
  TopLevelItems attributes(instruction.attributes, ',');
  std::string_view attribute, key, value;
  while (attributes.Next(&attribute)) {
    if (SplitKeyValue(attribute, &key, &value) && key == "sharding") return value;
  }
  return {};
}

}  // namespace

void EntrySharding::Add(const HloInstructionPieces& instruction) {
  const std::optional<int64_t> number = ParameterNumber(instruction);
  if (!number && !instruction.is_root) return;
  const std::string_view sharding = ShardingOf(instruction);
  any_ |= !sharding.empty();
  if (number) parameters_[*number] = std::string(sharding);
  if (instruction.is_root) root_ = std::string(sharding);
}

std::string EntrySharding::Text() const {
  if (!any_) return {};
  auto spelled = [](const std::string& sharding) { return sharding.empty() ? std::string("none") : sharding; };
  std::string text = "(";
  // Numbers 0..N-1, as XLA prints them: by position. Otherwise (text that is not XLA's: a gap, or a number
  // like parameter(99999999999)) each fed parameter with its number, so the text stays as long as the input.
  const bool dense = parameters_.empty() || parameters_.rbegin()->first + 1 == static_cast<int64_t>(parameters_.size());
  for (const auto& [number, sharding] : parameters_) {
    if (text.size() > 1) text += ", ";
    if (!dense) text += std::to_string(number) + ": ";
    text += spelled(sharding);
  }
  return text + ") -> " + spelled(root_.value_or(""));
}

}  // namespace xladb::ingest
