// The ABI entry points of the eight ops, one api/<op>.cpp each (argument checks, parameter
// packing, the op's launcher); table.cpp collects them into the exported table.
#pragma once
#include "ssd/kernel_abi.h"

namespace ssd_gpu {

ssd_status mamba2(const ssd_mamba2_args* args);
ssd_status chunk_cumsum(const ssd_chunk_cumsum_args* args);
ssd_status chunk_coupling(const ssd_chunk_coupling_args* args);
ssd_status chunk_state(const ssd_chunk_state_args* args);
ssd_status state_passing(const ssd_state_passing_args* args);
ssd_status chunk_scan(const ssd_chunk_scan_args* args);
ssd_status recurrent(const ssd_recurrent_args* args);
ssd_status discretize_segsum(const ssd_discretize_segsum_args* args);

}  // namespace ssd_gpu
