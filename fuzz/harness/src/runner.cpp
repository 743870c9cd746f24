// Running one case through a kernel table in this process, guarded and poisoned.
#include "ssd/harness/runner.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "ssd/harness/case_checker.h"

namespace ssd {
namespace {

CallStatus status_of(ssd_status s) {
  switch (s) {
    case SSD_STATUS_OK: return CallStatus::ok;
    case SSD_STATUS_INVALID_ARGUMENT: return CallStatus::rejected;
    case SSD_STATUS_UNSUPPORTED: return CallStatus::unsupported;
    default: return CallStatus::error;
  }
}

std::string last_error(const ssd_kernel_table& t) {
  const char* message = t.last_error ? t.last_error() : nullptr;
  return message ? message : "(no message)";
}

// "input modified: x[0,1,2,3] (and 5 more of 96 elements)" when the call changed an input.
std::string input_change(const std::string& name, const AbiBuffer& buffer, const std::uint8_t* now) {
  const std::vector<std::uint8_t>& before = buffer.uploaded();
  if (std::memcmp(before.data(), now, before.size()) == 0) return {};
  const std::size_t width = dtype_bytes(buffer.dtype());
  const std::int64_t n = element_count(buffer.shape());
  std::int64_t first = -1, changed = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * width;
    if (std::memcmp(before.data() + at, now + at, width) != 0) {
      if (first < 0) first = i;
      ++changed;
    }
  }
  std::string s = "input modified: " + name + index_string(buffer.shape(), first);
  if (changed > 1) s += " (and " + std::to_string(changed - 1) + " more of " + std::to_string(n) + " elements)";
  return s + " changed by the call";
}

RawTensor* find_raw(std::vector<RawTensor>& inputs, std::string_view name) {
  auto it = std::find_if(inputs.begin(), inputs.end(), [&](const RawTensor& t) { return t.name == name; });
  return it == inputs.end() ? nullptr : &*it;
}

// +farslots: the far ids of the compact slots, and the slot tables rewritten to name them (a
// padding entry stays; an entry past the compact slots stays past the far ones). nullopt when
// the case does not lay its slots out far (no +farslots, or a problem outside the contract,
// which goes to the kernel as it is so that it can reject it).
std::optional<FarSlots> place_far_slots(const Problem& p, std::vector<RawTensor>& inputs) {
  if (!p.farslots || invalid_reason(p)) return std::nullopt;
  RawTensor* state = find_raw(inputs, "state");
  RawTensor* reads = find_raw(inputs, "state_batch_indices");
  RawTensor* writes = find_raw(inputs, "dst_state_batch_indices");
  if (!state || !reads || reads->dtype != DType::i32 || (writes && writes->dtype != DType::i32)) return std::nullopt;
  const Tensor read_table = decode(DType::i32, reads->shape, reads->bytes.data());
  const Tensor write_table = writes ? decode(DType::i32, writes->shape, writes->bytes.data()) : Tensor();
  FarSlots far = far_slots(p, read_table, writes ? &write_table : nullptr, dtype_bytes(state->dtype));
  for (RawTensor* t : {reads, writes}) {
    if (!t) continue;
    for (std::size_t at = 0; at + 4 <= t->bytes.size(); at += 4) {
      std::int32_t v;
      std::memcpy(&v, t->bytes.data() + at, 4);
      if (v >= 0) v = static_cast<std::int32_t>(v < p.slots ? far.id(v) : far.slots + (v - p.slots));
      std::memcpy(t->bytes.data() + at, &v, 4);
    }
  }
  return far;
}

}  // namespace

PreparedCall::PreparedCall(const KernelLibrary& library, const Problem& p, const InputSet& inputs, MemoryPool* pool)
    : PreparedCall(library, p, encode_inputs(inputs), pool) {}

PreparedCall::PreparedCall(const KernelLibrary& library, const Problem& p, std::vector<RawTensor> inputs, MemoryPool* pool)
    : table_(library.table()), problem_(p), args_(p.op) {
  if (pool == nullptr) {
    own_pool_ = std::make_unique<MemoryPool>(table_, 0);
    pool = own_pool_.get();
  }
  const OpSpec& spec = op_spec(p.op);
  std::optional<FarSlots> far = place_far_slots(p, inputs);
  const InputLayout layout = input_layout(p);
  for (const LayoutBuffer& buffer : layout.buffers) {
    std::vector<Placement> views;
    std::vector<const RawTensor*> contents;
    for (const Placement& v : layout.placements)
      if (v.buffer == buffer.name)
        if (auto it = std::find_if(inputs.begin(), inputs.end(), [&](const RawTensor& t) { return t.name == v.role; });
            it != inputs.end()) {
          views.push_back(v);
          contents.push_back(&*it);
          min_bytes_ += it->bytes.size();
        }
    if (views.empty()) continue;  // none of its views was given: nothing to allocate
    view_buffers_.push_back(std::make_unique<ViewBuffer>(*pool, buffer, std::move(views), contents));
  }
  for (RawTensor& t : inputs) {
    if (layout.find(t.name)) continue;  // a view in a ViewBuffer
    if (far && t.name == "state") {
      min_bytes_ += t.bytes.size() * 2;
      slots_ = std::make_unique<SlotBuffer>(*pool, t, *far);
      continue;
    }
    // A role that is also an output is a state updated in place: read and written.
    const bool in_place = spec.outputs.end() != std::find_if(spec.outputs.begin(), spec.outputs.end(),
                                                             [&](const OutputRole& r) { return r.name == t.name; });
    min_bytes_ += t.bytes.size() * (in_place ? 2 : 1);
    buffers_[t.name] = std::make_unique<AbiBuffer>(*pool, t.dtype, std::move(t.shape), std::move(t.bytes));
  }
  for (const auto& [name, shape] : output_shapes(p)) {
    if (buffers_.count(name)) continue;  // updated in place
    const DType dtype = spec.output(name).dtype(p);
    buffers_[name] = std::make_unique<AbiBuffer>(*pool, dtype, shape);
    min_bytes_ += static_cast<std::size_t>(element_count(shape)) * dtype_bytes(dtype);
  }
  for (const OutputRole& role : spec.outputs)
    if (buffers_.count(role.name) || (slots_ && role.name == "state")) outputs_.push_back(role.name);
  for (const AbiTensorField& field : spec.abi.tensors)
    if (auto it = buffers_.find(std::string(field.role)); it != buffers_.end()) args_.set_tensor(field.role, it->second->view());
  for (const auto& buffer : view_buffers_)
    for (const Placement& v : buffer->views()) args_.set_tensor(v.role, buffer->view(v.role));
  args_.set_scalars(p);
  if (slots_) {
    args_.set_tensor("state", slots_->view());
    // The padding slot, a real one, moves with the others; -1 (no padding slot) stays.
    if (p.pad >= 0 && p.pad < p.slots)
      for (const AbiScalarField& f : spec.abi.scalars)
        if (f.name == "pad_slot_id") args_.set_scalar(f, static_cast<double>(far->id(p.pad)));
  }
}

bool PreparedCall::is_output(const std::string& name) const {
  return std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

ssd_tensor PreparedCall::operator[](const std::string& name) const {
  if (slots_ && name == "state") return slots_->view();
  auto it = buffers_.find(name);
  if (it != buffers_.end()) return it->second->view();
  for (const auto& buffer : view_buffers_)
    if (ssd_tensor v = buffer->view(name); v.data != nullptr) return v;
  return ssd_tensor{};
}

ssd_status PreparedCall::invoke(void* stream) const {
  args_.set_stream(stream);
  return op_spec(problem_.op).abi.call(table_, args_.data());
}

Outputs PreparedCall::read() const {
  Outputs out;
  for (const std::string& name : outputs_) {
    if (slots_ && name == "state") {
      const RawTensor compact = slots_->read();
      out.add(name, decode(compact.dtype, compact.shape, compact.bytes.data()));
    } else {
      out.add(name, buffers_.at(name)->read());
    }
  }
  return out;
}

PreparedCall::Inspection PreparedCall::inspect() const {
  Inspection result;
  std::map<std::string, RawTensor> raw;
  std::vector<std::uint8_t> storage;
  for (const auto& [name, buffer] : buffers_) {
    const std::span<const std::uint8_t> image = buffer->snapshot(storage);
    for (std::string& d : buffer->guard_damage(image, name)) result.damage.push_back(std::move(d));
    const std::uint8_t* contents = buffer->contents(image);
    if (is_output(name)) {
      raw[name] = RawTensor{name, buffer->dtype(), buffer->shape(),
                            std::vector<std::uint8_t>(contents, contents + buffer->bytes())};
    } else if (std::string change = input_change(name, *buffer, contents); !change.empty()) {
      result.damage.push_back(std::move(change));
    }
  }
  for (const auto& buffer : view_buffers_)
    for (std::string& d : buffer->damage()) result.damage.push_back(std::move(d));
  if (slots_) {
    raw["state"] = slots_->read();
    for (std::string& d : slots_->damage()) result.damage.push_back(std::move(d));
  }
  for (const std::string& name : outputs_) result.outputs.push_back(std::move(raw.at(name)));
  return result;
}

CallRecord record_call(const KernelLibrary& library, const Problem& p, const InputSet& inputs, MemoryPool* pool) {
  return record_call(library, p, encode_inputs(inputs), pool);
}

CallRecord record_call(const KernelLibrary& library, const Problem& p, std::vector<RawTensor> inputs, MemoryPool* pool) {
  CallRecord r;
  if (auto why = library.cannot_run(p)) {
    r.status = CallStatus::not_implemented;
    r.message = *why;
    return r;
  }
  const ssd_kernel_table& t = library.table();
  const PreparedCall call(library, p, std::move(inputs), pool);
  const ssd_status status = call.invoke();
  r.status = status_of(status);
  if (status != SSD_STATUS_OK) r.message = last_error(t);  // before anything else can overwrite it
  // Wait for the kernel's work whatever it returned: it may have launched work before failing,
  // and the buffers are inspected next.
  if (t.device_synchronize && t.device_synchronize() != SSD_STATUS_OK) {
    if (r.status == CallStatus::ok) r.message = last_error(t);
    r.status = CallStatus::error;
  }
  r.device_error = t.memory_kind != SSD_MEMORY_HOST && r.status == CallStatus::error;
  if (r.device_error) return r;  // the device cannot be read after a sticky error
  PreparedCall::Inspection seen = call.inspect();
  r.damage = std::move(seen.damage);
  if (r.status == CallStatus::ok) r.outputs = std::move(seen.outputs);
  return r;
}

KernelRun run_kernel(const KernelLibrary& library, const Problem& problem, const InputSet& inputs) {
  CallRecord r = record_call(library, problem, inputs);
  KernelRun run;
  run.status = r.status;
  run.message = std::move(r.message);
  if (r.status == CallStatus::ok) run.outputs = decode_outputs(r.outputs);
  return run;
}

CaseJudgement check_case(const KernelLibrary& library, const Problem& problem) {
  return CaseChecker(library, CheckOptions{Isolation::none, std::nullopt}).check(problem);
}

}  // namespace ssd
