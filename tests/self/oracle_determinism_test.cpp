// The chunked oracle gives the same bits for any OpenMP thread count: work is split only over
// independent (batch, chunk, head) items, each computed serially.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>

#include "ssd/reference/op_spec.h"

namespace {

ssd::Outputs run_with_threads(const ssd::Problem& p, const ssd::InputSet& in, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  ssd::Outputs out = ssd::op_spec(p.op).chunked(p, in);
  omp_set_num_threads(saved);
  return out;
}

TEST(OracleDeterminism, SameBitsForAnyThreadCount) {
  // Mid-size cases: big enough that every parallel region of the op actually runs in parallel.
  const char* lines[] = {
      "mamba2:bf16 b2 s700 h8 p16 g2 n16 q64 +dt_bias +softplus +D +z +init seq=rand seed=1",
      "chunk_cumsum:f16 b4 s2000 h16 q128 +dt_bias +softplus seed=2",
      "chunk_coupling:bf16 b2 s1000 g2 n32 q64 seq=rand seed=3",
      "chunk_state:f16 b2 s1000 h8 p16 g2 n32 q64 seq=rand seed=4",
      "state_passing:bf16 b2 s4000 q64 h8 d256 +init seq=rand seed=5",
      "chunk_scan:f16 b2 s1000 h8 p16 g2 n32 q64 +Dhp +z seq=rand seed=6",
      "recurrent:bf16 b8 h16 p32 g2 n64 +dt_bias +softplus +Dhp +z +sbi slots=12 seed=7",
      "discretize_segsum:bf16 b2 s256 q64 h8 p4 g2 n32 seed=8",
  };
  for (const char* line : lines) {
    const ssd::Problem p = ssd::parse_problem(line);
    const ssd::InputSet in = ssd::make_inputs(p);
    const ssd::Outputs one = run_with_threads(p, in, 1), three = run_with_threads(p, in, 3);
    for (const ssd::Output& o : one.all()) {
      const ssd::Tensor& u = three.get(o.name).value;
      ASSERT_EQ(o.value.numel(), u.numel()) << line;
      EXPECT_EQ(std::memcmp(o.value.data(), u.data(), sizeof(double) * static_cast<std::size_t>(u.numel())), 0)
          << line << " output " << o.name;
    }
  }
}

}  // namespace
