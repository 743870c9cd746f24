// Call records decoded to values, and inputs encoded for a worker.
#include "ssd/harness/call_record.h"

#include "ssd/reference/abi_views.h"

namespace ssd {

Outputs decode_outputs(const std::vector<RawTensor>& outputs) {
  Outputs out;
  for (const RawTensor& o : outputs) out.add(o.name, decode(o.dtype, o.shape, o.bytes.data()));
  return out;
}

std::vector<RawTensor> encode_inputs(const InputSet& inputs) {
  std::vector<RawTensor> raw;
  for (const auto& [name, t] : inputs.all()) raw.push_back(RawTensor{name, t.dtype(), t.shape(), encode(t)});
  return raw;
}

}  // namespace ssd
