// When a parallel loop is worth its cost (internal to ssd_reference).
#pragma once
#include <cstdint>

namespace ssd {

// OpenMP regions pay off only above about a million floating-point operations: below that the
// thread wake-up dominates, and on a loaded machine one descheduled worker stalls the region for
// a whole scheduler slice. Results never depend on this choice (each item is computed serially).
inline bool worth_parallel(std::int64_t items, std::int64_t operations_per_item) {
  return items > 1 && items * operations_per_item > 1000000;
}

}  // namespace ssd
