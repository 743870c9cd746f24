// Sequential oracle of SSDStatePassingFwd: each entering state from the closed-form double sum.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

// out[z] = exp(sum_{k<z} a_k) * h_init + sum_{c<z} exp(sum_{c<k<z} a_k) * S_c  (ops.md section 5),
// evaluated for every z independently instead of by the kernel's running scan. A seq_idx reset at
// chunk r zeroes the scale of chunk r, i.e. every product of scales that runs through r: so only
// the terms c >= r survive, and h_init only when no chunk before z resets.
Outputs state_passing_sequential(const StatePassingArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& states = *args.states;
  const Tensor& alpha = *args.dA_chunk_cumsum;
  const std::int64_t Bt = states.dim(0), NC = states.dim(1), H = states.dim(2), D = states.dim(3);

  // reset[b][c]: the id at the end of chunk c differs from the id at the end of chunk c-1 (the
  // id "before" chunk 0 is kSeqIdBeforeStart), so chunk c does not carry the state in.
  std::vector<std::vector<bool>> reset(static_cast<std::size_t>(Bt),
                                       std::vector<bool>(static_cast<std::size_t>(NC), false));
  if (args.seq_idx != nullptr) {
    const std::int64_t S = args.seq_idx->dim(1), Q = args.chunk_size;
    for (std::int64_t b = 0; b < Bt; ++b) {
      std::int64_t prev_id = kSeqIdBeforeStart;
      for (std::int64_t c = 0; c < NC; ++c) {
        const auto id = static_cast<std::int64_t>(args.seq_idx->at({b, std::min((c + 1) * Q, S) - 1}));
        reset[b][c] = id != prev_id;
        prev_id = id;
      }
    }
  }

  Tensor out(DType::f64, {Bt, NC, H, D});
  Tensor final_states(DType::f64, {Bt, H, D});
  std::vector<double> value(static_cast<std::size_t>(D));
  for (std::int64_t b = 0; b < Bt; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t z = 0; z <= NC; ++z) {
        // The most recent reset before z bounds the sum; -1 when none.
        std::int64_t last_reset = -1;
        for (std::int64_t k = 0; k < z; ++k)
          if (reset[b][k]) last_reset = k;

        std::fill(value.begin(), value.end(), 0.0);
        // exponent = sum_{c<k<z} a_k, extended one term per step as c moves down.
        double exponent = 0.0;
        for (std::int64_t c = z - 1; c >= std::max<std::int64_t>(last_reset, 0); --c) {
          const double decay = std::exp(exponent);
          for (std::int64_t e = 0; e < D; ++e) value[e] += decay * states.at({b, c, h, e});
          exponent += alpha.at({b, h, c});
        }
        if (last_reset < 0 && args.initial_states != nullptr) {
          // Here exponent = sum_{k<z} a_k (0 for z = 0, so out[0] = h_init exactly).
          const double decay = std::exp(exponent);
          for (std::int64_t e = 0; e < D; ++e) value[e] += decay * args.initial_states->at({b, h, e});
        }

        for (std::int64_t e = 0; e < D; ++e) {
          if (z < NC)
            out.data()[out.offset({b, z, h, e})] = value[e];
          else
            final_states.data()[final_states.offset({b, h, e})] = value[e];
        }
      }
    }
  }

  Outputs result;
  result.add("out", std::move(out));
  result.add("final_states", std::move(final_states));
  return result;
}

}  // namespace ssd
