// SSDChunkCouplingFwd's ABI entry point: the argument checks, then the parameter block for
// launch_chunk_coupling (chunk_coupling.cu), with the dtype the dot operands are rounded to.
#include "api/entry_points.h"
#include "host.h"
#include "params.h"

namespace ssd_gpu {

ssd_status chunk_coupling(const ssd_chunk_coupling_args* args) {
  return guarded("chunk_coupling", args, [&] {
    const ssd_chunk_coupling_args& a = *args;
    const Check k{"chunk_coupling"};
    k.float_input("C", a.C);
    const Shape s = k.extents("C", a.C, 4, "[Bt,S,G,N]");
    const int64_t Bt = s[0], S = s[1], G = s[2], N = s[3];
    k.float_input("B", a.B);
    k.shape("B", a.B, s, "[Bt,S,G,N] (the shape of C)");
    k.positive("chunk_size", a.chunk_size);
    const int64_t Q = a.chunk_size, NC = ceil_div(S, Q);
    if (present(a.seq_idx)) k.seq_idx(a.seq_idx, Bt, S);
    k.output("CB", a.CB, {Bt, NC, G, Q, Q}, "[Bt,NC,G,Q,Q]", {SSD_DTYPE_F32, SSD_DTYPE_F16, SSD_DTYPE_BF16},
             "a floating-point dtype (f32, f16, bf16)");
    k.contiguous({{"C", &a.C}, {"B", &a.B}, {"seq_idx", &a.seq_idx}, {"CB", &a.CB}});

    CouplingParams p{};
    p.C = in(a.C);
    p.B = in(a.B);
    p.seq_idx = ids(a.seq_idx);
    p.CB = out(a.CB);
    fill_dims(p, TokenDims{Bt, S, 0, 0, G, N}, Q);  // C, B [Bt,S,G,N]: no H, P
    p.causal = a.causal != 0;
    // Upstream's dot dtype: bf16 if either operand is bf16, else f16 if either is f16, else f32.
    const bool any_bf16 = a.C.dtype == SSD_DTYPE_BF16 || a.B.dtype == SSD_DTYPE_BF16;
    const bool any_f16 = a.C.dtype == SSD_DTYPE_F16 || a.B.dtype == SSD_DTYPE_F16;
    // Operands of one dtype are already representable in it: nothing to round.
    p.operand_dtype = a.C.dtype == a.B.dtype ? -1 : (any_bf16 ? SSD_DTYPE_BF16 : (any_f16 ? SSD_DTYPE_F16 : -1));
    launch_chunk_coupling("chunk_coupling", p, stream_of(a.stream));
  });
}

}  // namespace ssd_gpu
