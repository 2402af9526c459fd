#include "ingest/entry_sharding.h"

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
  const int64_t count = parameters_.empty() ? 0 : parameters_.rbegin()->first + 1;
  for (int64_t n = 0; n < count; ++n) {
    if (n > 0) text += ", ";
    auto it = parameters_.find(n);
    text += it == parameters_.end() ? std::string("none") : spelled(it->second);
  }
  return text + ") -> " + spelled(root_.value_or(""));
}

}  // namespace xladb::ingest
