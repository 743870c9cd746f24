// What the runner tests share: the planted libraries by flaw, and small cases of the ops they
// misbehave in (chunk_cumsum for the crashes, exits and hangs) and of ops that stay honest.
#pragma once
#include <string>

#include "ssd/harness/kernel_library.h"
#include "ssd/reference/problem.h"

namespace planted_cases {

inline ssd::KernelLibrary planted(const std::string& flaw) {
  return ssd::KernelLibrary::open(std::string(SSD_PLANTED_DIR) + "/libssd-planted-" + flaw + ".so");
}

// S = 37 is not a multiple of Q = 16: the last chunk has a padded tail.
inline const ssd::Problem kCumsum = ssd::parse_problem("chunk_cumsum:f32 b2 s37 h3 q16 seed=48");
inline const ssd::Problem kCumsumWhole = ssd::parse_problem("chunk_cumsum:f32 b2 s32 h3 q16 seed=48");
inline const ssd::Problem kCausal = ssd::parse_problem("chunk_coupling:f32 b2 s37 g2 n8 q16 +causal seed=81");
inline const ssd::Problem kCoupling = ssd::parse_problem("chunk_coupling:f32 b2 s37 g2 n8 q16 seed=80");
inline const ssd::Problem kState = ssd::parse_problem("chunk_state:f32 b2 s37 h4 p4 g2 n8 q16 seed=108");
inline const ssd::Problem kPassing = ssd::parse_problem("state_passing:f32 b2 s37 q16 h4 d8 seed=130");
inline const ssd::Problem kPassingBf16 = ssd::parse_problem("state_passing:bf16 b2 s37 q16 h4 d8 seed=130");

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace planted_cases
