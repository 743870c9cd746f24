// One input buffer that strided views lie in (a case's layout, ssd/reference/layout.h): each
// view's elements hold its values, every other element (a gap) holds the dtype's poison, and the
// whole sits between guard bands. After the call a changed view element is "input modified" and a
// changed gap "wrote into a gap of NAME": inputs, gaps included, are read-only. Only the spans
// around the views are filled and checked; the stretches between them that +far leaves (2^31
// elements) are never touched, so host memory for them is never committed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ssd/harness/call_record.h"
#include "ssd/harness/memory_pool.h"
#include "ssd/kernel_abi.h"
#include "ssd/reference/layout.h"

namespace ssd {

class ViewBuffer {
 public:
  // `contents[i]` holds the dense values of `views[i]` (its shape, the buffer's dtype).
  ViewBuffer(MemoryPool& pool, const LayoutBuffer& buffer, std::vector<Placement> views,
             const std::vector<const RawTensor*>& contents);
  ~ViewBuffer();
  ViewBuffer(const ViewBuffer&) = delete;
  ViewBuffer& operator=(const ViewBuffer&) = delete;

  ssd_tensor view(const std::string& role) const;  // the descriptor of one view (data NULL if none)
  const std::vector<Placement>& views() const { return views_; }
  // Damaged guard bands, changed view elements and changed gaps, one line each.
  std::vector<std::string> damage() const;

  // A stretch of elements [begin, end) that is filled and checked, with the bytes uploaded to it.
  struct Span {
    std::int64_t begin = 0, end = 0;
    std::vector<std::uint8_t> image;
  };
  const std::vector<Span>& spans() const { return spans_; }

 private:
  std::uint8_t* element(std::int64_t at) const;  // the address of element `at` of the buffer
  void write(std::int64_t byte, const std::uint8_t* from, std::size_t count) const;  // into the table's memory
  void read(std::int64_t byte, std::uint8_t* into, std::size_t count) const;
  MemoryPool& pool_;
  LayoutBuffer buffer_;
  std::vector<Placement> views_;
  std::size_t width_;
  std::vector<Span> spans_;
  MemoryPool::Block block_;
};

// The spans of a buffer's views: the element range of every row along axis 0 of every view,
// merged where fewer than `merge` elements lie between them; sorted, disjoint.
std::vector<std::pair<std::int64_t, std::int64_t>> view_spans(const std::vector<Placement>& views, std::int64_t merge);

}  // namespace ssd
