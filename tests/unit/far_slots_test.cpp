// +farslots: the far ids, stretches and truncation landings of hand-worked slot tables, the
// problem-string token and its errors.
#include <gtest/gtest.h>

#include "ssd/reference/far_slots.h"
#include "ssd/reference/op_spec.h"

namespace {

using Ids = std::vector<std::int64_t>;
using Ranges = std::vector<ssd::ElementRange>;

ssd::Tensor table(ssd::Shape shape, std::vector<double> values) {
  ssd::Tensor t(ssd::DType::i32, std::move(shape));
  for (std::size_t i = 0; i < values.size(); ++i) t.set(static_cast<std::int64_t>(i), values[i]);
  return t;
}

std::string reason(const std::string& text) { return ssd::invalid_reason(ssd::parse_problem(text)).value_or(""); }

// h2 p2 n4: a slot is 16 elements, and 2^32 / 16 = 2^28 exactly, so F = 268435456 with no remainder.
// Reads [2, 0]: slot 2 is named first (rank 0: far, id F), slot 0 second (rank 1: low). One far
// slot (m = 1), so the low slots 0 and 1 go to ids 2m + 1 = 3 and 5. The state has F + 2 slots
// (a poisoned one after F). Low stretch: ids 0 .. 2*3 = 6, [0, 7*16 = 112); far stretch: ids F - 1
// .. F + 1. F*16 = 2^32 truncates to element 0, and F*16*4 bytes = 2^34 to byte 0: one landing [0, 16).
TEST(FarSlots, HandWorkedReadTable) {
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b2 h2 p2 g1 n4 +sbi +farslots slots=3 seed=1");
  const ssd::FarSlots f = ssd::far_slots(p, table({2}, {2, 0}), nullptr, 4);
  const std::int64_t F = 268435456;
  EXPECT_EQ(f.stride, 16);
  EXPECT_EQ(f.first_far, F);
  EXPECT_EQ(f.ids, (Ids{3, 5, F}));
  EXPECT_EQ(f.slots, F + 2);
  EXPECT_EQ(f.regions, (Ranges{{0, 112}, {(F - 1) * 16, (F + 2) * 16}}));
  EXPECT_EQ(f.landings, (Ranges{{0, 16}}));
  EXPECT_EQ(f.id(2), F);
  EXPECT_EQ(f.id(-3), -3);  // a padding entry stays
  EXPECT_GE(f.id(2) * f.stride, std::int64_t{1} << 32);
  EXPECT_LT(f.id(2), std::int64_t{1} << 31);
}

// h1 p3 n4: a slot is 12 elements; 2^32 / 12 = 357913941.33, so F = 357913942 and F*12 =
// 4294967304 = 2^32 + 8: the truncated element offset is 8. In bytes, f32: 4*(2^32 + 8) mod 2^32 =
// 32, element 8; bf16: 2*(2^32 + 8) mod 2^32 = 16, element 8 too. One landing [8, 20).
// Reads [0, 4], writes [1, 4] with pad=4: the entries 4 are padding. Named: 0 (far, rank 0),
// 1 (low, rank 1); m = 1, so the low slots 1, 2, 3, 4 (the padding slot) take ids 3, 5, 7, 9.
TEST(FarSlots, HandWorkedWriteTableAndPaddingSlot) {
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b2 h1 p3 g1 n4 +sbi +dst +farslots slots=5 pad=4 seed=1");
  ASSERT_EQ(reason(ssd::to_string(p)), "");
  const ssd::Tensor reads = table({2}, {0, 4}), writes = table({2}, {1, 4});
  const std::int64_t F = 357913942;
  for (std::size_t width : {4u, 2u}) {
    const ssd::FarSlots f = ssd::far_slots(p, reads, &writes, width);
    EXPECT_EQ(f.first_far, F);
    EXPECT_EQ(f.ids, (Ids{F, 3, 5, 7, 9}));
    EXPECT_EQ(f.slots, F + 2);
    EXPECT_EQ(f.regions, (Ranges{{0, 11 * 12}, {(F - 1) * 12, (F + 2) * 12}})) << width;
    EXPECT_EQ(f.landings, (Ranges{{8, 20}})) << width;
  }
}

// [Bt,T] tables, row-major: reads [[3, 1], [0, 2]] name 3, 1, 0, 2: far 3 (id F) and 0 (F + 2),
// low 1 and 2, then the unnamed slot 4, at ids 5, 7, 9. h1 p2 n2 (4 elements): F = 2^30, landings 0 and 8.
TEST(FarSlots, EveryOtherNamedSlotGoesFar) {
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b2 h1 p2 g1 n2 +sbi +spec +farslots slots=5 tokens=2 seed=1");
  ASSERT_EQ(reason(ssd::to_string(p)), "");
  const std::int64_t F = std::int64_t{1} << 30;
  const ssd::FarSlots f = ssd::far_slots(p, table({2, 2}, {3, 1, 0, 2}), nullptr, 4);
  EXPECT_EQ(f.ids, (Ids{F + 2, 5, 7, F, 9}));
  EXPECT_EQ(f.slots, F + 4);
  EXPECT_EQ(f.landings, (Ranges{{0, 4}, {8, 12}}));
}

TEST(FarSlots, TokenRoundTripsAndErrorsNameTheOption) {
  const std::string text = "recurrent:bf16 b2 h2 p2 g1 n4 +sbi +dst +farslots slots=5 pad=4 seed=3";
  EXPECT_EQ(ssd::to_string(ssd::parse_problem(text)), text);
  EXPECT_TRUE(ssd::parse_problem(text).farslots);
  EXPECT_NE(reason("recurrent:f32 b2 h2 p2 g1 n4 +farslots seed=1").find("+farslots needs +sbi"), std::string::npos);
  EXPECT_NE(reason("recurrent:f32 b1 h1 p1 g1 n2 +sbi +farslots slots=1 seed=1").find("+farslots needs h·p·n >= 4"),
            std::string::npos);
  // h8 p64 n128: 65536 elements a slot, so at most 2^30 / 65536 / 2 - 1 = 8191 slots.
  EXPECT_NE(reason("recurrent:f32 b1 h8 p64 g1 n128 +sbi +farslots slots=8192 seed=1").find("slots at most 8191"),
            std::string::npos);
  EXPECT_EQ(reason("recurrent:f32 b1 h8 p64 g1 n128 +sbi +farslots slots=8191 seed=1"), "");
  try {
    ssd::parse_problem("mamba2:f32 b1 s4 h1 p2 g1 n2 q2 +farslots seed=1");
    ADD_FAILURE() << "mamba2 took +farslots";
  } catch (const ssd::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not take this option"), std::string::npos) << e.what();
  }
}

}  // namespace
