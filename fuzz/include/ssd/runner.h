// Running one case through any kernel library behind the kernel ABI: load a table (the built-in
// fp32 emulation, or a shared library given by path), marshal the inputs into its memory,
// call the op, read the outputs back, and judge them against the oracle under the bounds.
#pragma once
#include <memory>
#include <string>

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

// The whole differential check of one case: inputs from the problem, oracle, bounds, kernel run,
// judgement. An invalid problem is INVALID if the kernel also rejects it; a kernel that rejects
// a valid case FAILS with its message; an op the library lacks is SKIPPED.
CaseJudgement check_case(const KernelLibrary& library, const Problem& problem);

}  // namespace ssd
