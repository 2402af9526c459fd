#include "store/write/rows/pending_values.h"

#include <climits>
#include <span>

namespace xladb::store {

bool PendingValues::Fits(int64_t allocation_index, int64_t shape_id, int32_t color) {
  return allocation_index >= 0 && allocation_index <= INT32_MAX && shape_id >= 0 && shape_id <= INT32_MAX &&
         color >= -1 && color <= INT8_MAX;
}

PendingValues::Slot* PendingValues::Get(int64_t id, bool create) {
  if (id < 0 || id > 4 * count_ + (int64_t{1} << 20)) return nullptr;
  const auto chunk = static_cast<size_t>(id) >> kChunkBits;
  if (chunk >= chunks_.size()) {
    if (!create) return nullptr;
    chunks_.resize(chunk + 1);
    chunk_waiting_.resize(chunk + 1, 0);
  }
  if (!chunks_[chunk]) {
    if (!create) return nullptr;
    chunks_[chunk] = std::make_unique<Slot[]>(size_t{1} << kChunkBits);
  }
  return &chunks_[chunk][static_cast<size_t>(id) & ((size_t{1} << kChunkBits) - 1)];
}

void PendingValues::Fill(int64_t id, Slot* slot, const ingest::ValueRef& v) {
  slot->present = true;
  ++count_;
  ++waiting_;
  ++chunk_waiting_[static_cast<size_t>(id) >> kChunkBits];
  std::string& joined = scratch_;
  joined.assign(v.instruction).append(v.shape_index);
  slot->name = names_.Append({v.instruction.size()}, joined);
}

std::pair<std::string_view, std::string_view> PendingValues::Name(const Slot& slot) const {
  uint64_t instruction_size = 0;
  std::string_view joined = ByteArena::Read(slot.name, std::span<uint64_t>(&instruction_size, 1));
  return {joined.substr(0, instruction_size), joined.substr(instruction_size)};
}

void PendingValues::Take(int64_t id, Slot* slot) {
  slot->present = false;
  const auto chunk = static_cast<size_t>(id) >> kChunkBits;
  if (--chunk_waiting_[chunk] == 0) chunks_[chunk].reset();
  if (--waiting_ == 0) Clear();
}

void PendingValues::Clear() {
  std::vector<std::unique_ptr<Slot[]>>().swap(chunks_);
  std::vector<uint32_t>().swap(chunk_waiting_);
  names_.Clear();
  waiting_ = 0;
}

void PendingValues::Reset() {
  Clear();
  count_ = 0;
}

}  // namespace xladb::store
