// Named oracle outputs, each with the set of elements the contract defines.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/named_list.h"
#include "ssd/reference/tensor.h"

namespace ssd {

struct Output {
  std::string name;
  Tensor value;  // float64, the exact math
  // One byte per element, 1 = defined by the contract and compared. Empty = every element is
  // defined. Undefined elements: outputs at padding tokens (negative seq_idx), the entries above
  // the diagonal of a causal coupling.
  std::vector<std::uint8_t> defined;

  bool is_defined(std::int64_t flat) const {
    return defined.empty() || defined[static_cast<std::size_t>(flat)] != 0;
  }
};

class Outputs : public NamedList<Output> {
 public:
  Outputs() : NamedList("output") {}
  using NamedList::add;
  Output& add(std::string name, Tensor value, std::vector<std::uint8_t> defined = {}) {
    return add(Output{std::move(name), std::move(value), std::move(defined)});
  }
};

}  // namespace ssd
