// The per-element error bounds of a case's outputs (how they are built: ssd/reference/tolerance.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ssd/reference/named_list.h"
#include "ssd/reference/tensor.h"

namespace ssd {

struct OutputBound {
  std::string name;
  Tensor bound;                     // float64, same shape as the output
  std::vector<std::uint8_t> exact;  // 1 = must match the oracle exactly; empty = none
  std::int64_t reduction_length = 1;  // n of phi(n): the longest reduction feeding the output
  // Per element, the scale of an honest kernel's random-walk error (the bound's terms in quadrature,
  // without its safety factors; ssd/reference/suspicion.h). Empty when the bounds came without it
  // (an older case file): then the output gets no statistical verdict.
  Tensor sigma;
  bool is_exact(std::int64_t flat) const { return !exact.empty() && exact[static_cast<std::size_t>(flat)] != 0; }
};

class Bounds : public NamedList<OutputBound> {
 public:
  Bounds() : NamedList("bound") {}
};

}  // namespace ssd
