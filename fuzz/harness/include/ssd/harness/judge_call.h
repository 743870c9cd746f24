// The verdict on one recorded kernel call (ssd/harness/call_record.h), wherever it ran: its status,
// the memory findings (guard bands, changed inputs, defined outputs never written), then the
// values against the oracle under the bounds.
#pragma once
#include <string>
#include <vector>

#include "ssd/harness/call_record.h"
#include "ssd/reference/truth.h"

namespace ssd {

// A case inside the contract. Rejected or failed calls are FAILED, UNSUPPORTED and unimplemented
// ops SKIPPED; any memory finding makes the verdict FAILED, its lines leading the message.
CaseJudgement judge_valid_call(const Problem& problem, const Truth& truth, const CallRecord& call);

// A case outside the contract (`why`): INVALID when the kernel rejects it, FAILED when it accepts
// it or damages memory while saying no.
CaseJudgement judge_invalid_call(const Problem& problem, const std::string& why, const CallRecord& call);

// "never written: dt_out[0,1,0,13] (and 3 more of 24 defined elements)" for each output whose
// elements the contract defines (the oracle's mask) but that still hold the runner's poison.
std::vector<std::string> unwritten_outputs(const Outputs& oracle, const std::vector<RawTensor>& outputs);

}  // namespace ssd
