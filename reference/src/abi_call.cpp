// Reading and writing kernel-ABI calls through the op's AbiBinding.
#include "ssd/reference/abi_call.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "ssd/reference/abi_views.h"
#include "ssd/reference/errors.h"

namespace ssd {

std::uint32_t AbiBinding::version_needed(const Problem& p) const {
  const OpSpec& spec = op_spec(p.op);
  Problem plain;
  plain.op = p.op;
  std::uint32_t needed = 1;
  for (const AbiTensorField& f : tensors) {
    if (f.since <= needed) continue;
    bool used = false;
    if (const InputRole* role = spec.input(f.role)) used = !role->present || role->present(p);
    else used = !spec.output(f.role).present || spec.output(f.role).present(p);
    if (used) needed = f.since;
  }
  for (const AbiScalarField& f : scalars)
    if (f.since > needed && f.get(p) != f.get(plain)) needed = f.since;
  // Strided input views: only a library that reads every view's strides is sent them.
  if (p.layout != Layout::contiguous) needed = std::max<std::uint32_t>(needed, kStridedViewsVersion);
  return needed;
}

AbiArgs::AbiArgs(Op op) : op_(op), binding_(&op_spec(op).abi), bytes_(binding_->args_size, 0) {}

AbiArgs::AbiArgs(Op op, const void* args) : AbiArgs(op) { std::memcpy(bytes_.data(), args, bytes_.size()); }

ssd_tensor AbiArgs::tensor(std::string_view role) const {
  ssd_tensor view{};
  if (const AbiTensorField* f = binding_->tensor(role)) std::memcpy(&view, bytes_.data() + f->offset, sizeof view);
  return view;
}

void AbiArgs::set_tensor(std::string_view role, const ssd_tensor& view) {
  const AbiTensorField* f = binding_->tensor(role);
  if (f == nullptr) throw ArgumentError(op_name(op_), std::string(role).c_str(), "the op has no such argument");
  std::memcpy(bytes_.data() + f->offset, &view, sizeof view);
}

double AbiArgs::scalar(const AbiScalarField& f) const {
  const std::uint8_t* at = bytes_.data() + f.offset;
  switch (f.type) {
    case AbiScalarField::Type::i32: { std::int32_t v; std::memcpy(&v, at, sizeof v); return v; }
    case AbiScalarField::Type::i64: { std::int64_t v; std::memcpy(&v, at, sizeof v); return static_cast<double>(v); }
    case AbiScalarField::Type::f64: { double v; std::memcpy(&v, at, sizeof v); return v; }
  }
  return 0;
}

void AbiArgs::set_scalar(const AbiScalarField& f, double value) {
  std::uint8_t* at = bytes_.data() + f.offset;
  switch (f.type) {
    case AbiScalarField::Type::i32: { const auto v = static_cast<std::int32_t>(value); std::memcpy(at, &v, sizeof v); break; }
    case AbiScalarField::Type::i64: { const auto v = static_cast<std::int64_t>(value); std::memcpy(at, &v, sizeof v); break; }
    case AbiScalarField::Type::f64: std::memcpy(at, &value, sizeof value); break;
  }
}

void AbiArgs::set_stream(void* stream) { std::memcpy(bytes_.data() + binding_->stream_offset, &stream, sizeof stream); }

void AbiArgs::set_scalars(const Problem& p) {
  for (const AbiScalarField& f : binding_->scalars) set_scalar(f, f.get(p));
}

namespace {

std::int64_t axis_of(const Tensor& t, int axis, std::string_view op, std::string_view role) {
  const int rank = t.rank();
  const int at = axis < 0 ? rank + axis : axis;
  if (at < 0 || at >= rank)
    throw ArgumentError(op, std::string(role).c_str(),
                        "rank " + std::to_string(rank) + " has no axis " + std::to_string(axis));
  return t.dim(at);
}

void set_size(Problem& p, std::string_view size, std::int64_t v) {
  static const std::map<std::string_view, std::int64_t Problem::*> fields = {
      {"b", &Problem::b}, {"s", &Problem::s}, {"h", &Problem::h}, {"p", &Problem::p}, {"g", &Problem::g},
      {"n", &Problem::n}, {"q", &Problem::q}, {"d", &Problem::d}, {"slots", &Problem::slots}};
  p.*fields.at(size) = v;
}

}  // namespace

DecodedCall decode_call(const AbiArgs& args) {
  const OpSpec& spec = op_spec(args.op());
  const std::string op(spec.name);
  DecodedCall call;
  Problem& p = call.problem;
  p.op = spec.op;
  for (const AbiTensorField& field : spec.abi.tensors) {
    if (spec.input(field.role) == nullptr) {  // an output: an optional one marks the problem by its presence alone
      if (field.mark && args.tensor(field.role).data != nullptr) field.mark(p, Tensor(DType::f64, {0}));
      continue;
    }
    const ssd_tensor view = args.tensor(field.role);
    if (view.data == nullptr) {
      const InputRole* role = spec.input(field.role);
      if (!role->present) throw ArgumentError(op, std::string(field.role).c_str(), "required input is missing");
      continue;
    }
    Tensor t = tensor_from_view(view, op.c_str(), std::string(field.role).c_str());
    if (field.mark) field.mark(p, t);
    call.inputs.put(std::string(field.role), std::move(t));
  }
  for (const AbiScalarField& f : spec.abi.scalars) f.set(p, args.scalar(f));
  std::vector<std::string_view> done;
  for (const SizeSource& source : spec.abi.sizes) {
    if (std::find(done.begin(), done.end(), source.size) != done.end()) continue;
    const Tensor* t = call.inputs.find(source.role);
    if (t == nullptr || (!source.only_with.empty() && call.inputs.find(source.only_with) == nullptr)) continue;
    set_size(p, source.size,
             axis_of(*t, source.axis, op, source.role) * (source.times_chunk ? p.q : 1) - (source.minus_one ? 1 : 0));
    done.push_back(source.size);
  }
  // Dtypes: the primary one from the first role that follows it, overrides where a tensor differs.
  for (const InputRole& role : spec.inputs)
    if (role.follows_primary && call.inputs.find(role.name)) {
      p.dtype = call.inputs.find(role.name)->dtype();
      break;
    }
  for (const InputRole& role : spec.inputs) {
    const Tensor* t = call.inputs.find(role.name);
    if (t == nullptr || !role.overridable) continue;
    if (t->dtype() != (role.follows_primary ? p.dtype : role.fixed)) p.dtypes[role.name] = t->dtype();
  }
  // `out=` overrides the dtype of the op's first output.
  if (spec.takes_flag("out") && !spec.outputs.empty()) {
    const ssd_tensor view = args.tensor(spec.outputs.front().name);
    if (view.data != nullptr && spec.outputs.front().dtype(p) != from_abi_dtype(view.dtype))
      p.dtypes["out"] = from_abi_dtype(view.dtype);
  }
  return call;
}

void write_outputs(const AbiArgs& args, const Outputs& outputs) {
  const std::string op(op_name(args.op()));
  for (const Output& out : outputs.all())
    write_view(args.tensor(out.name), out.value, op.c_str(), out.name.c_str());
}

}  // namespace ssd
