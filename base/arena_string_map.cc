#include "base/arena_string_map.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

namespace xladb {
namespace {

size_t VarintSize(uint64_t n) {
  size_t size = 1;
  while (n >= 0x80) {
    n >>= 7;
    ++size;
  }
  return size;
}

char* PutVarint(char* out, uint64_t n) {
  while (n >= 0x80) {
    *out++ = static_cast<char>(n | 0x80);
    n >>= 7;
  }
  *out++ = static_cast<char>(n);
  return out;
}

uint64_t GetVarint(const char** in) {
  uint64_t n = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(*(*in)++);
    n |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return n;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// ByteArena

const char* ByteArena::Append(std::initializer_list<uint64_t> numbers, std::string_view bytes) {
  size_t size = VarintSize(bytes.size()) + bytes.size();
  for (uint64_t n : numbers) size += VarintSize(n);
  char* const record = Allocate(size);
  char* out = record;
  for (uint64_t n : numbers) out = PutVarint(out, n);
  out = PutVarint(out, bytes.size());
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return record;
}

std::string_view ByteArena::Read(const char* record, std::span<uint64_t> numbers) {
  for (uint64_t& n : numbers) n = GetVarint(&record);
  const uint64_t size = GetVarint(&record);
  return {record, static_cast<size_t>(size)};
}

char* ByteArena::Allocate(size_t size) {
  if (blocks_.empty() || blocks_.back().size - blocks_.back().used < size) {
    Block block;
    block.size = std::max(next_block_bytes_, size);
    block.data = std::make_unique_for_overwrite<char[]>(block.size);
    allocated_bytes_ += block.size;
    next_block_bytes_ = std::min(next_block_bytes_ * 2, kMaxBlockBytes);
    blocks_.push_back(std::move(block));
  }
  Block& last = blocks_.back();
  char* at = last.data.get() + last.used;
  last.used += size;
  return at;
}

void ByteArena::Clear() {
  blocks_ = std::vector<Block>();
  next_block_bytes_ = kFirstBlockBytes;
  allocated_bytes_ = 0;
}

// ---------------------------------------------------------------------------------------------------
// ArenaStringMap

uint64_t ArenaStringMap::XxHash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

uint64_t* ArenaStringMap::Find(std::string_view key) {
  if (size_ == 0) return nullptr;
  Slot& slot = FindSlot(key, HashBits(key));
  return slot.entry == 0 ? nullptr : &EntryAt(slot.entry).value;
}

std::pair<uint64_t*, bool> ArenaStringMap::Insert(std::string_view key, uint64_t value) {
  const uint32_t hash_bits = HashBits(key);
  Slot* slot = nullptr;
  if (capacity_ != 0) {
    slot = &FindSlot(key, hash_bits);
    if (slot->entry != 0) return {&EntryAt(slot->entry).value, false};
  }
  if ((size_ + 1) * 4 > capacity_ * 3) {
    Grow();
    slot = &FindSlot(key, hash_bits);
  }
  if (size_ % kEntriesPerChunk == 0) {
    entry_chunks_.push_back(std::make_unique<Entry[]>(kEntriesPerChunk));
  }
  ++size_;  // at most 3/4 of 2^32 slots, so the entry number fits in 32 bits
  Entry& entry = EntryAt(static_cast<uint32_t>(size_));
  entry.key = keys_.Append({}, key);
  entry.value = value;
  slot->hash_bits = hash_bits;
  slot->entry = static_cast<uint32_t>(size_);
  return {&entry.value, true};
}

ArenaStringMap::Slot& ArenaStringMap::FindSlot(std::string_view key, uint32_t hash_bits) {
  const size_t mask = capacity_ - 1;
  for (size_t i = hash_bits >> shift_;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == 0) return slot;
    if (slot.hash_bits == hash_bits && ByteArena::Read(EntryAt(slot.entry).key, {}) == key) return slot;
  }
}

void ArenaStringMap::Grow() {
  constexpr size_t kMinCapacity = 16;
  constexpr size_t kMaxCapacity = size_t{1} << 32;  // slots are found from 32 hash bits
  if (capacity_ == kMaxCapacity) throw std::length_error("ArenaStringMap: more than 3 * 2^30 keys");
  const size_t capacity = capacity_ == 0 ? kMinCapacity : capacity_ * 2;
  auto slots = std::make_unique<Slot[]>(capacity);
  const int shift = 32 - std::countr_zero(capacity);
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < capacity_; ++i) {
    const Slot& old = slots_[i];
    if (old.entry == 0) continue;
    size_t at = old.hash_bits >> shift;
    while (slots[at].entry != 0) at = (at + 1) & mask;
    slots[at] = old;
  }
  slots_ = std::move(slots);
  capacity_ = capacity;
  shift_ = shift;
}

size_t ArenaStringMap::allocated_bytes() const {
  return capacity_ * sizeof(Slot) + entry_chunks_.size() * kEntriesPerChunk * sizeof(Entry) +
         keys_.allocated_bytes();
}

void ArenaStringMap::Clear() {
  slots_.reset();
  capacity_ = 0;
  shift_ = 0;
  size_ = 0;
  entry_chunks_ = std::vector<std::unique_ptr<Entry[]>>();
  keys_.Clear();
}

}  // namespace xladb
