// The decode step on the slots its tables name: gathered from a huge state, run, scattered back.
#include "named_slots.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ssd/reference/abi_views.h"
#include "ssd/reference/errors.h"

namespace ssd {
namespace {

constexpr std::int64_t kHugeState = std::int64_t{1} << 31;

const AbiScalarField& pad_field() {
  for (const AbiScalarField& f : op_spec(Op::recurrent).abi.scalars)
    if (f.name == "pad_slot_id") return f;
  throw std::logic_error("recurrent has no pad_slot_id field");
}

std::int64_t numel(const ssd_tensor& t) {
  std::int64_t n = 1;
  for (int axis = 0; axis < t.rank; ++axis) n *= t.shape[axis];
  return n;
}

// A dense i32 copy of a table and the view of it.
struct Table {
  std::string name;
  ssd_tensor view{};
  std::vector<std::int32_t> entries;
};

}  // namespace

bool holds_far_slots(const AbiArgs& call) {
  const ssd_tensor state = call.tensor("state");
  return call.op() == Op::recurrent && state.data != nullptr && state.rank == 4 && numel(state) >= kHugeState;
}

void on_named_slots(const AbiArgs& call, Flaw flaw, const std::function<void(AbiArgs&)>& body) {
  const ssd_tensor state = call.tensor("state");
  const std::int64_t slots = state.shape[0], stride = state.shape[1] * state.shape[2] * state.shape[3];
  if (state.strides[3] != 1 || state.strides[2] != state.shape[3] || state.strides[1] != state.shape[2] * state.shape[3] ||
      state.strides[0] != stride)
    throw ArgumentError("recurrent", "state", "output strides are not contiguous row-major");
  const std::size_t width = dtype_bytes(from_abi_dtype(state.dtype));
  std::vector<Table> tables;
  for (const char* name : {"state_batch_indices", "dst_state_batch_indices"}) {
    const ssd_tensor v = call.tensor(name);
    if (v.data == nullptr) continue;
    const Tensor t = tensor_from_view(v, "recurrent", name);
    if (t.dtype() != DType::i32) throw ArgumentError("recurrent", name, "must be i32");
    Table table{name, v, {}};
    for (std::int64_t i = 0; i < t.numel(); ++i) table.entries.push_back(static_cast<std::int32_t>(t[i]));
    tables.push_back(std::move(table));
  }
  if (tables.empty() || tables.front().name != "state_batch_indices")
    throw ArgumentError("recurrent", "state_batch_indices",
                        "a state of " + std::to_string(slots) + " slots (2^31 elements or more) needs the slot tables");
  const auto pad = static_cast<std::int64_t>(call.scalar(pad_field()));
  // The named slots: every entry that is a slot (padding entries equal to pad are the padding
  // slot, a real one), and the padding slot itself.
  std::vector<std::int64_t> ids;
  if (pad >= 0 && pad < slots) ids.push_back(pad);
  for (const Table& t : tables)
    for (std::size_t i = 0; i < t.entries.size(); ++i) {
      const std::int64_t slot = t.entries[i];
      if (slot < 0 || slot == pad) continue;  // padding (a padding slot that is real is in already)
      if (slot >= slots)
        throw ArgumentError("recurrent", t.name.c_str(),
                            "entry " + std::to_string(i) + " = " + std::to_string(slot) + " is out of range for " +
                                std::to_string(slots) + " state slots");
      ids.push_back(slot);
    }
  // A call of padding rows only names no slot; the step still takes a state of one slot, read
  // from id 0 and never stored back (it may be poison, whose NaN payload a round trip through the
  // emulation's doubles does not keep).
  const bool placeholder = ids.empty();
  if (placeholder) ids.push_back(0);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto compact = [&](std::int64_t slot) {
    return slot < 0 ? slot : std::lower_bound(ids.begin(), ids.end(), slot) - ids.begin();
  };
  // slot_offset_uint32: id * stride in 32 unsigned bits, as `cache_index * state_batch_stride`
  // was before vLLM #35275; the in-slot part is added in 64 bits.
  auto offset = [&](std::int64_t id) {
    if (flaw == Flaw::slot_offset_uint32)
      return static_cast<std::int64_t>(static_cast<std::uint32_t>(id) * static_cast<std::uint32_t>(stride));
    return id * stride;
  };
  const std::size_t slot_bytes = static_cast<std::size_t>(stride) * width;
  auto* base = static_cast<std::uint8_t*>(state.data);
  std::vector<std::uint8_t> held(ids.size() * slot_bytes);
  for (std::size_t k = 0; k < ids.size(); ++k)
    std::memcpy(held.data() + k * slot_bytes, base + offset(ids[k]) * static_cast<std::int64_t>(width), slot_bytes);

  AbiArgs run = call;
  ssd_tensor compact_state = state;
  compact_state.data = held.data();
  compact_state.shape[0] = static_cast<std::int64_t>(ids.size());
  run.set_tensor("state", compact_state);
  for (Table& t : tables) {
    for (std::int32_t& e : t.entries)
      if (e != pad || pad < slots) e = static_cast<std::int32_t>(compact(e));  // a padding id past the slots stays
    ssd_tensor v = t.view;
    v.data = t.entries.data();
    std::int64_t s = 1;
    for (int axis = v.rank - 1; axis >= 0; --axis) {
      v.strides[axis] = s;
      s *= v.shape[axis];
    }
    run.set_tensor(t.name, v);
  }
  if (pad >= 0 && pad < slots) run.set_scalar(pad_field(), static_cast<double>(compact(pad)));
  body(run);
  if (placeholder) return;
  for (std::size_t k = 0; k < ids.size(); ++k)
    std::memcpy(base + offset(ids[k]) * static_cast<std::int64_t>(width), held.data() + k * slot_bytes, slot_bytes);
}

}  // namespace ssd
