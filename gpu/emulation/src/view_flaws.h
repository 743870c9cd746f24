// The planted flaws of strided input views (strides_ignored, offsets_int32, params_assumed_dense),
// applied to a call's input views before the emulation reads them; other flaws leave the call as it is.
#pragma once
#include "ssd/emulation/emulation.h"
#include "ssd/reference/abi_call.h"

namespace ssd {

// Throws std::runtime_error (RUNTIME_ERROR: an illegal access) where offsets_int32 would fault.
void apply_view_flaw(Flaw flaw, AbiArgs& call);

}  // namespace ssd
