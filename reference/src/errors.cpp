// ArgumentError message formatting.
#include "ssd/errors.h"

namespace ssd {

ArgumentError::ArgumentError(std::string_view argument, const std::string& problem)
    : std::invalid_argument("argument '" + std::string(argument) + "': " + problem),
      argument_(argument) {}

ArgumentError::ArgumentError(std::string_view op, std::string_view argument, const std::string& problem)
    : std::invalid_argument(std::string(op) + ": argument '" + std::string(argument) + "': " + problem),
      argument_(argument) {}

}  // namespace ssd
