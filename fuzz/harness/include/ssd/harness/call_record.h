// What one guarded kernel call produced, as plain data: the status, the kernel's message, every
// output's bytes exactly as the kernel left them (poison included), and what the call did to
// memory it was not given to write. The same record comes from an in-process call and, over a
// pipe, from a worker process (ssd/harness/case_checker.h), and is judged the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ssd/reference/op_spec.h"
#include "ssd/reference/outputs.h"
#include "ssd/reference/tensor.h"

namespace ssd {

enum class CallStatus { ok, not_implemented, rejected, unsupported, error };

// One tensor's contents in its storage dtype, native little-endian bytes: how inputs travel to a
// worker and outputs come back.
struct RawTensor {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::uint8_t> bytes;
};

struct CallRecord {
  CallStatus status = CallStatus::ok;
  std::string message;             // the library's last_error for non-ok statuses
  std::vector<RawTensor> outputs;  // every output (an in-place state included) when ok
  // "wrote past the end of out (...)", "wrote before the start of x (...)", "input modified: ...":
  // whatever the status.
  std::vector<std::string> damage;
  // A device table failed (RUNTIME_ERROR, synchronize): CUDA errors are sticky, so the process
  // that made the call cannot be trusted with another.
  bool device_error = false;
};

// The outputs decoded to values (poison decodes as NaN).
Outputs decode_outputs(const std::vector<RawTensor>& outputs);
// Every input encoded, by name.
std::vector<RawTensor> encode_inputs(const InputSet& inputs);

}  // namespace ssd
