// Argument validation shared by both oracle forms of each op (internal to ssd_reference).
// Each validate_* checks presence, rank, shape, dtype, H % G, positive sizes and seq_idx rules,
// throws ArgumentError naming the argument, and returns the resolved dimensions.
#pragma once
#include <cstdint>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"

namespace ssd {

struct OpDims {
  std::int64_t batch = 0;     // Bt
  std::int64_t seqlen = 0;    // S
  std::int64_t heads = 0;     // H
  std::int64_t headdim = 0;   // P
  std::int64_t groups = 0;    // G
  std::int64_t dstate = 0;    // N
  std::int64_t chunk = 0;     // Q
  std::int64_t chunks = 0;    // NC
  std::int64_t flat = 0;      // D of state passing (P*N flattened)
  std::int64_t slots = 0;     // Bs of the recurrent state
  std::int64_t sequences = 0; // nseq of a packed varlen batch
  std::int64_t tokens = 0;    // T of a multi-token decode call (x [Bt,T,H,P]); 0 for x [Bt,H,P]
  bool d_has_hdim = false;    // D given as [H,P]
  ChunkGrid grid() const { return ChunkGrid{seqlen, chunk}; }
  std::int64_t heads_per_group() const { return heads / groups; }
  std::int64_t group_of(std::int64_t head) const { return head / heads_per_group(); }
};

OpDims validate(const Mamba2Args& a);
OpDims validate(const ChunkCumsumArgs& a);
OpDims validate(const ChunkCouplingArgs& a);
OpDims validate(const ChunkStateArgs& a);
OpDims validate(const StatePassingArgs& a);
OpDims validate(const ChunkScanArgs& a);
OpDims validate(const RecurrentArgs& a);
OpDims validate(const DiscretizeSegsumArgs& a);

}  // namespace ssd
