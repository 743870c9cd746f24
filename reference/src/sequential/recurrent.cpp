// Sequential oracle of SSDRecurrentFwd: one decode step of selective_state_update, element by element.
#include <cmath>
#include <cstdint>

#include "ssd/reference/helpers.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/validate.h"

namespace ssd {

Outputs recurrent_sequential(const RecurrentArgs& args) {
  validate(args);  // throws on any bad argument; the shapes read below are then consistent
  const Tensor& state = *args.state;
  const Tensor& x = *args.x;
  const Tensor& dt = *args.dt;
  const Tensor& A = *args.A;
  const Tensor& B = *args.B;
  const Tensor& C = *args.C;
  const std::int64_t Bs = state.dim(0), Bt = x.dim(0), H = x.dim(1), P = x.dim(2);
  const std::int64_t G = B.dim(1), N = B.dim(2);
  const std::int64_t heads_per_group = H / G;

  Tensor out(DType::f64, {Bt, H, P});
  // Rows no batch entry selects keep their input values; new rows are stored unrounded.
  Tensor new_state(DType::f64, {Bs, H, P, N}, state.values());
  for (std::int64_t b = 0; b < Bt; ++b) {
    const std::int64_t sb =
        args.state_batch_indices != nullptr ? static_cast<std::int64_t>(args.state_batch_indices->at({b})) : b;
    // A padding entry writes a zero output row and leaves the state alone (out is already 0).
    if (sb < 0) continue;
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t g = h / heads_per_group;
      for (std::int64_t p = 0; p < P; ++p) {
        // The decode path has no dt_limit clamp (Mamba2.step never clamps).
        double dtp = dt.at({b, h, p}) + (args.dt_bias != nullptr ? args.dt_bias->at({h, p}) : 0.0);
        if (args.dt_softplus) dtp = softplus_thr20(dtp);
        const double xv = x.at({b, h, p});
        double y = 0.0;
        for (std::int64_t n = 0; n < N; ++n) {
          // Read from the input state, so the step does not depend on the order of batch entries.
          const double h_new =
              state.at({sb, h, p, n}) * std::exp(A.at({h, p, n}) * dtp) + dtp * B.at({b, g, n}) * xv;
          new_state.data()[new_state.offset({sb, h, p, n})] = h_new;
          y += h_new * C.at({b, g, n});
        }
        if (args.D != nullptr) y += args.D->at({h, p}) * xv;
        if (args.z != nullptr) {
          const double zv = args.z->at({b, h, p});
          y *= zv / (1.0 + std::exp(-zv));
        }
        out.data()[out.offset({b, h, p})] = y;
      }
    }
  }

  Outputs result;
  result.add("out", std::move(out));
  result.add("state", std::move(new_state));
  return result;
}

}  // namespace ssd
