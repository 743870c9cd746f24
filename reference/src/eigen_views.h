// Eigen views of row-major tensor slices (internal to ssd_reference): a token range of one
// head or group is a strided matrix, so chunk math runs as matrix products without copies.
#pragma once
#include <Eigen/Core>
#include <cstdint>

namespace ssd {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstStridedView = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;
using StridedView = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;

// rows x cols starting at `data`, consecutive rows `row_stride` elements apart.
inline ConstStridedView strided(const double* data, std::int64_t rows, std::int64_t cols, std::int64_t row_stride) {
  return ConstStridedView(data, rows, cols, Eigen::OuterStride<>(row_stride));
}
inline StridedView strided(double* data, std::int64_t rows, std::int64_t cols, std::int64_t row_stride) {
  return StridedView(data, rows, cols, Eigen::OuterStride<>(row_stride));
}

}  // namespace ssd
