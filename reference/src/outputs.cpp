// Named output list.
#include "ssd/outputs.h"

#include "ssd/errors.h"

namespace ssd {

Output& Outputs::add(std::string name, Tensor value, std::vector<std::uint8_t> defined) {
  outputs_.push_back(Output{std::move(name), std::move(value), std::move(defined)});
  return outputs_.back();
}

bool Outputs::has(std::string_view name) const {
  for (const auto& o : outputs_)
    if (o.name == name) return true;
  return false;
}

const Output& Outputs::get(std::string_view name) const {
  for (const auto& o : outputs_)
    if (o.name == name) return o;
  throw ArgumentError("output", "no output named '" + std::string(name) + "'");
}

Output& Outputs::get(std::string_view name) {
  return const_cast<Output&>(static_cast<const Outputs*>(this)->get(name));
}

}  // namespace ssd
