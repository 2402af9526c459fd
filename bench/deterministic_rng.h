// DeterministicRng: splitmix64, the generator's only source of randomness. Unlike std:: distributions its
// output is fixed by the seed on every platform and standard library, so `xladb_gen --seed N` writes the same
// bytes everywhere. HashMix combines values into a seed (for per-module, per-run, per-kernel streams).
//
// Contract: header-only value types; not thread-safe per instance (copy one per thread).
#ifndef XLADB_BENCH_DETERMINISTIC_RNG_H_
#define XLADB_BENCH_DETERMINISTIC_RNG_H_

#include <cstdint>
#include <string_view>

namespace xladb::bench {

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t HashMix(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b + 0x632be59bd9b4e019ULL)); }

// FNV-1a of a string, mixed: a seed from a name.
constexpr uint64_t HashName(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return SplitMix64(h);
}

class DeterministicRng {
 public:
  explicit DeterministicRng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return SplitMix64(state_);
  }
  // Uniform in [0, n) (n > 0); the modulo bias is irrelevant at these sizes.
  int64_t Uniform(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) { return lo + Uniform(hi - lo + 1); }
  // True with probability `percent`/100.
  bool Percent(int percent) { return Uniform(100) < percent; }

 private:
  uint64_t state_;
};

}  // namespace xladb::bench

#endif  // XLADB_BENCH_DETERMINISTIC_RNG_H_
