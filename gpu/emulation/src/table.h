// The fp32 emulation (an honest variant or one with a planted flaw) as a kernel-ABI table with
// host memory, so it is loaded and called exactly like any kernel library.
#pragma once
#include "ssd/emulation/emulation.h"
#include "ssd/kernel_abi.h"

namespace ssd {

// The table of one variant, named `name`. The entries read the variant from a global: one
// variant per loaded library (each variant is its own shared object, see library.cpp).
ssd_kernel_table emulation_table(const EmulationOptions& options, const char* name);

}  // namespace ssd
