// The scan's kernel on Hopper's warpgroup MMA (chunk_scan_wgmma.cu, compiled for sm_90a), which
// chunk_scan_tc.cu's launcher tries first once a call meets its conditions (the same ones).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "params.h"

namespace ssd_gpu {

// Launches the kernel over `tiles` (batch x chunks x heads x 64-wide p tiles) and returns true on a
// compute capability 9.0 device unless SSD_GPU_WGMMA=0; false otherwise.
bool launch_chunk_scan_wgmma(const char* op, const ChunkScanParams& p, int64_t tiles, cudaStream_t stream);

}  // namespace ssd_gpu
