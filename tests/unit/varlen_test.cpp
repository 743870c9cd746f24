// Packed varlen batches: the upstream encodings of hand-worked rows, checked against vLLM's own
// construction worked by hand, and the rejection of rows that are not packed.
#include <gtest/gtest.h>

#include "ssd/reference/errors.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/varlen.h"

namespace ssd_test {
namespace {

using V = std::vector<std::int64_t>;

// Three sequences of 3, 5 and 2 tokens, Q = 4: chunks [0,4) [4,8) [8,10).
ssd::PackedSequences three_sequences() { return ssd::sequences_from_ids({0, 0, 0, 1, 1, 1, 1, 1, 2, 2}); }

TEST(Varlen, SequencesOfARow) {
  const ssd::PackedSequences s = three_sequences();
  EXPECT_EQ(s.start, (V{0, 3, 8}));
  EXPECT_EQ(s.length, (V{3, 5, 2}));
  EXPECT_EQ(s.padding(), 0);
  EXPECT_EQ(ssd::cu_seqlens(s), (V{0, 3, 8, 10}));
}

TEST(Varlen, PseudoChunksFollowVllmsConstruction) {
  // vLLM's _query_start_loc_to_chunk_indices_offsets on ends (3, 8, 10), chunk 4, 10 tokens:
  // N = ceil(10/4) + [3 % 4 > 0] + [8 % 4 > 0] = 3 + 1 + 0 = 4 logical chunks, indices start as
  // 0,1,2,3. Sequence (3,8): p = 1, indices[3/4+1 : 8/4+1+0] = [1:3] -= 1 -> 0,0,1,3, offsets[1]
  // = 3. Sequence (8,10): p stays 1, indices[8/4+1 : 10/4+1+1] = [3:4] -= 1 -> 0,0,1,2.
  const ssd::PseudoChunks c = ssd::pseudo_chunks(three_sequences(), 4);
  EXPECT_EQ(c.chunk_indices, (V{0, 0, 1, 2}));
  EXPECT_EQ(c.chunk_offsets, (V{0, 3, 0, 0}));
}

TEST(Varlen, AlignedChunksNeverSpanTwoSequences) {
  // [0,3) | [3,7) [7,8) | [8,10): the middle sequence of 5 tokens takes one full chunk and one of 1.
  const ssd::AlignedChunks c = ssd::aligned_chunks(three_sequences(), 4);
  EXPECT_EQ(c.cu_chunk_seqlens, (V{0, 3, 7, 8, 10}));
  EXPECT_EQ(c.chunk_seq_idx, (V{0, 1, 1, 2}));
  EXPECT_EQ(c.last_chunk_indices, (V{0, 2, 3}));
}

TEST(Varlen, PaddingIsInNoEncoding) {
  const ssd::Problem p = ssd::parse_problem("mamba2:f32 b1 s10 h1 p1 g1 n1 q4 +varlen seq=0:3,5,-2 seed=1");
  const ssd::PackedSequences s = ssd::packed_sequences(p);
  EXPECT_EQ(s.padding(), 2);
  EXPECT_EQ(ssd::varlen_encoding(p, "cu_seqlens"), (V{0, 3, 8}));
  EXPECT_EQ(ssd::varlen_encoding(p, "cu_chunk_seqlens"), (V{0, 3, 7, 8}));
  EXPECT_EQ(ssd::varlen_encoding(p, "chunk_indices"), (V{0, 0, 1, 2}));
  const V ids{0, 0, 0, 1, 1, 1, 1, 1, -1, -1};
  EXPECT_EQ(ssd::ids_from_cu_seqlens(ssd::cu_seqlens(s), 10), ids);
  EXPECT_EQ(ssd::ids_from_pseudo_chunks(ssd::pseudo_chunks(s, 4), ssd::cu_seqlens(s), 4, 10), ids);
  EXPECT_EQ(ssd::ids_from_aligned_chunks(ssd::aligned_chunks(s, 4), 10), ids);
}

TEST(Varlen, RowsThatAreNotPackedAreRefused) {
  EXPECT_THROW(ssd::sequences_from_ids({1, 1, 2}), ssd::ArgumentError);      // does not start at 0
  EXPECT_THROW(ssd::sequences_from_ids({0, 0, 2}), ssd::ArgumentError);      // skips sequence 1
  EXPECT_THROW(ssd::sequences_from_ids({0, -1, 1}), ssd::ArgumentError);     // a sequence after padding
  EXPECT_EQ(ssd::sequences_from_ids({0, 1, -1, -2}).count(), 2);
}

TEST(Varlen, ProblemRules) {
  auto reason = [](const char* text) { return ssd::invalid_reason(ssd::parse_problem(text)).value_or(""); };
  EXPECT_NE(reason("mamba2:f32 b2 s8 h1 p1 g1 n1 q4 +varlen seq=rand seed=1").find("b must be 1"), std::string::npos);
  EXPECT_NE(reason("mamba2:f32 b1 s8 h1 p1 g1 n1 q4 +varlen seed=1").find("needs seq="), std::string::npos);
  EXPECT_NE(reason("mamba2:f32 b1 s8 h1 p1 g1 n1 q4 +varlen seq=1:8 seed=1").find("start with id 0"), std::string::npos);
  EXPECT_EQ(reason("mamba2:f32 b1 s8 h1 p1 g1 n1 q4 +init +varlen seq=0:3,5 state=bf16 seed=1"), "");
  // state= round-trips and is refused where the op has no state dtype.
  const char* text = "mamba2:f16 b1 s8 h1 p1 g1 n1 q4 +init +varlen seq=0:3,5 state=f16 seed=1";
  EXPECT_EQ(ssd::to_string(ssd::parse_problem(text)), text);
  EXPECT_THROW(ssd::parse_problem("chunk_cumsum:f32 b1 s8 h1 q4 state=bf16 seed=1"), ssd::ArgumentError);
}

}  // namespace
}  // namespace ssd_test
