// Judging recorded kernel calls.
#include "ssd/harness/judge_call.h"

#include "ssd/harness/poison.h"
#include "ssd/reference/abi_views.h"

namespace ssd {
namespace {

// Memory findings lead the message: they say why the values below cannot be trusted.
void fail_with(CaseJudgement& j, const std::vector<std::string>& findings) {
  if (findings.empty()) return;
  std::string lines;
  for (const std::string& f : findings) lines += (lines.empty() ? "" : "\n  ") + f;
  if (j.verdict == Verdict::failed && !j.message.empty()) lines += "\n  " + j.message;
  j.verdict = Verdict::failed;
  j.message = lines;
}

}  // namespace

std::vector<std::string> unwritten_outputs(const Outputs& oracle, const std::vector<RawTensor>& outputs) {
  std::vector<std::string> findings;
  for (const RawTensor& raw : outputs) {
    if (!oracle.has(raw.name)) continue;
    const Output& want = oracle.get(raw.name);
    const std::size_t width = dtype_bytes(raw.dtype);
    const std::uint32_t bits = poison_bits(raw.dtype);
    const auto n = static_cast<std::int64_t>(raw.bytes.size() / width);
    std::int64_t first = -1, poisoned = 0, defined = 0;
    for (std::int64_t i = 0; i < n && i < want.value.numel(); ++i) {
      if (!want.is_defined(i)) continue;  // the contract leaves it open: anything goes
      ++defined;
      if (holds_poison(raw.bytes.data() + static_cast<std::size_t>(i) * width, width, bits)) {
        if (first < 0) first = i;
        ++poisoned;
      }
    }
    if (poisoned == 0) continue;
    std::string s = "never written: " + raw.name + index_string(raw.shape, first);
    s += poisoned > 1 ? " (and " + std::to_string(poisoned - 1) + " more of " + std::to_string(defined) +
                            " defined elements) still hold"
                      : " (1 of " + std::to_string(defined) + " defined elements) still holds";
    findings.push_back(s + " the poison the runner filled " + raw.name + " with");
  }
  return findings;
}

CaseJudgement judge_valid_call(const Problem& problem, const Truth& truth, const CallRecord& call) {
  CaseJudgement j;
  j.problem = to_string(problem);
  switch (call.status) {
    case CallStatus::ok: {
      j = judge(problem, truth.oracle, truth.bounds, decode_outputs(call.outputs));
      std::vector<std::string> findings = call.damage;
      for (std::string& f : unwritten_outputs(truth.oracle, call.outputs)) findings.push_back(std::move(f));
      fail_with(j, findings);
      return j;
    }
    case CallStatus::not_implemented:
    case CallStatus::unsupported:
      j.verdict = Verdict::skipped;
      j.message = call.message;
      break;
    case CallStatus::rejected:
      j.verdict = Verdict::failed;
      j.message = "rejected a valid case: " + call.message;
      break;
    case CallStatus::error:
      j.verdict = Verdict::failed;
      j.message = "error: " + call.message;
      break;
  }
  fail_with(j, call.damage);
  return j;
}

CaseJudgement judge_invalid_call(const Problem& problem, const std::string& why, const CallRecord& call) {
  CaseJudgement j;
  j.problem = to_string(problem);
  j.verdict = Verdict::invalid;
  j.message = why;
  if (call.status == CallStatus::ok) {
    j.verdict = Verdict::failed;
    j.message = "accepted a case outside the contract (" + why + ")";
  } else if (call.status == CallStatus::rejected) {
    j.message = why + "; rejected: " + call.message;
  }
  fail_with(j, call.damage);
  return j;
}

}  // namespace ssd
