// ArgumentError message formatting.
#include "ssd/reference/errors.h"

namespace ssd {

namespace {

// Appends instead of `"literal" + std::string`: GCC 12 warns falsely (-Wrestrict) on the latter.
std::string message(std::string_view op, std::string_view argument, const std::string& problem) {
  std::string m;
  if (!op.empty()) m.append(op).append(": ");
  m.append("argument '").append(argument).append("': ").append(problem);
  return m;
}

}  // namespace

ArgumentError::ArgumentError(std::string_view argument, const std::string& problem)
    : std::invalid_argument(message({}, argument, problem)), argument_(argument) {}

ArgumentError::ArgumentError(std::string_view op, std::string_view argument, const std::string& problem)
    : std::invalid_argument(message(op, argument, problem)), argument_(argument) {}

}  // namespace ssd
