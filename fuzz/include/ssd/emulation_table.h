// The fp32 emulation (honest variants and planted-bug mutants) as kernel-ABI tables with host
// memory, so it is loaded and called exactly like any kernel library.
#pragma once
#include "ssd/emulation.h"
#include "ssd/kernel_abi.h"

namespace ssd {

// The table for these options (one static table per sum order x flaw; never NULL).
const ssd_kernel_table* emulation_table(const EmulationOptions& options);

}  // namespace ssd
