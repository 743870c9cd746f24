// The op arguments a problem describes: each op's Args struct bound to the named inputs of an
// InputSet and the flags of the Problem (absent inputs stay nullptr). Shared by the OpSpecs, the
// fp32 emulation and the tests, so the mapping from problem to arguments exists once.
#pragma once
#include "ssd/reference/op_spec.h"
#include "ssd/reference/oracle.h"

namespace ssd {

Mamba2Args bind_mamba2(const Problem& p, const InputSet& in);
ChunkCumsumArgs bind_chunk_cumsum(const Problem& p, const InputSet& in);
ChunkCouplingArgs bind_chunk_coupling(const Problem& p, const InputSet& in);
ChunkStateArgs bind_chunk_state(const Problem& p, const InputSet& in);
StatePassingArgs bind_state_passing(const Problem& p, const InputSet& in);
ChunkScanArgs bind_chunk_scan(const Problem& p, const InputSet& in);
RecurrentArgs bind_recurrent(const Problem& p, const InputSet& in);
DiscretizeSegsumArgs bind_discretize_segsum(const Problem& p, const InputSet& in);

}  // namespace ssd
