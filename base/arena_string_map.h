// ByteArena and ArenaStringMap: compact storage for what a parser must remember across a whole file (the
// instructions a buffer assignment already emitted, the BufferLiveRange entries of a live range), so that a
// 1 GiB dump with a million names costs tens of MB instead of hundreds.
//
// ByteArena: an append-only log of small records. A record is a few unsigned numbers and one byte string,
// stored as LEB128 varints (the numbers, then the string's length) followed by the bytes, so a 13-byte name
// costs 14 bytes. Records lie back to back in blocks that start at 4 KiB and double up to 1 MiB (a record
// larger than that gets a block of its own): growing never copies, and a record never moves.
//
// ArenaStringMap: a map from byte strings to uint64_t values, without removal of single keys. Each key is
// copied once into a ByteArena; a 16-byte entry (where the key is, the value) per key lives in 4 KiB chunks;
// an open-addressing table (linear probing, at most 3/4 full, 8 bytes a slot) holds 32 bits of each key's
// 64-bit hash (XXH3 unless a test passes another) and the number of its entry. Whenever those hash bits
// match, the stored key bytes are compared, so keys whose hashes collide stay distinct keys: a collision
// costs time, never a wrong answer. The table doubles when 3/4 full and re-places its slots from the stored
// hash bits, without rehashing or touching the keys. About 44 bytes per key of 15 bytes: the 709,284
// instruction names of a 1 GiB generated buffer assignment take 31 MB (a std::unordered_map<std::string,
// size_t> took 56 MB).
//
// Contract: pointers and views handed out stay valid until Clear() or destruction (an Insert never moves
// earlier keys, values or records). Allocation failure throws std::bad_alloc, as the standard containers do;
// ArenaStringMap throws std::length_error past 3 * 2^30 keys (more than 100 GiB of memory). Nothing else
// throws. Not thread-safe: one owner, one thread.
#ifndef XLADB_BASE_ARENA_STRING_MAP_H_
#define XLADB_BASE_ARENA_STRING_MAP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace xladb {

class ByteArena {
 public:
  static constexpr size_t kFirstBlockBytes = size_t{4} << 10;
  static constexpr size_t kMaxBlockBytes = size_t{1} << 20;

  ByteArena() = default;
  ByteArena(const ByteArena&) = delete;
  ByteArena& operator=(const ByteArena&) = delete;

  // Appends the record (`numbers`, `bytes`) and returns where it starts.
  const char* Append(std::initializer_list<uint64_t> numbers, std::string_view bytes);

  // Reads the record that starts at `record` and was appended with numbers.size() numbers: fills `numbers`
  // and returns its bytes (a view into the arena).
  static std::string_view Read(const char* record, std::span<uint64_t> numbers);

  // Calls visit(const std::array<uint64_t, N>& numbers, std::string_view bytes) for every record in the order
  // they were appended. Every record must have been appended with N numbers.
  template <size_t N, typename Visit>
  void ForEach(Visit&& visit) const;

  size_t block_count() const { return blocks_.size(); }
  size_t allocated_bytes() const { return allocated_bytes_; }

  // Forgets every record and frees every block.
  void Clear();

 private:
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size = 0;
    size_t used = 0;
  };

  // `size` contiguous bytes at the end of the last block, or of a new one.
  char* Allocate(size_t size);

  std::vector<Block> blocks_;
  size_t next_block_bytes_ = kFirstBlockBytes;
  size_t allocated_bytes_ = 0;
};

class ArenaStringMap {
 public:
  using HashFunction = uint64_t (*)(std::string_view key);

  // XXH3-64 of the key: the hash of every map but those of tests that force collisions.
  static uint64_t XxHash(std::string_view key);

  explicit ArenaStringMap(HashFunction hash = &XxHash) : hash_(hash) {}
  ArenaStringMap(const ArenaStringMap&) = delete;
  ArenaStringMap& operator=(const ArenaStringMap&) = delete;

  // The value of `key`, or null when the key is not in the map.
  uint64_t* Find(std::string_view key);

  // Adds `key` with `value` unless the key is already there. Returns the key's value (the existing one, or
  // `value`) and whether the key was added.
  std::pair<uint64_t*, bool> Insert(std::string_view key, uint64_t value);

  size_t size() const { return size_; }

  // Bytes of the table, the entry chunks and the key arena: what Clear() gives back.
  size_t allocated_bytes() const;

  // Forgets every key and frees all memory; the map can be filled again.
  void Clear();

 private:
  struct Slot {
    uint32_t hash_bits = 0;  // the top 32 bits of the key's hash
    uint32_t entry = 0;      // 1 + the entry's number; 0 for an empty slot
  };
  struct Entry {
    const char* key = nullptr;  // the key's record in keys_ (no numbers)
    uint64_t value = 0;
  };
  static constexpr size_t kEntriesPerChunk = 256;  // 4 KiB

  uint32_t HashBits(std::string_view key) const { return static_cast<uint32_t>(hash_(key) >> 32); }
  // The entry that a slot's `entry` (1-based, not 0) names.
  Entry& EntryAt(uint32_t slot_entry) {
    return entry_chunks_[(slot_entry - 1) / kEntriesPerChunk][(slot_entry - 1) % kEntriesPerChunk];
  }
  // The slot that holds `key`, or the empty slot where it would go. The table must not be empty.
  Slot& FindSlot(std::string_view key, uint32_t hash_bits);
  // Doubles the table (from 16 slots) and re-places the slots by their hash bits.
  void Grow();

  HashFunction hash_;
  std::unique_ptr<Slot[]> slots_;
  size_t capacity_ = 0;  // slots: 0, or a power of two from 16 to 2^32
  int shift_ = 0;        // a key's first slot is hash_bits >> shift_
  size_t size_ = 0;
  std::vector<std::unique_ptr<Entry[]>> entry_chunks_;
  ByteArena keys_;
};

template <size_t N, typename Visit>
void ByteArena::ForEach(Visit&& visit) const {
  std::array<uint64_t, N> numbers{};
  for (const Block& block : blocks_) {
    const char* at = block.data.get();
    const char* end = at + block.used;
    while (at < end) {
      std::string_view bytes = Read(at, numbers);
      visit(std::as_const(numbers), bytes);
      at = bytes.data() + bytes.size();
    }
  }
}

}  // namespace xladb

#endif  // XLADB_BASE_ARENA_STRING_MAP_H_
