// One description per op: its problem-string vocabulary, legal cases (with the reason a case is
// invalid), tensor roles with shapes, dtypes and fills, output dtypes, both oracle entry points,
// and its problem lists. Tests, generators, tools and benchmarks read it; none keeps its own list.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ssd/reference/abi_binding.h"
#include "ssd/reference/bounds.h"
#include "ssd/reference/outputs.h"
#include "ssd/reference/problem.h"
#include "ssd/reference/tensor.h"

namespace ssd {

// How an input tensor's values are drawn (before rounding to its dtype).
struct FillRule {
  enum class Kind {
    normal,           // N(0, b)          (a unused)
    uniform,          // U(a, b)
    neg_exp_uniform,  // -exp(U(a, b))    (SSM decay rates A)
    softplus_edges,   // raw dt around softplus's corners: U(-40,-17), U(19,21) or U(25,60), equally likely
    exp_overflow,     // raw dt where fp32 exp(x) nears or passes its range: U(80,88.7) or U(88.8,400), equally likely
    chunk_dt,         // U(a, b) at valid chunk positions of [Bt,H,NC,Q], 0 in the padded tail
    chunk_cumsum,     // within-chunk cumsum of -U(a, b) over valid positions, flat padded tail
    seq_idx,          // from Problem::seq
    batch_indices,    // the decode slot tables (state_batch_indices, dst_state_batch_indices, num_accepted_tokens):
                      // distinct slots, about a quarter of the rows padding
    has_initial_states,  // 0/1 per sequence of a packed batch: all, exactly one, or each at random
    varlen_encoding,  // the role's encoding of the packed sequences (ssd/reference/varlen.h)
  };
  Kind kind = Kind::normal;
  double a = 0.0, b = 1.0;
  // Elements flat / tie share one draw: makes a tensor constant along its trailing axes
  // (recurrent "+tie": A [H,P,N] constant along P,N is tie = P*N).
  std::int64_t tie = 1;
};

struct InputRole {
  std::string name;              // contract name, also the dtype-override key
  bool follows_primary = false;  // dtype = the problem's primary dtype, else `fixed`
  DType fixed = DType::f32;
  bool overridable = true;       // i32 index tensors are not
  std::function<bool(const Problem&)> present;   // nullptr = always present
  std::function<Shape(const Problem&)> shape;
  std::function<FillRule(const Problem&)> fill;
};

// Constants of the per-element bound of one output (docs/tolerance.md): the safety factor on the
// roundings to storage dtypes (a correctly rounded value is off by up to u |y|, so 2 keeps an
// honest kernel's r at or below 1/2), on the accumulation term and on the exponent term, and c of
// phi(n) = sqrt(n) + c. Calibrated against the honest fp32 emulations (tests/calibration); they
// live here and nowhere else.
struct ToleranceConstants {
  double rounding = 2.0;
  double k = 2.0;
  double k_exp = 2.0;
  double c_phi = 4.0;
};

struct OutputRole {
  std::string name;
  std::function<DType(const Problem&)> dtype;  // the dtype a kernel stores the output in
  std::function<bool(const Problem&)> present;  // nullptr = always produced
  ToleranceConstants tolerance{};
  std::function<Shape(const Problem&)> shape;   // the output's shape
};

// Named input tensors of one case.
class InputSet {
 public:
  void put(std::string name, Tensor t) { tensors_[std::move(name)] = std::move(t); }
  const Tensor* find(std::string_view name) const;  // nullptr when absent
  const Tensor& at(std::string_view name) const;    // throws ArgumentError when absent
  const std::map<std::string, Tensor, std::less<>>& all() const { return tensors_; }

 private:
  std::map<std::string, Tensor, std::less<>> tensors_;
};

struct OpSpec {
  Op op;
  std::string_view name;            // problem-string name, e.g. "chunk_state"
  std::string_view benchmark_name;  // e.g. "SSDChunkStateFwd"
  std::vector<char> dims;           // size letters the op takes, in print order (b s h p g n q d)
  bool whole_chunks = false;        // S must be a multiple of Q (the op takes whole chunks)
  std::vector<std::string_view> flags;  // dt_bias softplus limit D Dhp z init seq causal sbi tie slots
  std::vector<DType> primary_dtypes;
  std::vector<std::string_view> fills;  // value regimes; the first is the default
  std::vector<InputRole> inputs;
  std::vector<OutputRole> outputs;
  std::function<std::optional<std::string>(const Problem&)> invalid_reason;  // nullopt = valid
  std::function<Outputs(const Problem&, const InputSet&)> chunked;
  std::function<Outputs(const Problem&, const InputSet&)> sequential;
  // Per-element bounds of the outputs from the inputs and the oracle's outputs (docs/tolerance.md).
  std::function<Bounds(const Problem&, const InputSet&, const Outputs&)> bounds;
  AbiBinding abi;  // where the roles and scalars sit in the kernel-ABI args struct
  std::function<std::vector<Problem>()> smoke;      // small cases covering dtypes and options
  std::function<std::vector<Problem>()> workloads;  // the full-size benchmark cases (workloads.md)
  // A case past 2^31 elements for GPU hosts (ssd-fuzz --huge), as a problem string without its
  // seed; empty when the op has no tensor that large at sizes a GPU can hold.
  std::string_view huge;
  // The inputs that layout=zxbcdt makes views into one in_proj buffer (of z, x, B, C, dt, the ones
  // the op takes token-major); empty: the op takes no zxbcdt views (layout=strided is for every op).
  std::vector<std::string_view> zxbcdt;

  const OutputRole& output(std::string_view name) const;  // throws ArgumentError
  bool takes_flag(std::string_view flag) const;
  bool takes_dim(char dim) const;
  const InputRole* input(std::string_view role) const;
};

const OpSpec& op_spec(Op op);

// The outputs a valid problem produces, by name, with their shapes (what a caller allocates).
std::vector<std::pair<std::string, Shape>> output_shapes(const Problem& p);

// Why the problem is outside the contract (shared checks plus the op's own), or nullopt.
std::optional<std::string> invalid_reason(const Problem& p);

// Why the problem is outside the contract in a way no tensor of its case shows, or nullopt: S not a
// multiple of Q for an op that takes whole chunks ([b, c, Q, ...] tensors carry no S), with every
// other check passed. Such a case is INVALID without a kernel call: a kernel could not reject it.
std::optional<std::string> unseen_invalid_reason(const Problem& p);

// Deterministic inputs of a case: a pure function of the problem (seeded per case seed, tensor
// name and block of elements), independent of thread count and machine. Throws ArgumentError
// for an invalid problem.
InputSet make_inputs(const Problem& p);
// The same fills for a case outside the contract whose tensors can still be built (e.g. H % G != 0),
// to check that a kernel rejects it. Throws ArgumentError when no tensor can be built.
InputSet make_inputs_unchecked(const Problem& p);

}  // namespace ssd
