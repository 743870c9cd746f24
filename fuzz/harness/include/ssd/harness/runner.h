// Running one case through any kernel library behind the kernel ABI: marshal the inputs into its
// memory, call the op through the OpSpec's ABI binding, read the outputs back, and judge them
// against the oracle under the bounds.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ssd/harness/abi_buffer.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/reference/abi_call.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/verdict.h"

namespace ssd {

// What one call of a kernel produced.
struct KernelRun {
  enum class Status { ok, not_implemented, rejected, unsupported, error };
  Status status = Status::ok;
  Outputs outputs;      // each in its storage dtype (values as doubles); valid when ok
  std::string message;  // the library's last_error for non-ok statuses
};

KernelRun run_kernel(const KernelLibrary& library, const Problem& problem, const InputSet& inputs);

// One op call with its buffers in the library's memory: inputs uploaded, outputs allocated in
// their contract dtypes and shapes (OpSpec). Invoking it again reuses the buffers, which is what
// timing needs (ssd-bench captures invoke() in a CUDA graph).
class PreparedCall {
 public:
  PreparedCall(const KernelLibrary& library, const Problem& problem, const InputSet& inputs);
  ssd_status invoke(void* stream = nullptr) const;  // the op's status; last_error() has the message
  Outputs read() const;                             // every output, an in-place state included
  // Every input read once plus every output written once (an in-place state counts twice).
  std::size_t min_bytes() const { return min_bytes_; }
  // The descriptor of a buffer by contract name (empty, data NULL, for an absent input).
  ssd_tensor operator[](const std::string& name) const;

 private:
  const ssd_kernel_table& table_;
  Problem problem_;
  std::map<std::string, std::unique_ptr<AbiBuffer>> buffers_;
  std::vector<std::string> outputs_;
  mutable AbiArgs args_;
  std::size_t min_bytes_ = 0;
};

// The whole differential check of one case: inputs from the problem, oracle, bounds, kernel run,
// judgement. An invalid problem is INVALID if the kernel also rejects it; a kernel that rejects
// a valid case FAILS with its message; an op the library lacks is SKIPPED.
CaseJudgement check_case(const KernelLibrary& library, const Problem& problem);

}  // namespace ssd
