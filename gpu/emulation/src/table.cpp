// The fp32 emulation behind the kernel ABI: every entry reads the call back into the Problem and
// inputs it describes (through the op's AbiBinding), runs ssd::emulate, and writes the outputs
// into the caller's views.
#include "table.h"

#include <string>

#include "ssd/reference/abi_call.h"
#include "ssd/reference/errors.h"
#include "named_slots.h"
#include "view_flaws.h"

namespace ssd {
namespace {

thread_local std::string last_error_message;
const char* last_error() { return last_error_message.c_str(); }

EmulationOptions variant;

ssd_status run(Op op, const void* args) {
  try {
    const AbiArgs call(op, args);
    auto body = [](AbiArgs& c) {
      apply_view_flaw(variant.flaw, c);
      const DecodedCall decoded = decode_call(c);
      write_outputs(c, emulate(decoded.problem, decoded.inputs, variant));
    };
    // A +farslots state (2^32 elements and more) is never read whole: only its named slots.
    if (holds_far_slots(call)) {
      on_named_slots(call, variant.flaw, body);
    } else {
      AbiArgs copy = call;
      body(copy);
    }
    return SSD_STATUS_OK;
  } catch (const ArgumentError& e) {
    last_error_message = e.what();
    return SSD_STATUS_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    last_error_message = e.what();
    return SSD_STATUS_RUNTIME_ERROR;
  }
}

}  // namespace

ssd_kernel_table emulation_table(const EmulationOptions& options, const char* name) {
  variant = options;
  ssd_kernel_table t{};
  t.abi_version = SSD_KERNEL_ABI_VERSION;
  t.name = name;
  t.memory_kind = SSD_MEMORY_HOST;
  for (Op op : kAllOps) op_spec(op).abi.install(t, &run);
  t.last_error = &last_error;
  t.f32_dot_precision = options.tf32_dots ? SSD_DOTS_TF32 : SSD_DOTS_IEEE;
  return t;
}

}  // namespace ssd
