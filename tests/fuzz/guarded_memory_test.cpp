// The pieces under the runner's memory checks: poison patterns that decode as NaN yet differ from
// any NaN a kernel computes, guard bands that notice one changed byte at either edge, guarded
// buffers that report which side was hit, and the caching allocator's reuse and its limit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ssd/harness/abi_buffer.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/harness/memory_pool.h"
#include "ssd/harness/poison.h"

namespace {

TEST(Poison, DecodesAsNanButIsNoComputedNan) {
  for (ssd::DType t : {ssd::DType::f32, ssd::DType::bf16, ssd::DType::f16}) {
    std::vector<std::uint8_t> bytes(4 * ssd::dtype_bytes(t));
    ssd::fill_poison(t, bytes);
    const ssd::Tensor decoded = ssd::decode(t, {4}, bytes.data());
    for (std::int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(decoded[i])) << ssd::dtype_name(t);
    EXPECT_TRUE(ssd::is_poison(t, bytes.data() + ssd::dtype_bytes(t)));
    // The NaN a kernel stores (the encoder's quiet NaN) is not poison.
    const std::vector<std::uint8_t> computed = ssd::encode(ssd::Tensor(t, {1}, {NAN}));
    EXPECT_FALSE(ssd::is_poison(t, computed.data())) << ssd::dtype_name(t);
  }
  std::vector<std::uint8_t> ints(8);
  ssd::fill_poison(ssd::DType::i32, ints);
  EXPECT_TRUE(ssd::is_poison(ssd::DType::i32, ints.data() + 4));
  const std::vector<std::uint8_t> zero = ssd::encode(ssd::Tensor(ssd::DType::i32, {1}));
  EXPECT_FALSE(ssd::is_poison(ssd::DType::i32, zero.data()));
}

TEST(GuardBand, NoticesOneChangedByteAtEitherEdge) {
  std::vector<std::uint8_t> band(5000);  // longer than the pattern's block: the seam is checked too
  ssd::fill_guard(band);
  EXPECT_TRUE(ssd::check_guard(band).intact());
  for (std::size_t at : {std::size_t{0}, std::size_t{4095}, std::size_t{4096}, band.size() - 1}) {
    std::vector<std::uint8_t> hit = band;
    hit[at] ^= 1;
    const ssd::GuardCheck c = ssd::check_guard(hit);
    EXPECT_EQ(c.changed, 1u) << at;
    EXPECT_EQ(c.first, static_cast<std::ptrdiff_t>(at));
    EXPECT_EQ(c.last, static_cast<std::ptrdiff_t>(at));
  }
}

TEST(GuardedBuffer, ReportsTheSideThatWasHitAndStartsPoisoned) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool(honest.table());
  ssd::AbiBuffer out(pool, ssd::DType::f32, {3, 5});
  const ssd_tensor view = out.view();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(view.data) % 256, 0u);
  std::vector<std::uint8_t> storage;
  {
    const auto image = out.snapshot(storage);
    for (int i = 0; i < 15; ++i) EXPECT_TRUE(ssd::is_poison(ssd::DType::f32, out.contents(image) + 4 * i));
    EXPECT_TRUE(out.guard_damage(image, "out").empty());
  }
  auto* data = static_cast<std::uint8_t*>(view.data);
  data[15 * 4] = 0;  // the first byte past the last element
  data[-1] = 0;      // the last byte before the first
  const std::vector<std::string> damage = out.guard_damage(out.snapshot(storage), "out");
  ASSERT_EQ(damage.size(), 2u);
  EXPECT_EQ(damage[0].rfind("wrote before the start of out (1 of 256 guard bytes changed, the nearest at byte -1)", 0), 0u)
      << damage[0];
  EXPECT_EQ(damage[1].rfind("wrote past the end of out (1 of ", 0), 0u) << damage[1];
  EXPECT_NE(damage[1].find("the first at byte +0 past the end"), std::string::npos) << damage[1];
}

TEST(MemoryPool, ReusesFreedBlocksWithinItsLimit) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool(honest.table(), 1 << 20);
  const ssd::MemoryPool::Block a = pool.acquire(10000);
  EXPECT_GE(a.capacity, 10000u);
  EXPECT_LE(a.capacity, 10000u + 10000u / 8 + 256);  // size classes waste at most an eighth
  pool.release(a);
  EXPECT_EQ(pool.cached_bytes(), a.capacity);
  const ssd::MemoryPool::Block b = pool.acquire(9990);  // same class: the same block comes back
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  pool.release(b);
  const ssd::MemoryPool::Block big = pool.acquire(2 << 20);  // over the limit: never cached
  pool.release(big);
  EXPECT_EQ(pool.cached_bytes(), b.capacity);
  ssd::MemoryPool uncached(honest.table(), 0);
  uncached.release(uncached.acquire(100));
  EXPECT_EQ(uncached.cached_bytes(), 0u);
}

}  // namespace
