// RapidCheck generators of valid Problems per OpSpec, weighted toward the corners where SSD
// kernels break (ragged tails, S < Q, S = 1, seq_idx boundaries at and next to chunk boundaries,
// padding tails, mixed dtypes). Every value is drawn through RapidCheck so failures shrink, and a
// Problem shows as its one-line string.
#pragma once
#include <ostream>
#include <vector>
#include <rapidcheck.h>

#include "ssd/reference/problem.h"

namespace ssd {

// Upper limits of the generated sizes (small by default so many cases run per second). H is drawn
// from {1, 2, 3, 4, 6, 8, 12} up to `heads`; the corner of 64 heads in 8 groups is drawn apart.
struct GenLimits {
  std::int64_t batch = 2, seqlen = 80, heads = 12, headdim = 6, dstate = 6, chunk = 16, flat = 12, chunks = 3;
};

// What a generated case may contain. The defaults cover every option; properties that need a
// narrower family (no seq_idx, no dt_limit, ...) switch pieces off.
struct GenOptions {
  bool seq_idx = true;
  bool padding = true;            // negative ids at the tail
  bool dt_limit = true;           // custom limits (lo >= 0 unless negative_limit)
  bool negative_limit = false;    // allow lo < 0 (dt' may be negative: leaves the recurrence's domain)
  bool mixed_dtypes = true;
  bool initial_states = true;
  bool varlen = true;             // packed varlen batches (+varlen) where the op takes them
  bool serving = true;            // the serving decode step (tokens=, +spec, +dst, +accepted, pad=, +nowrite, +inter)
  bool value_regimes = true;      // the OpSpec's fill regimes (dt_edge, dt_overflow, A_zero, underflow, dA_rise, bench)
  bool layouts = true;            // strided input views (layout=zxbcdt, layout=strided) for a tenth of the cases
  bool far = false;               // +far (views past 2^31 elements) on every case with b >= 2 and no +varlen
  bool far_slots = false;         // +farslots (slot offsets past 2^32 elements) on every recurrent case, with +sbi added
  std::vector<DType> dtypes;      // primary dtypes to draw from (empty = every dtype the op takes)
  GenLimits limits;
};

rc::Gen<Problem> gen_problem(Op op, const GenOptions& options = {});
// What a fuzz campaign draws from: every option of GenOptions on, negative dt limits included (dA
// then rises inside a chunk), with the small limits or the large ones of ssd-fuzz --large.
GenOptions campaign_gen_options(bool large);
// seq_idx runs over S tokens with boundaries placed at, one before and one after chunk boundaries.
rc::Gen<SeqSpec> gen_seq_runs(std::int64_t seqlen, std::int64_t chunk, bool padding);

// RapidCheck prints a Problem as its problem string and an Op by name.
void showValue(const Problem& p, std::ostream& os);
void showValue(Op op, std::ostream& os);

}  // namespace ssd
