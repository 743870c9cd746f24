// How the wgmma scan (chunk_scan_wgmma.cu) shares a chunk's 64-row slabs between its block's two
// warpgroups, whole or in the halves of a split tile (chunk_scan_split.h), and the order of x's rows
// within a 16-token step. Plain C++ for either compiler, so the host tests replay the kernel's plan.
#pragma once
#include <cuda_runtime_api.h>  // __host__, __device__, __forceinline__ for either compiler

namespace ssd_gpu::chunk_scan_slabs {

constexpr int kSlabRows = 64;   // a warpgroup's rows: wgmma m64, one 16-row block per warp
constexpr int kWarpgroups = 2;  // of a 256-thread block

// A warpgroup's slabs, -1 for none. Slab s sums over tokens 0 .. 64 s + 63, s + 1 groups of 64, so a
// whole block's warpgroup w takes slabs w and R - 1 - w (R slabs; the second only where it is past the
// first kWarpgroups): with R = 4, 1 + 4 and 2 + 3 groups. Half h of a split tile runs whole-block
// warpgroup h's pair on two warpgroups at once: warpgroup 0 its second (longer) slab, 1 its first.
struct Slabs {
  int first, second;
};
__host__ __device__ __forceinline__ Slabs warpgroup_slabs(int warpgroup, int slabs, bool split, int half) {
  const auto whole = [slabs](int w) {
    Slabs s{w < slabs ? w : -1, slabs - 1 - w};
    if (s.second < kWarpgroups) s.second = -1;
    return s;
  };
  if (!split) return whole(warpgroup);
  const Slabs pair = whole(half);
  if (warpgroup == 0) return {pair.second >= 0 ? pair.second : pair.first, -1};
  return {pair.second >= 0 ? pair.first : -1, -1};
}

// The block's last slab (x rows past it are never read), -1 for none.
__host__ __device__ __forceinline__ int last_slab(int slabs, bool split, int half) {
  int last = -1;
  for (int w = 0; w < kWarpgroups; ++w) {
    const Slabs s = warpgroup_slabs(w, slabs, split, half);
    last = s.first > last ? s.first : last;
    last = s.second > last ? s.second : last;
  }
  return last;
}

// A warp's rows within its slab (warp wl of its warpgroup): its fragments' rows gid (0-7) are the
// slab's rows 8 wl .. 8 wl + 7, its rows gid + 8 the rows 32 + 8 wl .. 39 + 8 wl, an early and a
// late 8-row group. In the slab's diagonal group a row's coefficients end at its own 16-token step,
// and the tensor cores start a step once every warp has built its fragment; with 16 consecutive
// rows warp 3 builds all four steps whole, with these pairs no warp builds more than half a
// fragment past step 1, and the warpgroup's path through the diagonal is 3 steps' builds instead of
// 4 (diagonal_build_path below, replayed by the host tests). The late rows are the early ones plus
// a constant, so a thread's second row costs no register of its own.
constexpr int kLateOffset = kSlabRows / 2;
struct WarpRows {
  int early, late;  // the first row of each 8-row group, within the slab
};
__host__ __device__ __forceinline__ constexpr WarpRows warp_rows(int wl) {
  return {8 * wl, 8 * wl + kLateOffset};
}

// The diagonal group's build path in whole fragments: per step, the most any warp builds (1 for
// both row groups, 1/2 for one), summed over the slab's four steps.
__host__ __device__ inline constexpr double diagonal_build_path() {
  double path = 0;
  for (int step = 0; step < kSlabRows / 16; ++step) {
    double most = 0;
    for (int wl = 0; wl < 4; ++wl) {
      const WarpRows r = warp_rows(wl);
      const double built = 0.5 * ((step <= r.early / 16) + (step <= r.late / 16));
      most = built > most ? built : most;
    }
    path += most;
  }
  return path;
}

// The cb loads of a slab's steps (SCAN_CB_STEPS in chunk_scan_wgmma.cu): the slab's groups 0 ..
// slab - 1 come before its diagonal group `slab`, each of kStepsPerGroup 16-token steps, and step ks
// of group grp loads the next step's cb values. `loads`: every step but the diagonal group's last
// (the slab's last); `bounded`: whether that next step can lie in the diagonal group, whose tokens
// can pass the valid length: all of the diagonal group's, and the last step of group slab - 1. With
// `diagonal` and ks constants, only grp + 1 == slab is left for run time.
constexpr int kStepsPerGroup = kSlabRows / 16;
struct NextCb {
  bool loads, bounded;
};
__host__ __device__ __forceinline__ constexpr NextCb next_cb(int grp, int ks, int slab, bool diagonal) {
  return {!diagonal || ks < kStepsPerGroup - 1, diagonal || (ks == kStepsPerGroup - 1 && grp + 1 == slab)};
}

// Whether every decay exp(dA[i] - dA[k]) of a slab's diagonal group (k <= i, both among its valid
// rows) is a normal fp32 value as exp2f computes it, 2^((dA[i] - dA[k]) log2 e) >= 2^-125, given
// that dA is non-increasing there (SCAN_DIAGONAL_NORMAL_EXP): the smallest exponent is that from the
// slab's first valid row to its last, and fp32's subtraction and multiplication, being monotone,
// keep every other pair's computed exponent at least as large.
constexpr float kLog2eF = 1.4426950408889634f;
__host__ __device__ __forceinline__ bool diagonal_decays_normal(float dA_first, float dA_last) {
  return (dA_last - dA_first) * kLog2eF >= -125.0f;
}

// The k row of token t within its 16-token step: the order of the A fragments' k (chunk_scan_tc.cu),
// in which a lane's four tokens 4 u .. 4 u + 3 are its fragment's k 2 u, 2 u + 1, 8 + 2 u, 8 + 2 u + 1,
// so its cb values are one load per row. wgmma reads x's rows in k order, so token t is stored there.
__host__ __device__ __forceinline__ int k_row_of_token(int t) {
  const int u = (t & 15) >> 2, e = t & 3;
  return (t & ~15) + (e < 2 ? 2 * u + e : 8 + 2 * u + e - 2);
}

}  // namespace ssd_gpu::chunk_scan_slabs
