// Verdicts on a caller's outputs under the truth's bounds, and what a judgement says.
#include <memory>

#include "guard.h"
#include "handles.h"
#include "ssd/reference/abi_views.h"

using ssd::capi::guarded;
using ssd::capi::need;

ssd_judgement::ssd_judgement(ssd::CaseJudgement j)
    : judgement(std::move(j)), verdict(ssd::verdict_name(judgement.verdict)), description(ssd::describe(judgement)) {
  for (const ssd::OutputJudgement& o : judgement.outputs)
    for (const ssd::ElementReport& e : o.worst)
      worst.push_back({o.name.c_str(), e.index.c_str(), e.flat, e.got, e.expected, e.bound, e.r, e.why.c_str()});
}

namespace {

// The caller's outputs as the oracle's Outputs: each a tensor in the dtype the kernel stored it in.
ssd::Outputs read_outputs(const ssd::Problem& p, const ssd::Outputs& oracle, const ssd_capi_output* outputs,
                          int64_t count) {
  if (count < 0) throw ssd::ArgumentError("count", std::to_string(count) + " is negative");
  if (count > 0) need(outputs, "outputs");
  const ssd::OpSpec& spec = ssd::op_spec(p.op);
  ssd::Outputs got;
  for (int64_t i = 0; i < count; ++i) {
    const ssd_capi_output& o = outputs[i];
    const std::string where = "outputs[" + std::to_string(i) + "]";
    if (o.name == nullptr) throw ssd::ArgumentError("outputs", where + ".name is NULL");
    if (!oracle.has(o.name)) {
      std::string have;
      for (const ssd::Output& w : oracle.all()) have.append(have.empty() ? "" : ", ").append(w.name);
      throw ssd::ArgumentError("outputs", where + ": '" + o.name + "' is not an output of this case (" + have + ")");
    }
    if (got.has(o.name)) throw ssd::ArgumentError("outputs", where + ": '" + o.name + "' given twice");
    if (o.rank < 0 || o.rank > SSD_CAPI_MAX_RANK)
      throw ssd::ArgumentError("outputs", where + ".rank " + std::to_string(o.rank) + " is outside 0..8");
    ssd::Shape shape(o.shape, o.shape + o.rank);
    for (std::int64_t d : shape)
      if (d < 0) throw ssd::ArgumentError("outputs", where + ".shape has a negative extent");
    if (o.dtype < SSD_CAPI_DTYPE_CONTRACT || o.dtype > SSD_CAPI_I32)
      throw ssd::ArgumentError("outputs", where + ".dtype " + std::to_string(o.dtype) + " is not a tensor dtype");
    const ssd::DType dtype =
        o.dtype == SSD_CAPI_DTYPE_CONTRACT ? spec.output(o.name).dtype(p) : static_cast<ssd::DType>(o.dtype);
    if (ssd::element_count(shape) > 0 && o.data == nullptr)
      throw ssd::ArgumentError("outputs", where + ".data is NULL");
    if (o.encoding == SSD_CAPI_AS_F64) {
      const auto* values = static_cast<const double*>(o.data);
      got.add(o.name, ssd::Tensor(dtype, shape, std::vector<double>(values, values + ssd::element_count(shape))));
    } else if (o.encoding == SSD_CAPI_NATIVE) {
      got.add(o.name, ssd::decode(dtype, shape, o.data));
    } else {
      throw ssd::ArgumentError("outputs", where + ".encoding " + std::to_string(o.encoding) + " is not an ssd_capi_encoding");
    }
  }
  return got;
}

int worst_of(int32_t worst_count) {
  if (worst_count < 0) throw ssd::ArgumentError("worst_count", std::to_string(worst_count) + " is negative");
  return worst_count;
}

}  // namespace

extern "C" {

ssd_capi_status ssd_capi_judge(const ssd_truth* truth, const ssd_capi_output* outputs, int64_t count,
                               int32_t worst_count, ssd_judgement** out) {
  return guarded("ssd_capi_judge", [&] {
    need(out, "out") = nullptr;
    const ssd_truth& t = need(truth, "truth");
    const ssd::Outputs got = read_outputs(t.problem, t.truth.oracle, outputs, count);
    *out = new ssd_judgement(ssd::judge(t.problem, t.truth.oracle, t.truth.bounds, got, worst_of(worst_count)));
  });
}

ssd_capi_status ssd_capi_judge_against_oracle(const ssd_problem* problem, const ssd_capi_output* outputs, int64_t count,
                                              int32_t worst_count, ssd_judgement** out) {
  return guarded("ssd_capi_judge_against_oracle", [&] {
    need(out, "out") = nullptr;
    const ssd::Problem& p = need(problem, "problem").problem;
    const ssd::InputSet inputs = ssd::make_inputs(p);
    // The output names and dtypes come from the OpSpec, so the oracle is run once, inside.
    ssd::Outputs shapes;
    for (const auto& [name, shape] : ssd::output_shapes(p)) shapes.add(name, ssd::Tensor(ssd::DType::f64, {}));
    const ssd::Outputs got = read_outputs(p, shapes, outputs, count);
    *out = new ssd_judgement(ssd::judge_against_oracle(p, inputs, got, worst_of(worst_count)));
  });
}

void ssd_capi_judgement_free(ssd_judgement* judgement) { delete judgement; }

ssd_capi_status ssd_capi_judgement_verdict(const ssd_judgement* judgement, const char** verdict) {
  return guarded("ssd_capi_judgement_verdict",
                 [&] { need(verdict, "verdict") = need(judgement, "judgement").verdict.c_str(); });
}

ssd_capi_status ssd_capi_judgement_max_r(const ssd_judgement* judgement, double* max_r) {
  return guarded("ssd_capi_judgement_max_r",
                 [&] { need(max_r, "max_r") = need(judgement, "judgement").judgement.max_r(); });
}

ssd_capi_status ssd_capi_judgement_max_ratio(const ssd_judgement* judgement, double* max_ratio) {
  return guarded("ssd_capi_judgement_max_ratio",
                 [&] { need(max_ratio, "max_ratio") = need(judgement, "judgement").judgement.max_ratio(); });
}

ssd_capi_status ssd_capi_judgement_message(const ssd_judgement* judgement, const char** message) {
  return guarded("ssd_capi_judgement_message",
                 [&] { need(message, "message") = need(judgement, "judgement").judgement.message.c_str(); });
}

ssd_capi_status ssd_capi_judgement_problem(const ssd_judgement* judgement, const char** problem) {
  return guarded("ssd_capi_judgement_problem",
                 [&] { need(problem, "problem") = need(judgement, "judgement").judgement.problem.c_str(); });
}

ssd_capi_status ssd_capi_judgement_describe(const ssd_judgement* judgement, const char** text) {
  return guarded("ssd_capi_judgement_describe",
                 [&] { need(text, "text") = need(judgement, "judgement").description.c_str(); });
}

ssd_capi_status ssd_capi_judgement_output_count(const ssd_judgement* judgement, int64_t* count) {
  return guarded("ssd_capi_judgement_output_count", [&] {
    need(count, "count") = static_cast<int64_t>(need(judgement, "judgement").judgement.outputs.size());
  });
}

ssd_capi_status ssd_capi_judgement_output(const ssd_judgement* judgement, int64_t index,
                                          ssd_capi_output_judgement* output) {
  return guarded("ssd_capi_judgement_output", [&] {
    const auto& outputs = need(judgement, "judgement").judgement.outputs;
    const ssd::OutputJudgement& o = outputs[ssd::capi::need_index(index, outputs.size())];
    need(output, "output") = {o.name.c_str(), o.compared, o.over_bound, o.exact_mismatches, o.not_finite, o.max_r};
  });
}

ssd_capi_status ssd_capi_judgement_worst_count(const ssd_judgement* judgement, int64_t* count) {
  return guarded("ssd_capi_judgement_worst_count",
                 [&] { need(count, "count") = static_cast<int64_t>(need(judgement, "judgement").worst.size()); });
}

ssd_capi_status ssd_capi_judgement_worst(const ssd_judgement* judgement, int64_t index, ssd_capi_element* element) {
  return guarded("ssd_capi_judgement_worst", [&] {
    const ssd_judgement& j = need(judgement, "judgement");
    need(element, "element") = j.worst[ssd::capi::need_index(index, j.worst.size())];
  });
}

}  // extern "C"
