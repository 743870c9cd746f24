// Input buffers of strided views: spans filled with values and poison, checked after the call.
#include "ssd/harness/view_buffer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ssd/harness/poison.h"
#include "ssd/reference/abi_views.h"

namespace ssd {
namespace {

// Stretches of untouched elements shorter than this are filled and checked with the views around them.
constexpr std::int64_t kMergeElements = std::int64_t{1} << 20;

std::string table_error(const ssd_kernel_table& t) { return t.last_error ? t.last_error() : "(no message)"; }

// Calls f(flat, position) for every element of the view, row-major.
template <class F>
void for_each_element(const Placement& v, F f) {
  const std::int64_t count = element_count(v.shape);
  std::vector<std::int64_t> index(v.shape.size(), 0);
  std::int64_t at = v.offset;
  for (std::int64_t e = 0; e < count; ++e) {
    f(e, at);
    for (std::size_t axis = v.shape.size(); axis-- > 0;) {
      at += v.strides[axis];
      if (++index[axis] < v.shape[axis]) break;
      at -= v.strides[axis] * v.shape[axis];
      index[axis] = 0;
    }
  }
}

// The lowest and highest offsets the axes after the first add to an element.
std::pair<std::int64_t, std::int64_t> inner_reach(const Placement& v) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t axis = 1; axis < v.shape.size(); ++axis) {
    const std::int64_t span = (v.shape[axis] - 1) * v.strides[axis];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> view_spans(const std::vector<Placement>& views, std::int64_t merge) {
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;
  for (const Placement& v : views) {
    if (element_count(v.shape) == 0) continue;
    if (v.shape.empty()) {
      rows.emplace_back(v.offset, v.offset + 1);
      continue;
    }
    const auto [lo, hi] = inner_reach(v);
    for (std::int64_t i = 0; i < v.shape[0]; ++i) {
      const std::int64_t base = v.offset + i * v.strides[0];
      rows.emplace_back(base + lo, base + hi + 1);
    }
  }
  std::sort(rows.begin(), rows.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const auto& r : rows) {
    if (!spans.empty() && r.first - spans.back().second < merge) spans.back().second = std::max(spans.back().second, r.second);
    else spans.push_back(r);
  }
  return spans;
}

ViewBuffer::ViewBuffer(MemoryPool& pool, const LayoutBuffer& buffer, std::vector<Placement> views,
                       const std::vector<const RawTensor*>& contents)
    : pool_(pool), buffer_(buffer), views_(std::move(views)), width_(dtype_bytes(buffer.dtype)) {
  if (contents.size() != views_.size()) throw std::runtime_error("ViewBuffer: one content per view");
  for (std::size_t i = 0; i < views_.size(); ++i)
    if (contents[i]->shape != views_[i].shape || contents[i]->dtype != buffer_.dtype)
      throw std::runtime_error("input " + views_[i].role + " " + std::string(dtype_name(contents[i]->dtype)) + " " +
                               shape_string(contents[i]->shape) + " does not fit its view " +
                               std::string(dtype_name(buffer_.dtype)) + " " + shape_string(views_[i].shape) + " of " +
                               buffer_.name);
  for (auto [begin, end] : view_spans(views_, kMergeElements)) spans_.push_back(Span{begin, end, {}});
  if (!spans_.empty() && spans_.front().begin < kMergeElements) spans_.front().begin = 0;
  if (!spans_.empty() && buffer_.extent - spans_.back().end < kMergeElements) spans_.back().end = buffer_.extent;
  // Each span's image: poison, then every view element it holds.
  for (Span& s : spans_) {
    s.image.resize(static_cast<std::size_t>(s.end - s.begin) * width_);
    fill_poison(buffer_.dtype, s.image);
  }
  for (std::size_t i = 0; i < views_.size(); ++i) {
    const std::uint8_t* values = contents[i]->bytes.data();
    // A stride-0 axis puts several elements at one place: they must agree, or the view would
    // hold a value other than the input's (the last one written).
    const bool expanded = std::find(views_[i].strides.begin(), views_[i].strides.end(), 0) != views_[i].strides.end();
    std::vector<std::vector<bool>> seen(expanded ? spans_.size() : 0);
    auto span = spans_.begin();
    for_each_element(views_[i], [&](std::int64_t e, std::int64_t at) {
      if (at < span->begin || at >= span->end)
        span = std::upper_bound(spans_.begin(), spans_.end(), at, [](std::int64_t a, const Span& s) { return a < s.end; });
      std::uint8_t* to = span->image.data() + static_cast<std::size_t>(at - span->begin) * width_;
      const std::uint8_t* from = values + static_cast<std::size_t>(e) * width_;
      if (expanded) {
        std::vector<bool>& here = seen[static_cast<std::size_t>(span - spans_.begin())];
        here.resize(static_cast<std::size_t>(span->end - span->begin));
        const auto k = static_cast<std::size_t>(at - span->begin);
        if (here[k] && std::memcmp(to, from, width_) != 0)
          throw std::runtime_error("input " + views_[i].role + " is not constant along the stride-0 axes of its view (element " +
                                   index_string(views_[i].shape, e) + " differs from the one before it at element " +
                                   std::to_string(at) + " of " + buffer_.name + ")");
        here[k] = true;
      }
      std::memcpy(to, from, width_);
    });
  }
  block_ = pool_.acquire(kGuardBytes + static_cast<std::size_t>(buffer_.extent) * width_ + kGuardBytes);
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  write(0, band.data(), band.size());
  write(static_cast<std::int64_t>(kGuardBytes) + buffer_.extent * static_cast<std::int64_t>(width_), band.data(), band.size());
  for (const Span& s : spans_)
    write(static_cast<std::int64_t>(kGuardBytes) + s.begin * static_cast<std::int64_t>(width_), s.image.data(), s.image.size());
}

ViewBuffer::~ViewBuffer() { pool_.release(block_); }

std::uint8_t* ViewBuffer::element(std::int64_t at) const {
  return static_cast<std::uint8_t*>(block_.data) + kGuardBytes + at * static_cast<std::int64_t>(width_);
}

void ViewBuffer::write(std::int64_t byte, const std::uint8_t* from, std::size_t count) const {
  std::uint8_t* to = static_cast<std::uint8_t*>(block_.data) + byte;
  if (!pool_.device()) {
    std::memcpy(to, from, count);
  } else if (pool_.table().device_copy(to, from, count, 0) != SSD_STATUS_OK) {
    throw std::runtime_error("copy to device failed: " + table_error(pool_.table()));
  }
}

void ViewBuffer::read(std::int64_t byte, std::uint8_t* into, std::size_t count) const {
  const std::uint8_t* from = static_cast<const std::uint8_t*>(block_.data) + byte;
  if (!pool_.device()) {
    std::memcpy(into, from, count);
  } else if (pool_.table().device_copy(into, from, count, 1) != SSD_STATUS_OK) {
    throw std::runtime_error("copy to host failed: " + table_error(pool_.table()));
  }
}

ssd_tensor ViewBuffer::view(const std::string& role) const {
  ssd_tensor t{};
  for (const Placement& v : views_) {
    if (v.role != role) continue;
    t.data = element(v.offset);
    t.dtype = abi_dtype(buffer_.dtype);
    t.rank = static_cast<std::int32_t>(v.shape.size());
    for (std::size_t axis = 0; axis < v.shape.size(); ++axis) {
      t.shape[axis] = v.shape[axis];
      t.strides[axis] = v.strides[axis];
    }
  }
  return t;
}

std::vector<std::string> ViewBuffer::damage() const {
  std::vector<std::string> found;
  std::vector<std::uint8_t> band(kGuardBytes);
  read(0, band.data(), band.size());
  if (const GuardCheck c = check_guard(band); !c.intact())
    found.push_back("wrote before the start of " + buffer_.name + " (" + std::to_string(c.changed) + " of " +
                    std::to_string(kGuardBytes) + " guard bytes changed)");
  read(static_cast<std::int64_t>(kGuardBytes) + buffer_.extent * static_cast<std::int64_t>(width_), band.data(), band.size());
  if (const GuardCheck c = check_guard(band); !c.intact())
    found.push_back("wrote past the end of " + buffer_.name + " (" + std::to_string(c.changed) + " of " +
                    std::to_string(kGuardBytes) + " guard bytes changed, the first at byte +" + std::to_string(c.first) + ")");
  for (const Span& s : spans_) {
    std::vector<std::uint8_t> now(s.image.size());
    read(static_cast<std::int64_t>(kGuardBytes) + s.begin * static_cast<std::int64_t>(width_), now.data(), now.size());
    if (std::memcmp(now.data(), s.image.data(), now.size()) == 0) continue;
    auto changed = [&](std::int64_t at) {
      const std::size_t byte = static_cast<std::size_t>(at - s.begin) * width_;
      return std::memcmp(now.data() + byte, s.image.data() + byte, width_) != 0;
    };
    // Changed view elements, per view; the rest of the changes lie in gaps.
    std::vector<bool> covered(static_cast<std::size_t>(s.end - s.begin), false);
    for (const Placement& v : views_) {
      std::int64_t first = -1, count = 0;
      for_each_element(v, [&](std::int64_t e, std::int64_t at) {
        if (at < s.begin || at >= s.end) return;
        covered[static_cast<std::size_t>(at - s.begin)] = true;
        if (!changed(at)) return;
        if (first < 0) first = e;
        ++count;
      });
      if (count == 0) continue;
      std::string line = "input modified: " + v.role + index_string(v.shape, first);
      if (count > 1) line += " (and " + std::to_string(count - 1) + " more of " + std::to_string(element_count(v.shape)) + " elements)";
      found.push_back(line + " changed by the call");
    }
    std::int64_t first_gap = -1, gaps = 0;
    for (std::int64_t at = s.begin; at < s.end; ++at)
      if (!covered[static_cast<std::size_t>(at - s.begin)] && changed(at)) {
        if (first_gap < 0) first_gap = at;
        ++gaps;
      }
    if (gaps > 0)
      found.push_back("wrote into a gap of " + buffer_.name + " (" + std::to_string(gaps) +
                      " poisoned elements between its views changed, the first at element " + std::to_string(first_gap) +
                      " of " + std::to_string(buffer_.extent) + ")");
  }
  return found;
}

}  // namespace ssd
