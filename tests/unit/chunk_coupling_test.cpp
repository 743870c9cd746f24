// SSDChunkCouplingFwd: hand-worked CB = C.B^T per chunk (padding, groups, seq_idx, causal), both forms.
#include "test_support.h"

namespace ssd_test {
namespace {

using ssd::ChunkCouplingArgs;

class ChunkCouplingTest : public ::testing::TestWithParam<OracleForm<ChunkCouplingArgs>> {
 protected:
  Outputs run(const ChunkCouplingArgs& args) const { return GetParam().run(args); }
};
INSTANTIATE_TEST_SUITE_P(BothForms, ChunkCouplingTest, ::testing::ValuesIn(kChunkCouplingForms),
                         form_name<ChunkCouplingArgs>);

double cb(const Outputs& r, std::int64_t b, std::int64_t c, std::int64_t g, std::int64_t i, std::int64_t j) {
  return at(r, "CB", {b, c, g, i, j});
}

TEST_P(ChunkCouplingTest, RaggedChunksAreZeroPadded) {
  // S = 3, Q = 2, G = 1, N = 2. C rows: [1,2] [3,4] [5,6]; B rows: [1,0] [0,1] [1,1].
  const Tensor C = f32({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor B = f32({1, 3, 1, 2}, {1, 0, 0, 1, 1, 1});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 2});
  EXPECT_EQ(r.get("CB").value.shape(), (Shape{1, 2, 1, 2, 2}));
  for (std::int64_t flat = 0; flat < r.get("CB").value.numel(); ++flat)  // non-causal: all defined
    EXPECT_TRUE(r.get("CB").is_defined(flat)) << flat;
  // Chunk 0: CB[i,j] = C_i . B_j.
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 0), 1.0);  // [1,2].[1,0]
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 1), 2.0);  // [1,2].[0,1]  (non-causal: above the diagonal too)
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 0), 3.0);  // [3,4].[1,0]
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 1), 4.0);  // [3,4].[0,1]
  // Chunk 1 has one valid token (t2): CB[0,0] = [5,6].[1,1] = 11; the padded row/column are 0.
  EXPECT_EQ(cb(r, 0, 1, 0, 0, 0), 11.0);
  EXPECT_EQ(cb(r, 0, 1, 0, 0, 1), 0.0);
  EXPECT_EQ(cb(r, 0, 1, 0, 1, 0), 0.0);
  EXPECT_EQ(cb(r, 0, 1, 0, 1, 1), 0.0);
}

TEST_P(ChunkCouplingTest, SequenceShorterThanChunkAndSingleToken) {
  // S = 1 < Q = 3: only CB[0,0] = 2*3 + (-1)*4 = 2 is non-zero.
  const Tensor C = f32({1, 1, 1, 2}, {2, -1});
  const Tensor B = f32({1, 1, 1, 2}, {3, 4});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 3});
  EXPECT_EQ(r.get("CB").value.shape(), (Shape{1, 1, 1, 3, 3}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(cb(r, 0, 0, 0, i, j), (i == 0 && j == 0) ? 2.0 : 0.0);
}

TEST_P(ChunkCouplingTest, GroupsAndBatchesAreSeparate) {
  // Bt = 2, S = 2, G = 2, N = 1, Q = 2: CB[b,0,g,i,j] = C[b,i,g] * B[b,j,g].
  const Tensor C = f32({2, 2, 2, 1}, {1, 2,    // b0 t0: g0, g1
                                      3, 4,    // b0 t1
                                      5, 6,    // b1 t0
                                      7, 8});  // b1 t1
  const Tensor B = f32({2, 2, 2, 1}, {1, -1,
                                      2, -2,
                                      0.5, 3,
                                      1, -3});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 2});
  EXPECT_EQ(r.get("CB").value.shape(), (Shape{2, 1, 2, 2, 2}));
  // b0 g0: C = [1,3], B = [1,2]
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 0), 1.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 1), 2.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 0), 3.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 1), 6.0);
  // b0 g1: C = [2,4], B = [-1,-2]
  EXPECT_EQ(cb(r, 0, 0, 1, 0, 0), -2.0);
  EXPECT_EQ(cb(r, 0, 0, 1, 0, 1), -4.0);
  EXPECT_EQ(cb(r, 0, 0, 1, 1, 0), -4.0);
  EXPECT_EQ(cb(r, 0, 0, 1, 1, 1), -8.0);
  // b1 g0: C = [5,7], B = [0.5,1]
  EXPECT_EQ(cb(r, 1, 0, 0, 0, 0), 2.5);
  EXPECT_EQ(cb(r, 1, 0, 0, 0, 1), 5.0);
  EXPECT_EQ(cb(r, 1, 0, 0, 1, 0), 3.5);
  EXPECT_EQ(cb(r, 1, 0, 0, 1, 1), 7.0);
  // b1 g1: C = [6,8], B = [3,-3]
  EXPECT_EQ(cb(r, 1, 0, 1, 0, 0), 18.0);
  EXPECT_EQ(cb(r, 1, 0, 1, 0, 1), -18.0);
  EXPECT_EQ(cb(r, 1, 0, 1, 1, 0), 24.0);
  EXPECT_EQ(cb(r, 1, 0, 1, 1, 1), -24.0);
}

TEST_P(ChunkCouplingTest, SeqIdxMasksPairsFromDifferentSequences) {
  // S = 4, Q = 4, N = 1, all C = B = 1 (every product 1); ids [0,0,1,1]: CB = same-id indicator.
  const Tensor C = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor B = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor seq = i32({1, 4}, {0, 0, 1, 1});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 4, .seq_idx = &seq});
  const double expected[4][4] = {{1, 1, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 1}, {0, 0, 1, 1}};
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(cb(r, 0, 0, 0, i, j), expected[i][j]) << i << "," << j;
      EXPECT_TRUE(defined_at(r, "CB", {0, 0, 0, i, j})) << i << "," << j;
    }
}

TEST_P(ChunkCouplingTest, SeqIdxBoundaryAtChunkBoundaryMasksNothing) {
  // ids [0,0,1,1] with Q = 2: each chunk holds one sequence, so CB is the plain product.
  const Tensor C = f32({1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor B = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  const Tensor seq = i32({1, 4}, {0, 0, 1, 1});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 2, .seq_idx = &seq});
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 1), 1.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 0), 2.0);
  EXPECT_EQ(cb(r, 0, 1, 0, 0, 1), 3.0);
  EXPECT_EQ(cb(r, 0, 1, 0, 1, 0), 4.0);
}

TEST_P(ChunkCouplingTest, SeqIdxPaddingTokenDoesNotCoupleWithValidTokens) {
  // ids [0,0,-1], Q = 4: a valid token and a padding token have different ids -> 0; the padded
  // slot of the chunk (i = 3) is 0 as well.
  const Tensor C = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor B = f32({1, 3, 1, 1}, {1, 1, 1});
  const Tensor seq = i32({1, 3}, {0, 0, -1});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 4, .seq_idx = &seq});
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 0), 2.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 2), 0.0);
  EXPECT_EQ(cb(r, 0, 0, 0, 1, 2), 0.0);
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(cb(r, 0, 0, 0, 3, j), 0.0);
}

TEST_P(ChunkCouplingTest, CausalDefinesOnlyTheLowerTriangle) {
  // S = 3, Q = 3, N = 1: CB[i,j] = C_i * B_j, defined for i >= j only.
  const Tensor C = f32({1, 3, 1, 1}, {1, 2, 3});
  const Tensor B = f32({1, 3, 1, 1}, {4, 5, 6});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 3, .causal = true});
  const Tensor& v = r.get("CB").value;
  const std::vector<std::uint8_t>& mask = r.get("CB").defined;
  ASSERT_EQ(static_cast<std::int64_t>(mask.size()), v.numel());
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(defined_at(r, "CB", {0, 0, 0, i, j}), i >= j) << i << "," << j;
      if (i >= j) {
        EXPECT_EQ(cb(r, 0, 0, 0, i, j), C[i] * B[j]) << i << "," << j;  // 4, 8, 10, 12, 15, 18
      }
    }
  EXPECT_EQ(cb(r, 0, 0, 0, 2, 1), 15.0);
}

TEST_P(ChunkCouplingTest, NonCausalDefinesEverything) {
  const Tensor C = f32({1, 2, 1, 1}, {1, 2});
  const Tensor B = f32({1, 2, 1, 1}, {3, 4});
  const Outputs r = run({.C = &C, .B = &B, .chunk_size = 2});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 2; ++j) EXPECT_TRUE(defined_at(r, "CB", {0, 0, 0, i, j}));
  EXPECT_EQ(cb(r, 0, 0, 0, 0, 1), 4.0);  // above the diagonal: 1 * 4
}

}  // namespace
}  // namespace ssd_test
