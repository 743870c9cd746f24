// The fp32 emulation behind the kernel ABI: each entry decodes the host views into tensors,
// rebuilds the Problem the arguments describe, runs ssd::emulate and writes the outputs back.
#include "ssd/emulation_table.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "ssd/abi_tensors.h"
#include "ssd/errors.h"

namespace ssd {
namespace {

thread_local std::string last_error_message;
const char* last_error() { return last_error_message.c_str(); }

// The tensors of one call, by contract name (absent views are skipped).
struct Decoded {
  const char* op;
  InputSet inputs;
  void add(const char* name, const ssd_tensor& view) {
    if (view.data != nullptr) inputs.put(name, tensor_from_view(view, op, name));
  }
  const Tensor& need(const char* name) const {
    if (const Tensor* t = inputs.find(name)) return *t;
    throw ArgumentError(op, name, "required input is missing");
  }
};

// Fills p.dtype and per-role overrides from the tensors' dtypes, and sets flags by presence.
void describe_inputs(Problem& p, const InputSet& in) {
  const OpSpec& spec = op_spec(p.op);
  for (const auto& role : spec.inputs)
    if (role.follows_primary && in.find(role.name)) {
      p.dtype = in.find(role.name)->dtype();
      break;
    }
  if (const Tensor* seq = in.find("seq_idx")) {
    (void)seq;
    p.seq.kind = SeqSpec::Kind::random;  // marks presence; values come from the tensor
  }
  p.dt_bias = in.find("dt_bias") != nullptr;
  p.z = in.find("z") != nullptr;
  p.init = in.find("initial_states") != nullptr;
  p.sbi = in.find("state_batch_indices") != nullptr;
  if (const Tensor* D = in.find("D")) p.D = D->rank() == 1 && p.op != Op::recurrent ? DMode::per_head : DMode::per_head_dim;
  for (const auto& role : spec.inputs) {
    const Tensor* t = in.find(role.name);
    if (t == nullptr || !role.overridable) continue;
    const DType usual = role.follows_primary ? p.dtype : role.fixed;
    if (t->dtype() != usual) p.dtypes[role.name] = t->dtype();
  }
}

void set_limit(Problem& p, double lo, double hi) {
  if (lo != DtLimit{}.lo || hi != DtLimit{}.hi) p.dt_limit = DtLimit{lo, hi};
}

// Declares the caller's output dtype as the problem's "out" override where the op takes one.
void describe_output_dtype(Problem& p, const char* output, const ssd_tensor& view) {
  if (!op_spec(p.op).takes_flag("out") || view.data == nullptr) return;
  const DType wanted = from_abi_dtype(view.dtype);
  if (op_spec(p.op).output(output).dtype(p) != wanted) p.dtypes["out"] = wanted;
}

void write_outputs(const Outputs& out, const char* op, std::initializer_list<std::pair<const char*, ssd_tensor>> views) {
  for (const auto& [name, view] : views)
    if (out.has(name)) write_view(view, out.get(name).value, op, name);
}

// Runs `body`, turning every rejection into an ABI status with the message kept for last_error.
template <class Body>
ssd_status guarded(Body&& body) {
  try {
    body();
    return SSD_STATUS_OK;
  } catch (const ArgumentError& e) {
    last_error_message = e.what();
    return SSD_STATUS_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    last_error_message = e.what();
    return SSD_STATUS_RUNTIME_ERROR;
  }
}

ssd_status run(const EmulationOptions& o, const ssd_mamba2_args* a) {
  return guarded([&] {
    Decoded d{"mamba2", {}};
    for (auto [n, v] : {std::pair{"x", a->x}, {"dt", a->dt}, {"A", a->A}, {"B", a->B}, {"C", a->C}, {"D", a->D},
                        {"z", a->z}, {"dt_bias", a->dt_bias}, {"initial_states", a->initial_states}, {"seq_idx", a->seq_idx}})
      d.add(n, v);
    Problem p;
    p.op = Op::mamba2;
    const Tensor& x = d.need("x");
    const Tensor& B = d.need("B");
    p.b = x.dim(0), p.s = x.dim(1), p.h = x.dim(2), p.p = x.dim(3), p.g = B.dim(2), p.n = B.dim(3), p.q = a->chunk_size;
    p.softplus = a->dt_softplus != 0;
    set_limit(p, a->dt_limit_lo, a->dt_limit_hi);
    describe_inputs(p, d.inputs);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"out", a->out}, {"final_states", a->final_states}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_chunk_cumsum_args* a) {
  return guarded([&] {
    Decoded d{"chunk_cumsum", {}};
    for (auto [n, v] : {std::pair{"dt", a->dt}, {"A", a->A}, {"dt_bias", a->dt_bias}}) d.add(n, v);
    Problem p;
    p.op = Op::chunk_cumsum;
    const Tensor& dt = d.need("dt");
    p.b = dt.dim(0), p.s = dt.dim(1), p.h = dt.dim(2), p.q = a->chunk_size;
    p.softplus = a->dt_softplus != 0;
    set_limit(p, a->dt_limit_lo, a->dt_limit_hi);
    describe_inputs(p, d.inputs);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"dA_cumsum", a->dA_cumsum}, {"dt_out", a->dt_out}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_chunk_coupling_args* a) {
  return guarded([&] {
    Decoded d{"chunk_coupling", {}};
    for (auto [n, v] : {std::pair{"C", a->C}, {"B", a->B}, {"seq_idx", a->seq_idx}}) d.add(n, v);
    Problem p;
    p.op = Op::chunk_coupling;
    const Tensor& C = d.need("C");
    p.b = C.dim(0), p.s = C.dim(1), p.g = C.dim(2), p.n = C.dim(3), p.q = a->chunk_size;
    p.causal = a->causal != 0;
    describe_inputs(p, d.inputs);
    describe_output_dtype(p, "CB", a->CB);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"CB", a->CB}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_chunk_state_args* a) {
  return guarded([&] {
    Decoded d{"chunk_state", {}};
    for (auto [n, v] : {std::pair{"B", a->B}, {"x", a->x}, {"dt", a->dt}, {"dA_cumsum", a->dA_cumsum}, {"seq_idx", a->seq_idx}})
      d.add(n, v);
    Problem p;
    p.op = Op::chunk_state;
    const Tensor& x = d.need("x");
    const Tensor& B = d.need("B");
    p.b = x.dim(0), p.s = x.dim(1), p.h = x.dim(2), p.p = x.dim(3), p.g = B.dim(2), p.n = B.dim(3), p.q = d.need("dt").dim(-1);
    describe_inputs(p, d.inputs);
    describe_output_dtype(p, "states", a->states);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"states", a->states}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_state_passing_args* a) {
  return guarded([&] {
    Decoded d{"state_passing", {}};
    for (auto [n, v] : {std::pair{"states", a->states}, {"dA_chunk_cumsum", a->dA_chunk_cumsum},
                        {"initial_states", a->initial_states}, {"seq_idx", a->seq_idx}})
      d.add(n, v);
    Problem p;
    p.op = Op::state_passing;
    const Tensor& states = d.need("states");
    p.b = states.dim(0), p.h = states.dim(2), p.d = states.dim(3);
    p.q = a->chunk_size > 0 ? a->chunk_size : 1;
    const Tensor* seq = d.inputs.find("seq_idx");
    p.s = seq ? seq->dim(1) : states.dim(1) * p.q;  // without seq_idx only NC matters
    describe_inputs(p, d.inputs);
    describe_output_dtype(p, "out", a->out);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"out", a->out}, {"final_states", a->final_states}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_chunk_scan_args* a) {
  return guarded([&] {
    Decoded d{"chunk_scan", {}};
    for (auto [n, v] : {std::pair{"cb", a->cb}, {"x", a->x}, {"dt", a->dt}, {"dA_cumsum", a->dA_cumsum}, {"C", a->C},
                        {"states", a->states}, {"D", a->D}, {"z", a->z}, {"seq_idx", a->seq_idx}})
      d.add(n, v);
    Problem p;
    p.op = Op::chunk_scan;
    const Tensor& x = d.need("x");
    const Tensor& C = d.need("C");
    p.b = x.dim(0), p.s = x.dim(1), p.h = x.dim(2), p.p = x.dim(3), p.g = C.dim(2), p.n = C.dim(3), p.q = d.need("cb").dim(-1);
    describe_inputs(p, d.inputs);
    write_outputs(emulate(p, d.inputs, o), d.op, {{"out", a->out}, {"out_x", a->out_x}});
  });
}

ssd_status run(const EmulationOptions& o, const ssd_recurrent_args* a) {
  return guarded([&] {
    Decoded d{"recurrent", {}};
    for (auto [n, v] : {std::pair{"state", a->state}, {"x", a->x}, {"dt", a->dt}, {"A", a->A}, {"B", a->B}, {"C", a->C},
                        {"D", a->D}, {"z", a->z}, {"dt_bias", a->dt_bias}, {"state_batch_indices", a->state_batch_indices}})
      d.add(n, v);
    Problem p;
    p.op = Op::recurrent;
    const Tensor& x = d.need("x");
    const Tensor& B = d.need("B");
    p.b = x.dim(0), p.h = x.dim(1), p.p = x.dim(2), p.g = B.dim(1), p.n = B.dim(2);
    p.softplus = a->dt_softplus != 0;
    describe_inputs(p, d.inputs);
    if (p.sbi) p.slots = d.need("state").dim(0);
    const Outputs out = emulate(p, d.inputs, o);
    write_outputs(out, d.op, {{"out", a->out}, {"state", a->state}});  // the state is updated in place
  });
}

ssd_status run(const EmulationOptions& o, const ssd_discretize_segsum_args* a) {
  return guarded([&] {
    Decoded d{"discretize_segsum", {}};
    for (auto [n, v] : {std::pair{"hidden_states", a->hidden_states}, {"dt", a->dt}, {"A_log", a->A_log}, {"B", a->B}, {"C", a->C}})
      d.add(n, v);
    Problem p;
    p.op = Op::discretize_segsum;
    const Tensor& hs = d.need("hidden_states");
    const Tensor& B = d.need("B");
    p.b = hs.dim(0), p.q = hs.dim(2), p.h = hs.dim(3), p.p = hs.dim(4), p.g = B.dim(3), p.n = B.dim(4);
    p.s = hs.dim(1) * p.q;
    describe_inputs(p, d.inputs);
    write_outputs(emulate(p, d.inputs, o), d.op,
                  {{"L", a->L}, {"G", a->G}, {"M", a->M}, {"A_cumsum", a->A_cumsum}, {"decay_states", a->decay_states}});
  });
}

// Variant v: 0 honest sequential, 1 honest blocked, 2 + i the i-th flaw of kAllFlaws.
constexpr int kFlawCount = static_cast<int>(std::size(kAllFlaws));
constexpr int kVariants = 2 + kFlawCount;

EmulationOptions options_of(int v) {
  if (v == 0) return {SumOrder::sequential, Flaw::none};
  if (v == 1) return {SumOrder::blocked, Flaw::none};
  return {SumOrder::sequential, kAllFlaws[v - 2]};
}

template <int V>
struct Entries {
  template <class Args>
  static ssd_status call(const Args* a) {
    return run(options_of(V), a);
  }
};

std::string table_name(int v) {
  if (v == 0) return "fp32-emulation";
  if (v == 1) return "fp32-emulation-blocked";
  return "mutant-" + std::string(flaw_name(kAllFlaws[v - 2]));
}

template <int V>
ssd_kernel_table make_table() {
  static const std::string name = table_name(V);
  ssd_kernel_table t{};
  t.abi_version = SSD_KERNEL_ABI_VERSION;
  t.name = name.c_str();
  t.memory_kind = SSD_MEMORY_HOST;
  t.mamba2 = &Entries<V>::template call<ssd_mamba2_args>;
  t.chunk_cumsum = &Entries<V>::template call<ssd_chunk_cumsum_args>;
  t.chunk_coupling = &Entries<V>::template call<ssd_chunk_coupling_args>;
  t.chunk_state = &Entries<V>::template call<ssd_chunk_state_args>;
  t.state_passing = &Entries<V>::template call<ssd_state_passing_args>;
  t.chunk_scan = &Entries<V>::template call<ssd_chunk_scan_args>;
  t.recurrent = &Entries<V>::template call<ssd_recurrent_args>;
  t.discretize_segsum = &Entries<V>::template call<ssd_discretize_segsum_args>;
  t.last_error = &last_error;
  return t;
}

template <int... V>
std::array<ssd_kernel_table, sizeof...(V)> make_tables(std::integer_sequence<int, V...>) {
  return {make_table<V>()...};
}

}  // namespace

const ssd_kernel_table* emulation_table(const EmulationOptions& options) {
  static const auto tables = make_tables(std::make_integer_sequence<int, kVariants>{});
  if (options.flaw == Flaw::none) return &tables[options.order == SumOrder::blocked ? 1 : 0];
  for (int i = 0; i < kFlawCount; ++i)
    if (kAllFlaws[i] == options.flaw) return &tables[static_cast<std::size_t>(2 + i)];
  return &tables[0];
}

}  // namespace ssd
