// +farslots through the harness: the state buffer spans the far ids but only its two stretches are
// filled (host memory stays small), the honest emulation's outputs are bit for bit those of the
// compact problem, a store at a truncated offset or between slots is named, and the planted
// slot_offset_uint32 (vLLM #35275) FAILS where it passes the compact problem.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>

#include "ssd/harness/kernel_library.h"
#include "ssd/harness/poison.h"
#include "ssd/harness/runner.h"
#include "ssd/harness/slot_buffer.h"
#include "ssd/reference/abi_views.h"

namespace {

bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "; ";
  return s;
}

ssd::Problem compact(ssd::Problem p) {
  p.farslots = false;
  return p;
}

std::int64_t peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // KiB on Linux
}

// One-token tables, write slots with a padding slot, speculative tables with accepted tokens, a
// bf16 state, varlen rows, and a layout: every decode form with far slots.
const char* kCases[] = {
    "recurrent:f32 b2 h2 p2 g1 n4 +softplus +sbi +farslots slots=3 seed=1",
    "recurrent:f32 b3 h2 p2 g1 n4 +dt_bias +softplus +sbi +dst +farslots slots=7 tokens=2 pad=6 seed=2",
    "recurrent:bf16 b2 h2 p4 g1 n4 +softplus +sbi +spec +accepted +inter +farslots slots=5 tokens=2 state=bf16 seed=3",
    "recurrent:f32 b3 h1 p3 g1 n4 +softplus +z +sbi +varlen +farslots slots=4 tokens=3 seed=4",
    "recurrent:f32 b2 h2 p2 g1 n4 +softplus +tie +sbi +farslots slots=2 layout=zxbcdt seed=5",
    "recurrent:f16 b8 h2 p4 g1 n4 +softplus +sbi +farslots slots=8 seed=6",
};

// b1 slots=1 seed=35: the one row is padding (entry -1..-3), so no slot is named and none goes
// far; the state still spans 2^32 elements. Nothing is stored, and the emulation still runs.
TEST(FarSlotsRun, ACallOfPaddingRowsOnly) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b1 h1 p1 g1 n4 +sbi +farslots slots=1 seed=35");
  ASSERT_LT(ssd::make_inputs(p).at("state_batch_indices")[0], 0);
  const ssd::CaseJudgement j = ssd::check_case(honest, p);
  EXPECT_EQ(j.verdict, ssd::Verdict::passed) << ssd::describe(j);
  // The same with a bf16 state, whose poison a round trip through doubles would not keep.
  const ssd::Problem bf16 = ssd::parse_problem("recurrent:f16 b1 h4 p1 g1 n1 +sbi +farslots slots=1 state=bf16 seed=591");
  ASSERT_LT(ssd::make_inputs(bf16).at("state_batch_indices")[0], 0);
  const ssd::CaseJudgement k = ssd::check_case(honest, bf16);
  EXPECT_EQ(k.verdict, ssd::Verdict::passed) << ssd::describe(k);
}

TEST(FarSlotsRun, HonestEmulationIsBitIdenticalToTheCompactProblem) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  for (const char* text : kCases) {
    const ssd::Problem p = ssd::parse_problem(text);
    ASSERT_FALSE(ssd::invalid_reason(p)) << text << ": " << *ssd::invalid_reason(p);
    const ssd::InputSet inputs = ssd::make_inputs(p);
    const ssd::CallRecord far = ssd::record_call(honest, p, inputs), near = ssd::record_call(honest, compact(p), inputs);
    ASSERT_EQ(far.status, ssd::CallStatus::ok) << text << ": " << far.message;
    EXPECT_TRUE(far.damage.empty()) << text << ": " << joined(far.damage);
    ASSERT_EQ(far.outputs.size(), near.outputs.size());
    for (std::size_t i = 0; i < far.outputs.size(); ++i)
      EXPECT_TRUE(far.outputs[i].bytes == near.outputs[i].bytes) << text << ": " << far.outputs[i].name;
    const ssd::CaseJudgement j = ssd::check_case(honest, p);
    EXPECT_EQ(j.verdict, ssd::Verdict::passed) << text << ": " << ssd::describe(j);
  }
  // Each state buffer spanned 2^32 elements and more (8 to 16 GiB); the stretches filled are a
  // few KiB, so the process never came near committing it.
  EXPECT_LT(peak_rss_mib(), 1024);
}

TEST(FarSlotsRun, KernelSeesFarIdsAndAHugeState) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  const ssd::Problem p = ssd::parse_problem(kCases[0]);
  const ssd::InputSet inputs = ssd::make_inputs(p);
  const ssd::PreparedCall call(honest, p, inputs);
  const ssd_tensor state = call["state"], reads = call["state_batch_indices"];
  EXPECT_GE(state.shape[0] * state.shape[1] * state.shape[2] * state.shape[3], std::int64_t{1} << 32);
  const ssd::Tensor table = ssd::tensor_from_view(reads, "recurrent", "state_batch_indices");
  const ssd::Tensor want = inputs.at("state_batch_indices");
  bool any_far = false;
  for (std::int64_t b = 0; b < table.numel(); ++b) {
    if (want[b] < 0) {
      EXPECT_EQ(table[b], want[b]);  // padding stays
      continue;
    }
    EXPECT_LT(table[b], static_cast<double>(state.shape[0]));
    any_far = any_far || table[b] * 16 >= 0x1p32;
  }
  EXPECT_TRUE(any_far) << "no row's slot passes 2^32 elements";
}

TEST(FarSlotsRun, StoresAtATruncatedOffsetOrBetweenSlotsAreNamed) {
  const ssd::KernelLibrary honest = ssd::KernelLibrary::open("emulation");
  ssd::MemoryPool pool{honest.table()};
  const ssd::Problem p = ssd::parse_problem("recurrent:f32 b2 h2 p2 g1 n4 +sbi +farslots slots=3 seed=1");
  ssd::Tensor reads(ssd::DType::i32, {2});
  reads.set(0, 2);
  reads.set(1, 0);
  const ssd::FarSlots far = ssd::far_slots(p, reads, nullptr, 4);  // ids 3, 5, 2^28 (far_slots_test.cpp)
  const std::vector<ssd::RawTensor> raw = ssd::encode_inputs(ssd::make_inputs(p));
  const ssd::RawTensor* state = nullptr;
  for (const ssd::RawTensor& t : raw)
    if (t.name == "state") state = &t;
  ASSERT_NE(state, nullptr);
  const ssd::SlotBuffer buffer(pool, *state, far);
  EXPECT_TRUE(buffer.damage().empty());
  // Compact slot 2 at id 2^28: element 2^32 of the buffer holds its first value.
  auto* base = static_cast<float*>(buffer.view().data);
  EXPECT_EQ(base[std::int64_t{1} << 32], static_cast<float>(ssd::make_inputs(p).at("state")[2 * 16]));
  EXPECT_TRUE(ssd::is_poison(ssd::DType::f32, reinterpret_cast<const std::uint8_t*>(base + 5)));  // the landing [0, 16)
  base[5] = 1.0f;                      // where 2^28 * 16 lands in 32 bits
  base[4 * 16 + 1] = 2.0f;             // id 4: the poisoned slot between ids 3 and 5
  base[3 * 16] = 3.0f;                 // slot id 3 (compact 0): an output, no damage
  const std::vector<std::string> d = buffer.damage();
  EXPECT_TRUE(contains(d, "stored where a far slot's offset truncated to 32 bits lands (1 poisoned elements of state "
                          "changed, the first at element 5")) << joined(d);
  EXPECT_TRUE(contains(d, "wrote into a gap between the slots of state (1 poisoned elements changed, the first at element 65"))
      << joined(d);
  EXPECT_EQ(d.size(), 2u) << joined(d);
  EXPECT_EQ(buffer.read().bytes.size(), state->bytes.size());
}

TEST(FarSlotsRun, Uint32SlotOffsetsAreCaught) {
  const ssd::KernelLibrary mutant = ssd::KernelLibrary::open("mutant-slot_offset_uint32");
  for (const char* text : kCases) {
    const ssd::Problem p = ssd::parse_problem(text);
    // Where no offset passes 2^32 the mutant computes what the honest kernel does.
    const ssd::CaseJudgement near = ssd::check_case(mutant, compact(p));
    EXPECT_EQ(near.verdict, ssd::Verdict::passed) << text << ": " << ssd::describe(near);
    const ssd::CaseJudgement far = ssd::check_case(mutant, p);
    EXPECT_EQ(far.verdict, ssd::Verdict::failed) << text << ": " << ssd::describe(far);
  }
  // Row 0 reads far slot 2 at element 0 (2^28 * 16 in 32 bits): poison, whose NaN payload its
  // outputs carry, so they read as never written; the store goes there too (the same NaN bits),
  // and slot 2 keeps its input where the contract stores it.
  const ssd::CaseJudgement j = ssd::check_case(mutant, ssd::parse_problem(kCases[0]));
  EXPECT_NE(ssd::describe(j).find("never written: out[0,0,0]"), std::string::npos) << ssd::describe(j);
  EXPECT_NE(ssd::describe(j).find("state[2,"), std::string::npos) << ssd::describe(j);
}

}  // namespace
