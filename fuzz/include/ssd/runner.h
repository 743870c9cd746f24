// Running one case through any kernel library behind the kernel ABI: load a table (the built-in
// fp32 emulation, or a shared library given by path), marshal the inputs into its memory,
// call the op, read the outputs back, and judge them against the oracle under the bounds.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ssd/abi_tensors.h"
#include "ssd/kernel_abi.h"
#include "ssd/op_spec.h"
#include "ssd/verdict.h"

namespace ssd {

class KernelLibrary {
 public:
  // "emulation" (fp32 emulation, kernel order), "emulation-blocked" (blocked/tree order), or a
  // path to a shared library exporting SSD_KERNEL_TABLE_SYMBOL. Throws ArgumentError('kernels')
  // for an unknown name, a library that cannot be opened, a missing symbol or an ABI mismatch.
  static KernelLibrary open(const std::string& spec);
  // Wraps a table already in memory (checks its version).
  static KernelLibrary from_table(const ssd_kernel_table* table, std::string origin);

  const ssd_kernel_table& table() const { return *table_; }
  const std::string& origin() const { return origin_; }
  bool implements(Op op) const;

 private:
  std::shared_ptr<void> handle_;  // dlopen handle, closed with the last copy
  const ssd_kernel_table* table_ = nullptr;
  std::string origin_;
};

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
  Outputs read() const;                             // outputs (and the updated recurrent state)
  // Every input read once plus every output written once (an in-place state counts twice).
  std::size_t min_bytes() const { return min_bytes_; }
  // The descriptor of a buffer by contract name (empty, data NULL, for an absent input).
  ssd_tensor operator[](const std::string& name) const;

 private:
  const ssd_kernel_table& table_;
  Problem problem_;
  std::map<std::string, std::unique_ptr<AbiBuffer>> buffers_;
  std::vector<std::string> outputs_;
  std::size_t min_bytes_ = 0;
};

// The whole differential check of one case: inputs from the problem, oracle, bounds, kernel run,
// judgement. An invalid problem is INVALID if the kernel also rejects it; a kernel that rejects
// a valid case FAILS with its message; an op the library lacks is SKIPPED.
CaseJudgement check_case(const KernelLibrary& library, const Problem& problem);

}  // namespace ssd
