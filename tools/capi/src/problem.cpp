// Problems: parsing, the canonical string and the fields a caller reads.
#include <cstring>

#include "guard.h"
#include "handles.h"

ssd_problem::ssd_problem(ssd::Problem p)
    : problem(std::move(p)), text(ssd::to_string(problem)), op(ssd::op_name(problem.op)),
      invalid(ssd::invalid_reason(problem)) {
  for (char letter : ssd::op_spec(problem.op).dims) letters.push_back(letter);
}

using ssd::capi::guarded;
using ssd::capi::need;

extern "C" {

ssd_capi_status ssd_capi_problem_parse(const char* problem, ssd_problem** out) {
  return guarded("ssd_capi_problem_parse", [&] {
    need(out, "out") = nullptr;
    ssd::capi::need_text(problem, "problem");
    need(out, "out") = new ssd_problem(ssd::parse_problem(problem));
  });
}

void ssd_capi_problem_free(ssd_problem* problem) { delete problem; }

ssd_capi_status ssd_capi_problem_string(const ssd_problem* problem, const char** text) {
  return guarded("ssd_capi_problem_string", [&] { need(text, "text") = need(problem, "problem").text.c_str(); });
}

ssd_capi_status ssd_capi_problem_op(const ssd_problem* problem, const char** op) {
  return guarded("ssd_capi_problem_op", [&] { need(op, "op") = need(problem, "problem").op.c_str(); });
}

ssd_capi_status ssd_capi_problem_dtype(const ssd_problem* problem, int32_t* dtype) {
  return guarded("ssd_capi_problem_dtype",
                 [&] { need(dtype, "dtype") = static_cast<int32_t>(need(problem, "problem").problem.dtype); });
}

ssd_capi_status ssd_capi_problem_size_letters(const ssd_problem* problem, const char** letters) {
  return guarded("ssd_capi_problem_size_letters",
                 [&] { need(letters, "letters") = need(problem, "problem").letters.c_str(); });
}

ssd_capi_status ssd_capi_problem_size(const ssd_problem* problem, char letter, int64_t* value) {
  return guarded("ssd_capi_problem_size", [&] {
    const ssd::Problem& p = need(problem, "problem").problem;
    int64_t& v = need(value, "value");
    switch (letter) {
      case 'b': v = p.b; break;
      case 's': v = p.s; break;
      case 'h': v = p.h; break;
      case 'p': v = p.p; break;
      case 'g': v = p.g; break;
      case 'n': v = p.n; break;
      case 'q': v = p.q; break;
      case 'd': v = p.d; break;
      default: throw ssd::ArgumentError("letter", "'" + std::string(1, letter) + "' is not a size (b s h p g n q d)");
    }
  });
}

ssd_capi_status ssd_capi_problem_seed(const ssd_problem* problem, uint64_t* seed) {
  return guarded("ssd_capi_problem_seed", [&] { need(seed, "seed") = need(problem, "problem").problem.seed; });
}

ssd_capi_status ssd_capi_problem_flag(const ssd_problem* problem, const char* flag, int32_t* on) {
  return guarded("ssd_capi_problem_flag", [&] {
    const ssd::Problem& p = need(problem, "problem").problem;
    const std::string f = ssd::capi::need_text(flag, "flag");
    int32_t& v = need(on, "on");
    if (f == "dt_bias") v = p.dt_bias;
    else if (f == "softplus") v = p.softplus;
    else if (f == "D") v = p.D == ssd::DMode::per_head;
    else if (f == "Dhp") v = p.D == ssd::DMode::per_head_dim;
    else if (f == "z") v = p.z;
    else if (f == "init") v = p.init;
    else if (f == "causal") v = p.causal;
    else if (f == "sbi") v = p.sbi;
    else if (f == "tie") v = p.tie;
    else if (f == "varlen") v = p.varlen;
    else if (f == "dst") v = p.dst;
    else if (f == "spec") v = p.spec;
    else if (f == "accepted") v = p.accepted;
    else if (f == "nowrite") v = p.nowrite;
    else if (f == "inter") v = p.inter;
    else
      throw ssd::ArgumentError("flag", "'" + f + "' is not an option (dt_bias softplus D Dhp z init causal sbi tie varlen dst "
                                             "spec accepted nowrite inter)");
  });
}

ssd_capi_status ssd_capi_problem_value(const ssd_problem* problem, const char* key, int64_t* value) {
  return guarded("ssd_capi_problem_value", [&] {
    const ssd::Problem& p = need(problem, "problem").problem;
    const std::string k = ssd::capi::need_text(key, "key");
    int64_t& v = need(value, "value");
    if (k == "slots") v = p.slots;
    else if (k == "tokens") v = p.tokens;
    else if (k == "pad") v = p.pad;
    else throw ssd::ArgumentError("key", "'" + k + "' is not an integer option (slots tokens pad)");
  });
}

ssd_capi_status ssd_capi_problem_dt_limit(const ssd_problem* problem, double* lo, double* hi) {
  return guarded("ssd_capi_problem_dt_limit", [&] {
    const ssd::Problem& p = need(problem, "problem").problem;
    const ssd::DtLimit limit = p.dt_limit.value_or(ssd::DtLimit{});
    need(lo, "lo") = limit.lo;
    need(hi, "hi") = limit.hi;
  });
}

ssd_capi_status ssd_capi_problem_invalid_reason(const ssd_problem* problem, const char** reason) {
  return guarded("ssd_capi_problem_invalid_reason", [&] {
    const ssd_problem& p = need(problem, "problem");
    need(reason, "reason") = p.invalid ? p.invalid->c_str() : nullptr;
  });
}

ssd_capi_status ssd_capi_problem_equal(const ssd_problem* a, const ssd_problem* b, int32_t* equal) {
  return guarded("ssd_capi_problem_equal",
                 [&] { need(equal, "equal") = need(a, "a").problem == need(b, "b").problem ? 1 : 0; });
}

}  // extern "C"
