// The counter-seeded random streams behind every input fill (internal to ssd_reference): a value
// is a pure function of (case seed, stream name, block), whatever the thread count or machine.
#pragma once
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>

namespace ssd {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001B3ull;
  return h;
}

// xoshiro256** seeded from (seed, stream name, block).
class Stream {
 public:
  Stream(std::uint64_t seed, std::string_view name, std::uint64_t block) {
    std::uint64_t s = seed ^ (fnv1a(name) * 0x9E3779B97F4A7C15ull) ^ (block * 0xD1B54A32D192ED03ull);
    for (auto& w : state_) w = splitmix64(s);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(uniform() * static_cast<double>(n)); }
  double normal() {  // Box-Muller; 1 - u keeps the log argument in (0, 1]
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace ssd
