// Bad input generated from the OpSpecs: for every op, both oracle forms and each smoke problem,
// each required role removed, each role's rank and each shape rule broken (an extent that a size
// shares with another role), each dtype rule broken, each seq_idx rule broken, each size empty,
// and H % G != 0 are rejected with an ArgumentError naming the argument. The op-specific rules
// (chunk_size, dt_limit, state slots, ...) are written by hand in bad_input_test.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ssd/reference/errors.h"
#include "ssd/reference/op_spec.h"

namespace {

using ssd::InputSet;
using ssd::Op;
using ssd::OpSpec;
using ssd::Problem;
using ssd::Shape;
using ssd::Tensor;

using Form = std::function<ssd::Outputs(const Problem&, const InputSet&)>;

// The inputs with one role replaced (or removed when `replacement` is empty).
InputSet with(const InputSet& in, const std::string& role, const Tensor* replacement) {
  InputSet out;
  for (const auto& [name, t] : in.all())
    if (name != role) out.put(name, t);
    else if (replacement) out.put(name, *replacement);
  return out;
}

// Runs the form and expects an ArgumentError whose message names one of `names` as an argument.
void expect_rejection(const Form& form, const Problem& p, const InputSet& in, const std::vector<std::string>& names,
                      const std::string& what) {
  SCOPED_TRACE(ssd::to_string(p) + ": " + what);
  try {
    (void)form(p, in);
    ADD_FAILURE() << "accepted";
  } catch (const ssd::ArgumentError& e) {
    const std::string message = e.what();
    bool named = false;
    for (const auto& n : names) named = named || message.find("'" + n + "'") != std::string::npos;
    EXPECT_TRUE(named) << "the message names none of the expected arguments: " << message;
    EXPECT_EQ(message.rfind(std::string(ssd::op_name(p.op)), 0), 0u) << "the message does not start with the op: " << message;
  }
}

// The sizes of a problem, by letter, as pointers into it.
std::vector<std::pair<char, std::int64_t Problem::*>> sizes() {
  return {{'b', &Problem::b}, {'s', &Problem::s}, {'h', &Problem::h}, {'p', &Problem::p},
          {'g', &Problem::g}, {'n', &Problem::n}, {'q', &Problem::q}, {'d', &Problem::d}};
}

struct Case {
  Op op;
  bool sequential;
};

class GeneratedBadInput : public testing::TestWithParam<Case> {
 protected:
  const OpSpec& spec() const { return ssd::op_spec(GetParam().op); }
  Form form() const { return GetParam().sequential ? spec().sequential : spec().chunked; }
  const ssd::InputRole& role(const std::string& name) const { return *spec().input(name); }
  bool present(const Problem& p, const ssd::InputRole& r) const { return !r.present || r.present(p); }
};

TEST_P(GeneratedBadInput, SmokeProblemsAreAccepted) {
  for (const Problem& p : spec().smoke()) EXPECT_NO_THROW((void)form()(p, ssd::make_inputs(p))) << ssd::to_string(p);
}

TEST_P(GeneratedBadInput, EachRequiredRoleRemoved) {
  int checked = 0;
  for (const Problem& p : spec().smoke()) {
    const InputSet in = ssd::make_inputs(p);
    for (const auto& r : spec().inputs)
      if (!r.present) {
        expect_rejection(form(), p, with(in, r.name, nullptr), {r.name}, r.name + " removed");
        ++checked;
      }
  }
  EXPECT_GT(checked, 0);
}

TEST_P(GeneratedBadInput, EachRankBroken) {
  for (const Problem& p : spec().smoke()) {
    const InputSet in = ssd::make_inputs(p);
    for (const auto& [name, t] : in.all()) {
      Shape longer = t.shape();
      longer.push_back(1);
      const Tensor extra_axis = t.reshaped(longer);
      expect_rejection(form(), p, with(in, name, &extra_axis), {name}, name + " with an extra axis");
      if (t.rank() > 1) {
        Shape shorter(t.shape().begin() + 1, t.shape().end());
        shorter[0] *= t.dim(0);
        const Tensor merged = t.reshaped(shorter);
        expect_rejection(form(), p, with(in, name, &merged), {name}, name + " with its first two axes merged");
      }
    }
  }
}

// A size changed in one role only, where another present role depends on the same size: the
// shapes then describe no problem at all. Either role may be the one the message names.
TEST_P(GeneratedBadInput, EachSharedExtentBroken) {
  int checked = 0;
  for (const Problem& p : spec().smoke()) {
    const InputSet in = ssd::make_inputs(p);
    for (auto [letter, field] : sizes()) {
      if (!spec().takes_dim(letter)) continue;
      Problem bigger = p;
      bigger.*field += 1;
      for (const auto& r : spec().inputs) {
        if (!present(p, r) || r.shape(bigger) == r.shape(p)) continue;
        std::vector<std::string> sharing{r.name};
        for (const auto& other : spec().inputs)
          if (other.name != r.name && present(p, other) && other.shape(bigger) != other.shape(p))
            sharing.push_back(other.name);
        if (sharing.size() == 1) continue;  // no other role holds the size: a consistent, other problem
        if (letter == 'h') {  // a changed H may first fail H % G, which names the role that carries G
          Problem more_groups = p;
          more_groups.g += 1;
          for (const auto& other : spec().inputs)
            if (present(p, other) && other.shape(more_groups) != other.shape(p)) sharing.push_back(other.name);
        }
        const Tensor wrong(in.at(r.name).dtype(), r.shape(bigger));
        expect_rejection(form(), p, with(in, r.name, &wrong), sharing,
                         r.name + " with " + std::string(1, letter) + " + 1");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_P(GeneratedBadInput, EachDtypeRuleBroken) {
  for (const Problem& p : spec().smoke()) {
    const InputSet in = ssd::make_inputs(p);
    for (const auto& [name, t] : in.all()) {
      // Float roles refuse an index dtype, index roles a float dtype.
      const ssd::DType wrong_dtype = ssd::is_float(t.dtype()) ? ssd::DType::i32 : ssd::DType::f32;
      const Tensor wrong(wrong_dtype, t.shape());
      expect_rejection(form(), p, with(in, name, &wrong), {name}, name + " as " + std::string(ssd::dtype_name(wrong_dtype)));
    }
  }
}

// Instantiated for the ops that take seq_idx.
class GeneratedSeqIdxBadInput : public GeneratedBadInput {};

TEST_P(GeneratedSeqIdxBadInput, EachSeqIdxRuleBroken) {
  int checked = 0;
  for (const Problem& p : spec().smoke()) {
    const InputSet in = ssd::make_inputs(p);
    const Tensor* seq = in.find("seq_idx");
    if (seq == nullptr || p.s < 2) continue;
    // Ids that decrease: the last token of row 0 gets an id below the first token's.
    Tensor decreasing = *seq;
    decreasing.data()[p.s - 1] = decreasing[0] - 1 < 0 ? -1 : decreasing[0] - 1;
    decreasing.data()[0] = std::max(decreasing[0], 0.0) + 1;
    expect_rejection(form(), p, with(in, "seq_idx", &decreasing), {"seq_idx"}, "decreasing ids");
    // A sequence that resumes after padding: token 0 padding, token 1 a real id.
    Tensor resumed = *seq;
    resumed.data()[0] = -1;
    resumed.data()[1] = 0;
    expect_rejection(form(), p, with(in, "seq_idx", &resumed), {"seq_idx"}, "an id after padding");
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no smoke problem of the op has seq_idx";
}

// Every size the op takes set to zero, with tensors consistent with it (empty extents).
TEST_P(GeneratedBadInput, EachSizeEmpty) {
  const Problem p = spec().smoke().front();
  std::vector<std::string> all_roles;
  for (const auto& r : spec().inputs) all_roles.push_back(r.name);
  all_roles.push_back("chunk_size");
  for (auto [letter, field] : sizes()) {
    if (!spec().takes_dim(letter) || letter == 'q' || letter == 'g') continue;  // Q and G are divisors
    Problem empty = p;
    empty.*field = 0;
    expect_rejection(form(), empty, ssd::make_inputs_unchecked(empty), all_roles, std::string(1, letter) + " = 0");
  }
}

// Instantiated for the ops with heads in groups.
class GeneratedGroupsBadInput : public GeneratedBadInput {};

TEST_P(GeneratedGroupsBadInput, HeadsNotDivisibleByGroups) {
  Problem p = spec().smoke().front();
  p.g = p.h + 1;
  std::vector<std::string> group_roles;
  for (const auto& r : spec().inputs) group_roles.push_back(r.name);
  expect_rejection(form(), p, ssd::make_inputs_unchecked(p), group_roles, "G = H + 1");
}

// Both forms of every op for which `include` holds.
std::vector<Case> cases(bool (*include)(const OpSpec&)) {
  std::vector<Case> list;
  for (Op op : ssd::kAllOps)
    if (include(ssd::op_spec(op)))
      for (bool sequential : {false, true}) list.push_back({op, sequential});
  return list;
}

std::string case_name(const testing::TestParamInfo<Case>& test) {
  return std::string(ssd::op_name(test.param.op)) + (test.param.sequential ? "_sequential" : "_chunked");
}

INSTANTIATE_TEST_SUITE_P(AllOps, GeneratedBadInput, testing::ValuesIn(cases([](const OpSpec&) { return true; })),
                         case_name);
INSTANTIATE_TEST_SUITE_P(SeqIdxOps, GeneratedSeqIdxBadInput,
                         testing::ValuesIn(cases([](const OpSpec& s) { return s.input("seq_idx") != nullptr; })), case_name);
INSTANTIATE_TEST_SUITE_P(GroupedOps, GeneratedGroupsBadInput,
                         testing::ValuesIn(cases([](const OpSpec& s) { return s.takes_dim('g') && s.takes_dim('h'); })),
                         case_name);

}  // namespace
