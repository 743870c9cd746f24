// Running one case through any kernel library behind the kernel ABI, in this process: marshal the
// inputs into its memory (guarded, outputs poisoned), call the op through the OpSpec's ABI binding,
// read the outputs back and inspect the memory around them, and judge against the oracle under
// the bounds. ssd/harness/case_checker.h runs the same call in a worker process.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ssd/harness/abi_buffer.h"
#include "ssd/harness/call_record.h"
#include "ssd/harness/kernel_library.h"
#include "ssd/harness/memory_pool.h"
#include "ssd/harness/slot_buffer.h"
#include "ssd/harness/view_buffer.h"
#include "ssd/reference/abi_call.h"
#include "ssd/reference/op_spec.h"
#include "ssd/reference/verdict.h"

namespace ssd {

// What one call of a kernel produced, decoded.
struct KernelRun {
  using Status = CallStatus;
  Status status = Status::ok;
  Outputs outputs;      // each in its storage dtype (values as doubles); valid when ok
  std::string message;  // the library's last_error for non-ok statuses
};

KernelRun run_kernel(const KernelLibrary& library, const Problem& problem, const InputSet& inputs);

// One guarded call: status, message, raw outputs and memory damage (ssd/harness/call_record.h).
// Buffers come from `pool` when given (reused across calls), else are allocated for this call.
CallRecord record_call(const KernelLibrary& library, const Problem& problem, const InputSet& inputs,
                       MemoryPool* pool = nullptr);
// The same from encoded inputs (what a worker receives).
CallRecord record_call(const KernelLibrary& library, const Problem& problem, std::vector<RawTensor> inputs,
                       MemoryPool* pool = nullptr);

// One op call with its buffers in the library's memory: inputs uploaded, outputs allocated in
// their contract dtypes and shapes (OpSpec) and filled with poison, every buffer between guard
// bands; under a layout= other than contiguous the laid-out inputs are views into ViewBuffers
// (ssd/harness/view_buffer.h), their gaps poisoned and checked like the inputs; under +farslots
// the decode step's state is a SlotBuffer (ssd/harness/slot_buffer.h) and its slot tables and
// padding id name the far ids, while read() and inspect() give the compact state. Invoking it again reuses the buffers, which is what timing needs (ssd-bench captures
// invoke() in a CUDA graph).
class PreparedCall {
 public:
  PreparedCall(const KernelLibrary& library, const Problem& problem, const InputSet& inputs, MemoryPool* pool = nullptr);
  PreparedCall(const KernelLibrary& library, const Problem& problem, std::vector<RawTensor> inputs,
               MemoryPool* pool = nullptr);
  ssd_status invoke(void* stream = nullptr) const;  // the op's status; last_error() has the message
  Outputs read() const;                             // every output, an in-place state included
  // After a call: every output's bytes, and what the call did outside them: damaged guard bands
  // (of every buffer) and inputs that changed (a state updated in place is an output).
  struct Inspection {
    std::vector<RawTensor> outputs;
    std::vector<std::string> damage;
  };
  Inspection inspect() const;
  // Every input read once plus every output written once (an in-place state counts twice).
  std::size_t min_bytes() const { return min_bytes_; }
  // The descriptor of a buffer by contract name (empty, data NULL, for an absent input).
  ssd_tensor operator[](const std::string& name) const;

 private:
  bool is_output(const std::string& name) const;
  const ssd_kernel_table& table_;
  Problem problem_;
  std::unique_ptr<MemoryPool> own_pool_;  // when the caller gives none (declared before the buffers it outlives)
  std::map<std::string, std::unique_ptr<AbiBuffer>> buffers_;
  std::vector<std::unique_ptr<ViewBuffer>> view_buffers_;  // the laid-out inputs (layout=)
  std::unique_ptr<SlotBuffer> slots_;  // recurrent's state under +farslots (else a dense buffer in buffers_)
  std::vector<std::string> outputs_;  // in the OpSpec's order
  mutable AbiArgs args_;
  std::size_t min_bytes_ = 0;
};

// The whole differential check of one case, in this process: inputs from the problem, oracle,
// bounds, kernel run, judgement. An invalid problem is INVALID if the kernel also rejects it; a
// kernel that rejects a valid case FAILS with its message; an op the library lacks is SKIPPED; a
// damaged guard band, a changed input or a defined output element left as poison FAILS. A kernel
// that crashes takes this process with it: CaseChecker (ssd/harness/case_checker.h) isolates it.
CaseJudgement check_case(const KernelLibrary& library, const Problem& problem);

}  // namespace ssd
