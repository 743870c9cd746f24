// Where a case's inputs lie in memory (the problem string's layout= and +far, docs/problem-string.md
// §3.1): for each laid-out input, the buffer it is a view into, its offset and its strides in
// elements. A pure function of the problem; the values of every input are those of the contiguous
// layout, so the oracle and the golden files never see the layout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ssd/reference/dtype.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// What +far adds to the batch stride of every laid-out input (elements): row 1 starts past 2^31.
inline constexpr std::int64_t kFarStride = std::int64_t{1} << 31;

// One input as a view: element `offset` of its buffer, then `strides` (elements) per axis.
struct Placement {
  std::string role;
  std::string buffer;  // the buffer's name: "zxbcdt", or the role's own name under layout=strided
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::int64_t last() const;  // the largest element offset the view reaches, offset included
};

// One buffer that views lie in: `extent` elements of `dtype`; elements no view reaches are gaps.
struct LayoutBuffer {
  std::string name;
  DType dtype = DType::f32;
  std::int64_t extent = 0;
};

struct InputLayout {
  std::vector<LayoutBuffer> buffers;
  std::vector<Placement> placements;  // only the laid-out inputs: every other input is contiguous
  const Placement* find(std::string_view role) const;  // nullptr: a contiguous input
};

// The layout of a problem's inputs (empty for layout=contiguous). Under layout=zxbcdt the OpSpec's
// zxbcdt roles are views into one buffer [rows, 2HP + 2GN + H] (z at column 0, x at HP, B at 2HP,
// C at 2HP + GN, dt at 2HP + 2GN); under layout=strided every input that is not also an output
// has its own buffer, padded along its axes by amounts drawn from the seed. With +far the stride
// of axis 0 of every batch-major view is raised by kFarStride.
InputLayout input_layout(const Problem& p);

// The width of the zxbcdt buffer's rows: 2HP + 2GN + H.
std::int64_t zxbcdt_width(const Problem& p);

// Dense row-major strides of a shape, and whether strides are those (extent-1 axes may carry any).
std::vector<std::int64_t> contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const std::vector<std::int64_t>& strides);

// Why the problem's layout tokens cannot hold (called by invalid_reason), or nullopt.
std::optional<std::string> layout_reason(const Problem& p);

}  // namespace ssd
