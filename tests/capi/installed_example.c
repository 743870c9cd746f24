/* The C API as an installed library is used: <ssd/capi.h> from the prefix, -lssd-capi, a case
 * judged on its own oracle values stored in f32 (PASSED). Prints the verdict line; exit 0 on PASSED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ssd/capi.h>

static int fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, ssd_capi_last_error());
  return 1;
}

int main(void) {
  if (ssd_capi_version() != SSD_CAPI_VERSION) return fail("version");
  ssd_problem* p = NULL;
  ssd_truth* t = NULL;
  if (ssd_capi_problem_parse("chunk_cumsum:f32 b1 s30 h2 q7 +dt_bias seed=6", &p)) return fail("parse");
  if (ssd_capi_truth_compute(p, NULL, &t)) return fail("truth");
  enum { NUMEL = 1 * 2 * 5 * 7 };
  double dA[NUMEL], dt[NUMEL];
  if (ssd_capi_truth_copy(t, "dA_cumsum", SSD_CAPI_ORACLE, dA, sizeof dA)) return fail("copy");
  if (ssd_capi_truth_copy(t, "dt_out", SSD_CAPI_ORACLE, dt, sizeof dt)) return fail("copy");
  ssd_capi_output outs[2] = {{"dA_cumsum", SSD_CAPI_DTYPE_CONTRACT, SSD_CAPI_AS_F64, 4, {1, 2, 5, 7}, dA},
                             {"dt_out", SSD_CAPI_DTYPE_CONTRACT, SSD_CAPI_AS_F64, 4, {1, 2, 5, 7}, dt}};
  ssd_judgement* j = NULL;
  if (ssd_capi_judge(t, outs, 2, 5, &j)) return fail("judge");
  const char *verdict = NULL, *text = NULL;
  ssd_capi_judgement_verdict(j, &verdict);
  ssd_capi_judgement_describe(j, &text);
  puts(text);
  const int passed = strcmp(verdict, "PASSED") == 0;
  ssd_capi_judgement_free(j);
  ssd_capi_truth_free(t);
  ssd_capi_problem_free(p);
  return passed ? 0 : 1;
}
