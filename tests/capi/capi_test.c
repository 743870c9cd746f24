/* The C API from C: a problem string round trip, a hand-worked chunk_cumsum, verdicts on correct
 * and wrong outputs, errors naming their argument, fuzz cases and shrink candidates, and a kernel
 * library checked through it. Expected values are derived here from the contract, not taken from
 * the library. Exit 0 when every check holds. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int contains(const char* text, const char* part) { return text != NULL && strstr(text, part) != NULL; }

static void test_version(void) {
  CHECK(ssd_capi_version() == SSD_CAPI_VERSION);
  const char *contract = NULL, *generator = NULL, *oracle = NULL;
  OK(ssd_capi_versions(&contract, &generator, &oracle));
  CHECK(contract != NULL && strlen(contract) > 0 && generator != NULL && oracle != NULL);
  CHECK(strcmp(ssd_capi_op_names(),
               "mamba2,chunk_cumsum,chunk_coupling,chunk_state,state_passing,chunk_scan,recurrent,discretize_segsum") == 0);
  CHECK(strcmp(ssd_capi_dtype_name(SSD_CAPI_BF16), "bf16") == 0);
}

/* Rounding by hand: bf16 keeps 8 significant bits (ulp of 1 is 2^-7), f16 11 bits up to 65504. */
static void test_round_to(void) {
  const double in[5] = {1 + 0x1p-8, 1 + 3 * 0x1p-8, 1 + 0x1p-8 + 0x1p-30, 65519.0, 65520.0};
  double bf16[5], f16[5];
  OK(ssd_capi_round_to(SSD_CAPI_BF16, in, bf16, 5));
  OK(ssd_capi_round_to(SSD_CAPI_F16, in, f16, 5));
  CHECK(bf16[0] == 1.0);              /* a tie: to the even neighbour 1 */
  CHECK(bf16[1] == 1 + 0x1p-6);       /* a tie between 1+2^-7 (odd) and 1+2^-6 (even) */
  CHECK(bf16[2] == 1 + 0x1p-7);       /* just above the tie: up, and no double rounding via f32 */
  CHECK(f16[3] == 65504.0);           /* below half an ulp above the largest f16 */
  CHECK(isinf(f16[4]) && f16[4] > 0); /* 65520 is the tie with 2^16: overflows to infinity */
  double same[1] = {0.1};
  OK(ssd_capi_round_to(SSD_CAPI_F32, same, same, 1));
  CHECK(same[0] == (double)0.1f);
  CHECK(ssd_capi_round_to(SSD_CAPI_I32, in, bf16, 1) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_round_to: argument 'dtype'"));
}

/* docs/problem-string.md section 3: benchmark names become short names, tokens take the canonical
 * order, numbers are reprinted, fill=default disappears. */
static void test_round_trip(void) {
  ssd_problem *p = NULL, *again = NULL;
  OK(ssd_capi_problem_parse("SSDChunkCumsumFwd:bf16 seed=6 A=bf16 q7 fill=default  limit=-1e-1,2E-1 b1 s30 +dt_bias h2", &p));
  const char* text = NULL;
  OK(ssd_capi_problem_string(p, &text));
  CHECK(text != NULL && strcmp(text, "chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=6") == 0);
  OK(ssd_capi_problem_parse(text, &again));
  int32_t equal = 0;
  OK(ssd_capi_problem_equal(p, again, &equal));
  CHECK(equal == 1);
  const char *op = NULL, *letters = NULL, *reason = "not set";
  int32_t dtype = -2;
  int64_t b = 0, s = 0, h = 0, q = 0, n = -1;
  uint64_t seed = 0;
  OK(ssd_capi_problem_op(p, &op));
  OK(ssd_capi_problem_dtype(p, &dtype));
  OK(ssd_capi_problem_size_letters(p, &letters));
  OK(ssd_capi_problem_size(p, 'b', &b));
  OK(ssd_capi_problem_size(p, 's', &s));
  OK(ssd_capi_problem_size(p, 'h', &h));
  OK(ssd_capi_problem_size(p, 'q', &q));
  OK(ssd_capi_problem_size(p, 'n', &n));
  OK(ssd_capi_problem_seed(p, &seed));
  OK(ssd_capi_problem_invalid_reason(p, &reason));
  CHECK(op != NULL && strcmp(op, "chunk_cumsum") == 0);
  CHECK(dtype == SSD_CAPI_BF16);
  CHECK(letters != NULL && strcmp(letters, "bshq") == 0);
  CHECK(b == 1 && s == 30 && h == 2 && q == 7 && n == 0 && seed == 6);
  CHECK(reason == NULL);
  int32_t bias = 0, softplus = 1;
  double lo = 0, hi = 0;
  OK(ssd_capi_problem_flag(p, "dt_bias", &bias));
  OK(ssd_capi_problem_flag(p, "softplus", &softplus));
  OK(ssd_capi_problem_dt_limit(p, &lo, &hi));
  CHECK(bias == 1 && softplus == 0 && lo == -0.1 && hi == 0.2);
  CHECK(ssd_capi_problem_flag(p, "+z", &bias) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'flag': '+z' is not an option"));
  ssd_capi_problem_free(again);
  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s1 h1 q1 seed=0", &again));
  OK(ssd_capi_problem_dt_limit(again, &lo, &hi)); /* the default clamp (0, +inf) */
  CHECK(lo == 0 && isinf(hi) && hi > 0);
  ssd_capi_problem_free(p);
}

/* Every error names its function and its argument. */
static void test_errors(void) {
  ssd_problem* p = (ssd_problem*)1;
  CHECK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s4 h1 q2 x5 seed=1", &p) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(p == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_problem_parse: argument 'problem'"));
  CHECK(contains(ssd_capi_last_error(), "x5"));
  CHECK(ssd_capi_problem_parse(NULL, &p) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'problem': is NULL"));
  CHECK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s4 h1 q2 seed=1", NULL) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'out'"));

  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s4 h1 q2 seed=1", &p));
  int64_t v = 0;
  CHECK(ssd_capi_problem_size(p, 'z', &v) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_problem_size: argument 'letter'"));
  ssd_inputs* in = NULL;
  OK(ssd_capi_inputs_make(p, &in));
  double too_small[3];
  CHECK(ssd_capi_inputs_copy(in, "dt", SSD_CAPI_AS_F64, too_small, sizeof too_small) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'bytes': 24 given, the tensor needs 32"));
  CHECK(ssd_capi_inputs_copy(in, "x", SSD_CAPI_AS_F64, too_small, sizeof too_small) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'name': 'x' is not an input of this case (dt, A)"));
  ssd_capi_tensor_info info;
  CHECK(ssd_capi_inputs_info(in, 2, &info) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'index'"));
  ssd_capi_inputs_free(in);
  ssd_capi_problem_free(p);

  /* Parses, but H % G != 0 puts it outside the contract: inputs are refused, naming the problem. */
  OK(ssd_capi_problem_parse("chunk_state:f32 b1 s8 h3 p2 g2 n2 q4 seed=1", &p));
  const char* reason = NULL;
  OK(ssd_capi_problem_invalid_reason(p, &reason));
  CHECK(contains(reason, "H % G != 0"));
  in = (ssd_inputs*)1;
  CHECK(ssd_capi_inputs_make(p, &in) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(in == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_inputs_make: argument 'problem'"));
  ssd_capi_problem_free(p);
}

/* chunk_cumsum by hand (docs/contract.md sections 1.3 and 3): dt' = clamp(dt + bias, lo, hi),
 * dt_out = dt' at valid positions and 0 in the padded tail, dA_cumsum the inclusive cumsum of
 * A[h] dt' restarting in each chunk and flat in the tail. S = 5, Q = 2: chunks of 2, 2, 1. */
static void test_chunk_cumsum_by_hand(void) {
  enum { B = 2, S = 5, H = 3, Q = 2, NC = 3 };
  ssd_problem* p = NULL;
  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b2 s5 h3 q2 +dt_bias limit=0.01,0.25 seed=11", &p));
  ssd_inputs* in = NULL;
  OK(ssd_capi_inputs_make(p, &in));
  int64_t count = 0;
  OK(ssd_capi_inputs_count(in, &count));
  CHECK(count == 3);
  ssd_capi_tensor_info info;
  OK(ssd_capi_inputs_info(in, 0, &info));
  CHECK(strcmp(info.name, "dt") == 0 && info.dtype == SSD_CAPI_F32 && info.rank == 3 && info.shape[0] == B &&
        info.shape[1] == S && info.shape[2] == H && info.numel == B * S * H);
  OK(ssd_capi_inputs_info(in, 2, &info));
  CHECK(strcmp(info.name, "dt_bias") == 0 && info.rank == 1 && info.shape[0] == H);

  double dt[B * S * H], A[H], bias[H];
  float dt_native[B * S * H];
  OK(ssd_capi_inputs_copy(in, "dt", SSD_CAPI_AS_F64, dt, sizeof dt));
  OK(ssd_capi_inputs_copy(in, "dt", SSD_CAPI_NATIVE, dt_native, sizeof dt_native));
  OK(ssd_capi_inputs_copy(in, "A", SSD_CAPI_AS_F64, A, sizeof A));
  OK(ssd_capi_inputs_copy(in, "dt_bias", SSD_CAPI_AS_F64, bias, sizeof bias));
  for (int i = 0; i < B * S * H; ++i) CHECK((double)dt_native[i] == dt[i]); /* f32 values, both ways */

  double want_dt[B * H * NC * Q], want_dA[B * H * NC * Q];
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < NC; ++c) {
        double running = 0;
        for (int i = 0; i < Q; ++i) {
          const int t = c * Q + i, at = ((b * H + h) * NC + c) * Q + i;
          double step = 0;
          if (t < S) {
            step = dt[(b * S + t) * H + h] + bias[h];
            step = step < 0.01 ? 0.01 : step > 0.25 ? 0.25 : step;
          }
          running += A[h] * step;
          want_dt[at] = step;
          want_dA[at] = running;
        }
      }

  ssd_truth* truth = NULL;
  OK(ssd_capi_truth_compute(p, in, &truth));
  OK(ssd_capi_truth_count(truth, &count));
  CHECK(count == 2);
  OK(ssd_capi_truth_info(truth, 0, &info));
  CHECK(strcmp(info.name, "dA_cumsum") == 0 && info.dtype == SSD_CAPI_F32 && info.rank == 4 && info.shape[0] == B &&
        info.shape[1] == H && info.shape[2] == NC && info.shape[3] == Q && info.has_undefined == 0);
  double oracle_dA[B * H * NC * Q], oracle_dt[B * H * NC * Q], bound[B * H * NC * Q];
  unsigned char defined[B * H * NC * Q];
  OK(ssd_capi_truth_copy(truth, "dA_cumsum", SSD_CAPI_ORACLE, oracle_dA, sizeof oracle_dA));
  OK(ssd_capi_truth_copy(truth, "dt_out", SSD_CAPI_ORACLE, oracle_dt, sizeof oracle_dt));
  OK(ssd_capi_truth_copy(truth, "dA_cumsum", SSD_CAPI_BOUND, bound, sizeof bound));
  OK(ssd_capi_truth_copy(truth, "dA_cumsum", SSD_CAPI_DEFINED, defined, sizeof defined));
  for (int i = 0; i < B * H * NC * Q; ++i) {
    CHECK(fabs(oracle_dA[i] - want_dA[i]) <= 1e-12 * (1 + fabs(want_dA[i])));
    CHECK(oracle_dt[i] == want_dt[i]); /* the same double sum and clamp: equal */
    CHECK(defined[i] == 1);
    CHECK(bound[i] > 0 && isfinite(bound[i]));
  }

  /* The hand-worked values, stored in f32 as a kernel would, pass; one element 10 bounds off fails
   * and is named first among the worst elements. */
  float got_dA[B * H * NC * Q];
  for (int i = 0; i < B * H * NC * Q; ++i) got_dA[i] = (float)want_dA[i];
  ssd_capi_output outs[2];
  memset(outs, 0, sizeof outs);
  outs[0].name = "dA_cumsum";
  outs[0].dtype = SSD_CAPI_F32;
  outs[0].encoding = SSD_CAPI_NATIVE;
  outs[0].rank = 4;
  outs[0].shape[0] = B, outs[0].shape[1] = H, outs[0].shape[2] = NC, outs[0].shape[3] = Q;
  outs[0].data = got_dA;
  outs[1] = outs[0];
  outs[1].name = "dt_out";
  outs[1].dtype = SSD_CAPI_DTYPE_CONTRACT;
  outs[1].encoding = SSD_CAPI_AS_F64;
  outs[1].data = want_dt;
  ssd_judgement* j = NULL;
  OK(ssd_capi_judge(truth, outs, 2, 5, &j));
  const char *verdict = NULL, *text = NULL;
  double max_r = -1;
  OK(ssd_capi_judgement_verdict(j, &verdict));
  OK(ssd_capi_judgement_max_r(j, &max_r));
  CHECK(verdict != NULL && strcmp(verdict, "PASSED") == 0);
  CHECK(max_r >= 0 && max_r <= 0.5); /* one f32 rounding of an exact value: r <= 1/2 by construction */
  double max_ratio = -1;
  OK(ssd_capi_judgement_max_ratio(j, &max_ratio));
  CHECK(max_ratio >= 0 && max_ratio <= 1); /* |error| <= u_out |y*| <= sigma per element, so the norm ratio <= 1 */
  ssd_capi_judgement_free(j);

  const int wrong = ((1 * H + 2) * NC + 1) * Q + 1; /* [1,2,1,1] */
  got_dA[wrong] = (float)(want_dA[wrong] + 10 * bound[wrong]);
  OK(ssd_capi_judge(truth, outs, 2, 3, &j));
  OK(ssd_capi_judgement_verdict(j, &verdict));
  OK(ssd_capi_judgement_describe(j, &text));
  CHECK(strcmp(verdict, "FAILED") == 0);
  CHECK(contains(text, "FAILED") && contains(text, "dA_cumsum[1,2,1,1]") &&
        contains(text, "repro: chunk_cumsum:f32 b2 s5 h3 q2 +dt_bias limit=0.01,0.25 seed=11"));
  int64_t worst = 0;
  OK(ssd_capi_judgement_worst_count(j, &worst));
  CHECK(worst >= 1);
  ssd_capi_element e;
  OK(ssd_capi_judgement_worst(j, 0, &e));
  CHECK(strcmp(e.output, "dA_cumsum") == 0 && e.flat == wrong && strcmp(e.index, "[1,2,1,1]") == 0);
  CHECK(e.r > 9 && e.r < 11 && strcmp(e.why, "over bound") == 0);
  ssd_capi_output_judgement oj;
  OK(ssd_capi_judgement_output(j, 0, &oj));
  CHECK(strcmp(oj.name, "dA_cumsum") == 0 && oj.over_bound == 1 && oj.compared == B * H * NC * Q);
  ssd_capi_judgement_free(j);

  /* A missing output is a FAILED verdict; an unknown name is the caller's error. */
  OK(ssd_capi_judge_against_oracle(p, outs, 1, 5, &j));
  OK(ssd_capi_judgement_verdict(j, &verdict));
  OK(ssd_capi_judgement_message(j, &text));
  CHECK(strcmp(verdict, "FAILED") == 0 && contains(text, "output 'dt_out' missing"));
  ssd_capi_judgement_free(j);
  outs[1].name = "dA";
  CHECK(ssd_capi_judge(truth, outs, 2, 5, &j) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_judge: argument 'outputs': outputs[1]: 'dA' is not an output"));

  ssd_capi_truth_free(truth);
  ssd_capi_inputs_free(in);
  ssd_capi_problem_free(p);
}

/* bf16 inputs natively are the top 16 bits of the float32 of their value (bf16 is a truncated
 * float32), and recurrent's untouched state rows are exact copies of the input (contract section 8:
 * slots no entry selects keep their values bit for bit), marked EXACT. */
static void test_native_bf16_and_exact_rows(void) {
  enum { B = 6, SLOTS = 9, H = 2, P = 2, N = 3 };
  ssd_problem* p = NULL;
  OK(ssd_capi_problem_parse("recurrent:bf16 b6 h2 p2 g1 n3 +sbi slots=9 seed=3", &p));
  ssd_inputs* in = NULL;
  OK(ssd_capi_inputs_make(p, &in));
  double x[B * H * P];
  uint16_t bits[B * H * P];
  OK(ssd_capi_inputs_copy(in, "x", SSD_CAPI_AS_F64, x, sizeof x));
  OK(ssd_capi_inputs_copy(in, "x", SSD_CAPI_NATIVE, bits, sizeof bits));
  for (int i = 0; i < B * H * P; ++i) {
    const float f = (float)x[i];
    uint32_t u;
    memcpy(&u, &f, 4);
    CHECK((double)f == x[i] && (u & 0xFFFF) == 0 && (uint16_t)(u >> 16) == bits[i]);
  }
  int32_t sbi[B];
  double state[SLOTS * H * P * N], oracle_state[SLOTS * H * P * N];
  unsigned char exact[SLOTS * H * P * N];
  OK(ssd_capi_inputs_copy(in, "state_batch_indices", SSD_CAPI_NATIVE, sbi, sizeof sbi));
  OK(ssd_capi_inputs_copy(in, "state", SSD_CAPI_AS_F64, state, sizeof state));
  ssd_truth* t = NULL;
  OK(ssd_capi_truth_compute(p, NULL, &t));
  OK(ssd_capi_truth_copy(t, "state", SSD_CAPI_ORACLE, oracle_state, sizeof oracle_state));
  OK(ssd_capi_truth_copy(t, "state", SSD_CAPI_EXACT, exact, sizeof exact));
  int untouched = 0;
  for (int slot = 0; slot < SLOTS; ++slot) {
    int selected = 0;
    for (int b = 0; b < B; ++b) selected |= sbi[b] == slot;
    if (selected) continue;
    ++untouched;
    for (int e = slot * H * P * N; e < (slot + 1) * H * P * N; ++e) CHECK(exact[e] == 1 && oracle_state[e] == state[e]);
  }
  CHECK(untouched >= SLOTS - B); /* at most B slots are selected */
  ssd_capi_tensor_info info;
  OK(ssd_capi_truth_info(t, 1, &info));
  CHECK(strcmp(info.name, "state") == 0 && info.has_exact == 1 && info.shape[0] == SLOTS);
  ssd_capi_truth_free(t);
  ssd_capi_inputs_free(in);
  ssd_capi_problem_free(p);
}

/* Shrink candidates: each valid, different from the original, and a round trip of its string; a
 * problem with no tokens to drop and every size 1 has none. */
static void test_shrink(void) {
  ssd_problem* p = NULL;
  OK(ssd_capi_problem_parse("chunk_scan:bf16 b2 s37 h4 p8 g4 n8 q16 +Dhp +z seq=rand seed=3", &p));
  ssd_problem_list* list = NULL;
  OK(ssd_capi_shrink_candidates(p, &list));
  int64_t count = 0;
  OK(ssd_capi_problem_list_count(list, &count));
  CHECK(count > 3);
  int without_z = 0;
  for (int64_t i = 0; i < count; ++i) {
    ssd_problem *c = NULL, *again = NULL;
    OK(ssd_capi_problem_list_get(list, i, &c));
    const char *reason = "unset", *text = NULL;
    int32_t equal = 1;
    OK(ssd_capi_problem_invalid_reason(c, &reason));
    CHECK(reason == NULL);
    OK(ssd_capi_problem_equal(p, c, &equal));
    CHECK(equal == 0);
    OK(ssd_capi_problem_string(c, &text));
    OK(ssd_capi_problem_parse(text, &again));
    OK(ssd_capi_problem_equal(c, again, &equal));
    CHECK(equal == 1);
    if (strcmp(text, "chunk_scan:bf16 b2 s37 h4 p8 g4 n8 q16 +Dhp seq=rand seed=3") == 0) without_z = 1;
    ssd_capi_problem_free(again);
    ssd_capi_problem_free(c);
  }
  CHECK(without_z);
  ssd_problem* bad = (ssd_problem*)1;
  CHECK(ssd_capi_problem_list_get(list, count, &bad) == SSD_CAPI_INVALID_ARGUMENT && bad == NULL);
  ssd_capi_problem_list_free(list);
  ssd_capi_problem_free(p);

  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s1 h1 q1 seed=0", &p));
  OK(ssd_capi_shrink_candidates(p, &list));
  OK(ssd_capi_problem_list_count(list, &count));
  CHECK(count == 0);
  ssd_capi_problem_list_free(list);
  ssd_capi_problem_free(p);
}

/* Fuzz cases: deterministic, valid, of the op asked for and of the dtypes asked for; a k of another
 * shard is refused. (Equality with ssd-fuzz's own function: capi_campaign_test.cpp.) */
static void test_campaign(void) {
  ssd_capi_campaign_options o;
  OK(ssd_capi_campaign_defaults(&o));
  CHECK(o.seed == 0 && o.shard == 0 && o.shards == 1 && o.dtypes == NULL && o.large_fraction == 0.05 &&
        o.huge_fraction == 0);
  o.seed = 42;
  o.shard = 1;
  o.shards = 3;
  o.dtypes = "bf16";
  for (int64_t k = 1; k < 40; k += 3) {
    ssd_problem *a = NULL, *b = NULL;
    OK(ssd_capi_campaign_problem("recurrent", &o, k, &a));
    OK(ssd_capi_campaign_problem("SSDRecurrentFwd", &o, k, &b));
    int32_t equal = 0, dtype = -1;
    const char *op = NULL, *reason = "unset";
    OK(ssd_capi_problem_equal(a, b, &equal));
    OK(ssd_capi_problem_op(a, &op));
    OK(ssd_capi_problem_dtype(a, &dtype));
    OK(ssd_capi_problem_invalid_reason(a, &reason));
    CHECK(equal == 1 && strcmp(op, "recurrent") == 0 && dtype == SSD_CAPI_BF16 && reason == NULL);
    ssd_capi_problem_free(a);
    ssd_capi_problem_free(b);
  }
  ssd_problem* p = (ssd_problem*)1;
  CHECK(ssd_capi_campaign_problem("recurrent", &o, 2, &p) == SSD_CAPI_INVALID_ARGUMENT && p == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_campaign_problem: argument 'k': 2 is not a case of shard 1/3"));
  CHECK(ssd_capi_campaign_problem("recurent", &o, 1, &p) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'op'"));
  o.dtypes = "bf16,f8";
  CHECK(ssd_capi_campaign_problem("recurrent", &o, 1, &p) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'options.dtypes'"));
}

/* A kernel library: the honest emulation passes a case, the mutant without the dt clamp fails it
 * (default fills draw raw dt from U(-0.05, 0.3): a fifth of 240 steps are negative and must clamp
 * to 0), and an unknown library is refused naming 'kernels'. */
static void test_library(void) {
  ssd_problem* p = NULL;
  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b2 s40 h3 q8 seed=5", &p));
  ssd_library *honest = NULL, *mutant = NULL, *missing = (ssd_library*)1;
  OK(ssd_capi_library_open("emulation", &honest));
  OK(ssd_capi_library_open("mutant-no_dt_clamp", &mutant));
  CHECK(ssd_capi_library_open("no-such-kernels", &missing) == SSD_CAPI_INVALID_ARGUMENT && missing == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_library_open: argument 'kernels'"));
  int32_t yes = 0;
  OK(ssd_capi_library_implements(honest, "chunk_cumsum", &yes));
  CHECK(yes == 1);
  const char *name = NULL, *verdict = NULL;
  OK(ssd_capi_library_name(honest, &name));
  CHECK(strcmp(name, "fp32-emulation") == 0);
  ssd_judgement* j = NULL;
  OK(ssd_capi_check_case(honest, p, &j));
  OK(ssd_capi_judgement_verdict(j, &verdict));
  CHECK(strcmp(verdict, "PASSED") == 0);
  ssd_capi_judgement_free(j);
  OK(ssd_capi_check_case(mutant, p, &j));
  OK(ssd_capi_judgement_verdict(j, &verdict));
  CHECK(strcmp(verdict, "FAILED") == 0);
  ssd_capi_judgement_free(j);
  ssd_capi_library_free(mutant);
  ssd_capi_library_free(honest);
  ssd_capi_problem_free(p);
}

int main(void) {
  test_version();
  test_round_to();
  test_round_trip();
  test_errors();
  test_chunk_cumsum_by_hand();
  test_native_bf16_and_exact_rows();
  test_shrink();
  test_campaign();
  test_library();
  if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
  else printf("capi: every check holds\n");
  return check_failures ? 1 : 0;
}
