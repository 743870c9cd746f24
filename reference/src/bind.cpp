// Binding a problem's inputs and flags to each op's argument struct.
#include "ssd/bind.h"

namespace ssd {

Mamba2Args bind_mamba2(const Problem& p, const InputSet& in) {
  Mamba2Args a;
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.B = in.find("B");
  a.C = in.find("C");
  a.chunk_size = p.q;
  a.D = in.find("D");
  a.z = in.find("z");
  a.dt_bias = in.find("dt_bias");
  a.initial_states = in.find("initial_states");
  a.seq_idx = in.find("seq_idx");
  a.dt_softplus = p.softplus;
  if (p.dt_limit) a.dt_limit = *p.dt_limit;
  return a;
}

ChunkCumsumArgs bind_chunk_cumsum(const Problem& p, const InputSet& in) {
  ChunkCumsumArgs a;
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.chunk_size = p.q;
  a.dt_bias = in.find("dt_bias");
  a.dt_softplus = p.softplus;
  if (p.dt_limit) a.dt_limit = *p.dt_limit;
  return a;
}

ChunkCouplingArgs bind_chunk_coupling(const Problem& p, const InputSet& in) {
  ChunkCouplingArgs a;
  a.C = in.find("C");
  a.B = in.find("B");
  a.chunk_size = p.q;
  a.seq_idx = in.find("seq_idx");
  a.causal = p.causal;
  return a;
}

ChunkStateArgs bind_chunk_state(const Problem&, const InputSet& in) {
  ChunkStateArgs a;
  a.B = in.find("B");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.dA_cumsum = in.find("dA_cumsum");
  a.seq_idx = in.find("seq_idx");
  return a;
}

StatePassingArgs bind_state_passing(const Problem& p, const InputSet& in) {
  StatePassingArgs a;
  a.states = in.find("states");
  a.dA_chunk_cumsum = in.find("dA_chunk_cumsum");
  a.initial_states = in.find("initial_states");
  a.seq_idx = in.find("seq_idx");
  a.chunk_size = p.q;
  return a;
}

ChunkScanArgs bind_chunk_scan(const Problem&, const InputSet& in) {
  ChunkScanArgs a;
  a.cb = in.find("cb");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.dA_cumsum = in.find("dA_cumsum");
  a.C = in.find("C");
  a.states = in.find("states");
  a.D = in.find("D");
  a.z = in.find("z");
  a.seq_idx = in.find("seq_idx");
  return a;
}

RecurrentArgs bind_recurrent(const Problem& p, const InputSet& in) {
  RecurrentArgs a;
  a.state = in.find("state");
  a.x = in.find("x");
  a.dt = in.find("dt");
  a.A = in.find("A");
  a.B = in.find("B");
  a.C = in.find("C");
  a.D = in.find("D");
  a.z = in.find("z");
  a.dt_bias = in.find("dt_bias");
  a.state_batch_indices = in.find("state_batch_indices");
  a.dt_softplus = p.softplus;
  return a;
}


DiscretizeSegsumArgs bind_discretize_segsum(const Problem&, const InputSet& in) {
  DiscretizeSegsumArgs a;
  a.hidden_states = in.find("hidden_states");
  a.dt = in.find("dt");
  a.A_log = in.find("A_log");
  a.B = in.find("B");
  a.C = in.find("C");
  return a;
}

}  // namespace ssd
