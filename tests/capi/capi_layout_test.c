/* The C API's description of input layouts (ssd_capi_layout_*): zxbcdt views, seed-drawn strided
 * pitches and the +far batch stride, each checked against numbers worked out by hand from
 * docs/problem-string.md section 3.1, and the errors naming their arguments; then a kernel library
 * that ignores strides, checked through the C API, fails a laid-out case that the honest library
 * passes. Exit 0 when every check holds. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int contains(const char* text, const char* part) { return text != NULL && strstr(text, part) != NULL; }

static ssd_layout* layout_of(const char* text) {
  ssd_problem* p = NULL;
  ssd_layout* l = NULL;
  OK(ssd_capi_problem_parse(text, &p));
  OK(ssd_capi_layout_make(p, &l));
  ssd_capi_problem_free(p);
  return l;
}

/* Placement `index` is `role` in `buffer` at `offset`, with `rank` extents and strides. */
static void check_placement(const ssd_layout* l, int64_t index, const char* role, const char* buffer, int64_t offset,
                            int32_t rank, const int64_t* shape, const int64_t* strides) {
  ssd_capi_placement_info v;
  memset(&v, 0, sizeof v);
  OK(ssd_capi_layout_placement(l, index, &v));
  CHECK(v.role != NULL && strcmp(v.role, role) == 0);
  CHECK(v.buffer != NULL && strcmp(v.buffer, buffer) == 0);
  CHECK(v.offset == offset);
  CHECK(v.rank == rank);
  for (int32_t axis = 0; axis < rank && axis < v.rank; ++axis) {
    CHECK(v.shape[axis] == shape[axis]);
    CHECK(v.strides[axis] == strides[axis]);
  }
}

static void check_buffer(const ssd_layout* l, int64_t index, const char* name, int32_t dtype, int64_t extent,
                         uint32_t poison) {
  ssd_capi_buffer_info b;
  memset(&b, 0, sizeof b);
  OK(ssd_capi_layout_buffer(l, index, &b));
  CHECK(b.name != NULL && strcmp(b.name, name) == 0);
  CHECK(b.dtype == dtype && b.extent == extent && b.poison == poison);
}

/* mamba2 with H=2 P=2 G=1 N=2: HP = 4, GN = 2, so a row of the projection is W = 2HP + 2GN + H =
 * 8 + 4 + 2 = 14 wide, with z at column 0, x at HP = 4, B at 2HP = 8, C at 2HP + GN = 10 and dt at
 * 2HP + 2GN = 12. The b*s = 2*3 = 6 rows give 84 elements. Token-major axes: a token is one row
 * (stride 14), a batch row three tokens (stride 42); x [b,s,h,p] is dense within the row (2, 1). */
static void test_zxbcdt_mamba2(void) {
  ssd_layout* l = layout_of("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z layout=zxbcdt seed=1");
  int64_t buffers = 0, placements = 0;
  OK(ssd_capi_layout_buffer_count(l, &buffers));
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(buffers == 1 && placements == 5);
  check_buffer(l, 0, "zxbcdt", SSD_CAPI_F32, 84, 0x7FC0DEADu);
  const int64_t xs[4] = {2, 3, 2, 2}, bs[4] = {2, 3, 1, 2}, dts[3] = {2, 3, 2};
  const int64_t row_major[4] = {42, 14, 2, 1}, dt_strides[3] = {42, 14, 1};
  check_placement(l, 0, "z", "zxbcdt", 0, 4, xs, row_major);
  check_placement(l, 1, "x", "zxbcdt", 4, 4, xs, row_major);
  check_placement(l, 2, "B", "zxbcdt", 8, 4, bs, row_major);
  check_placement(l, 3, "C", "zxbcdt", 10, 4, bs, row_major);
  check_placement(l, 4, "dt", "zxbcdt", 12, 3, dts, dt_strides);
  ssd_capi_layout_free(l);
}

/* The same without +z (its columns 0..3 stay a gap, no placement) and with +far: the batch stride
 * 42 becomes 42 + 2^31 = 2147483690. The farthest element is dt's last, at 12 + 2147483690 +
 * 2*14 + 1 = 2147483731, so the buffer holds 2147483732 elements (2^31 + 84). */
static void test_zxbcdt_far(void) {
  ssd_layout* l = layout_of("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt +far seed=1");
  int64_t placements = 0;
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(placements == 4);
  check_buffer(l, 0, "zxbcdt", SSD_CAPI_F32, 2147483732LL, 0x7FC0DEADu);
  const int64_t xs[4] = {2, 3, 2, 2}, dts[3] = {2, 3, 2};
  const int64_t x_strides[4] = {2147483690LL, 14, 2, 1}, dt_strides[3] = {2147483690LL, 14, 1};
  check_placement(l, 0, "x", "zxbcdt", 4, 4, xs, x_strides);
  check_placement(l, 3, "dt", "zxbcdt", 12, 3, dts, dt_strides);
  ssd_capi_layout_free(l);
}

/* recurrent +tie, H=2 P=3 G=1 N=2: W = 2*6 + 2*2 + 2 = 18, one row per batch entry (2 rows, 36
 * elements). x [b,h,p] at column 6 (strides 18, 3, 1); B and C [b,g,n] at 12 and 14; dt at
 * column 16 is the head's one value expanded along P: strides (18, 1, 0). A [2,3,2] is one value
 * per head expanded along P and N, in a buffer "A" of 2 elements: strides (1, 0, 0). state is
 * updated in place: not laid out. */
static void test_zxbcdt_recurrent_tie(void) {
  ssd_layout* l = layout_of("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1");
  int64_t placements = 0, buffers = 0;
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(placements == 5);
  OK(ssd_capi_layout_buffer_count(l, &buffers));
  CHECK(buffers == 2);
  check_buffer(l, 0, "zxbcdt", SSD_CAPI_F32, 36, 0x7FC0DEADu);
  check_buffer(l, 1, "A", SSD_CAPI_F32, 2, 0x7FC0DEADu);
  const int64_t xs[3] = {2, 2, 3}, bs[3] = {2, 1, 2}, as[3] = {2, 3, 2};
  const int64_t x_strides[3] = {18, 3, 1}, b_strides[3] = {18, 2, 1}, dt_strides[3] = {18, 1, 0};
  const int64_t a_strides[3] = {1, 0, 0};
  check_placement(l, 0, "x", "zxbcdt", 6, 3, xs, x_strides);
  check_placement(l, 1, "B", "zxbcdt", 12, 3, bs, b_strides);
  check_placement(l, 2, "C", "zxbcdt", 14, 3, bs, b_strides);
  check_placement(l, 3, "dt", "zxbcdt", 16, 3, xs, dt_strides);
  check_placement(l, 4, "A", "A", 0, 3, as, a_strides);
  ssd_capi_layout_free(l);
}

/* chunk_state takes x and B from the projection, in its role order (x, then B). f16: poison
 * 0x7EAD. H=2 P=2 G=1 N=2 as above: W = 14, s4 gives 4 rows = 56 elements, though B's last
 * element is at 8 + 3*14 + 1 = 51: the rows' trailing columns (C, dt) are gaps. */
static void test_zxbcdt_chunk_state(void) {
  ssd_layout* l = layout_of("chunk_state:f16 b1 s4 h2 p2 g1 n2 q2 layout=zxbcdt seed=1");
  int64_t placements = 0;
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(placements == 2);
  check_buffer(l, 0, "zxbcdt", SSD_CAPI_F16, 56, 0x7EADu);
  const int64_t xs[4] = {1, 4, 2, 2}, bs[4] = {1, 4, 1, 2}, strides[4] = {56, 14, 2, 1};
  check_placement(l, 0, "x", "zxbcdt", 4, 4, xs, strides);
  check_placement(l, 1, "B", "zxbcdt", 8, 4, bs, strides);
  ssd_capi_layout_free(l);
}

/* layout=strided by the rules of section 3.1 (the draws themselves come from the seed's stream):
 * one buffer per input, named after it, in role order; a leading offset 0..3; an innermost stride
 * 1 or 2; stride[k-1] = stride[k] * (shape[k] + pad) with pad 0..3; never dense (so a rank-1
 * input has stride 2); a tail of 0..3 elements past the last one. +far adds 2^31 to the stride
 * of the batch axis of dt only (A and dt_bias [h] have no batch axis). */
static void check_strided(const char* text, int far) {
  ssd_layout* l = layout_of(text);
  const char* roles[3] = {"dt", "A", "dt_bias"};
  const int32_t dtypes[3] = {SSD_CAPI_BF16, SSD_CAPI_F32, SSD_CAPI_F32};
  const uint32_t poisons[3] = {0x7FDEu, 0x7FC0DEADu, 0x7FC0DEADu};
  int64_t buffers = 0, placements = 0;
  OK(ssd_capi_layout_buffer_count(l, &buffers));
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(buffers == 3 && placements == 3);
  for (int64_t i = 0; i < 3 && i < placements; ++i) {
    ssd_capi_placement_info v;
    ssd_capi_buffer_info b;
    OK(ssd_capi_layout_placement(l, i, &v));
    OK(ssd_capi_layout_buffer(l, i, &b));
    CHECK(strcmp(v.role, roles[i]) == 0 && strcmp(v.buffer, roles[i]) == 0 && strcmp(b.name, roles[i]) == 0);
    CHECK(b.dtype == dtypes[i] && b.poison == poisons[i]);
    CHECK(v.offset >= 0 && v.offset <= 3);
    CHECK(v.strides[v.rank - 1] == 1 || v.strides[v.rank - 1] == 2);
    int dense = v.strides[v.rank - 1] == 1;
    for (int32_t axis = v.rank - 1; axis >= 1; --axis) {
      int64_t outer = v.strides[axis - 1];
      if (axis == 1 && far && i == 0) outer -= (int64_t)1 << 31;
      const int64_t pad = outer / v.strides[axis] - v.shape[axis];
      CHECK(outer % v.strides[axis] == 0 && pad >= 0 && pad <= 3);
      dense = dense && pad == 0;
    }
    CHECK(!dense);
    int64_t last = v.offset;
    for (int32_t axis = 0; axis < v.rank; ++axis) last += (v.shape[axis] - 1) * v.strides[axis];
    CHECK(b.extent - (last + 1) >= 0 && b.extent - (last + 1) <= 3);
    if (far && i == 0) CHECK(b.extent > ((int64_t)1 << 31));
  }
  const int64_t shapes[3][3] = {{2, 5, 3}, {3, 0, 0}, {3, 0, 0}};
  for (int64_t i = 0; i < 3 && i < placements; ++i) {
    ssd_capi_placement_info v;
    OK(ssd_capi_layout_placement(l, i, &v));
    CHECK(v.rank == (i == 0 ? 3 : 1));
    for (int32_t axis = 0; axis < v.rank; ++axis) CHECK(v.shape[axis] == shapes[i][axis]);
    if (i > 0) CHECK(v.strides[0] == 2); /* rank 1: only the innermost stride can break density */
  }
  ssd_capi_layout_free(l);
}

static void test_strided(void) {
  check_strided("chunk_cumsum:bf16 b2 s5 h3 q2 +dt_bias layout=strided seed=11", 0);
  check_strided("chunk_cumsum:bf16 b2 s5 h3 q2 +dt_bias layout=strided +far seed=11", 1);
  check_strided("chunk_cumsum:bf16 b2 s5 h3 q2 +dt_bias layout=strided seed=12", 0);
}

/* The default layout has no buffers and no placements: every input is dense. */
static void test_contiguous(void) {
  ssd_layout* l = layout_of("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z seed=1");
  int64_t buffers = -1, placements = -1;
  OK(ssd_capi_layout_buffer_count(l, &buffers));
  OK(ssd_capi_layout_placement_count(l, &placements));
  CHECK(buffers == 0 && placements == 0);
  ssd_capi_layout_free(l);
  ssd_capi_layout_free(NULL);
}

static void test_errors(void) {
  ssd_layout* l = (ssd_layout*)1;
  CHECK(ssd_capi_layout_make(NULL, &l) == SSD_CAPI_INVALID_ARGUMENT && l == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_make: argument 'problem': is NULL"));
  ssd_problem* p = NULL;
  /* Parses, but +far needs a second batch row to put past 2^31. */
  OK(ssd_capi_problem_parse("chunk_cumsum:f32 b1 s4 h1 q2 layout=strided +far seed=1", &p));
  CHECK(ssd_capi_layout_make(p, NULL) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_make: argument 'out'"));
  l = (ssd_layout*)1;
  CHECK(ssd_capi_layout_make(p, &l) == SSD_CAPI_INVALID_ARGUMENT && l == NULL);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_make: argument 'problem': +far needs b >= 2"));
  ssd_capi_problem_free(p);
  /* mamba2's dt is f32 by default: it cannot share a bf16 x's buffer. */
  OK(ssd_capi_problem_parse("mamba2:bf16 b1 s4 h1 p2 g1 n2 q2 layout=zxbcdt seed=1", &p));
  CHECK(ssd_capi_layout_make(p, &l) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "keeps dt in the buffer of x"));
  ssd_capi_problem_free(p);

  l = layout_of("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1");
  ssd_capi_placement_info v;
  ssd_capi_buffer_info b;
  int64_t count = 0;
  CHECK(ssd_capi_layout_placement(l, 5, &v) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_placement: argument 'index': 5 is outside 0..5"));
  CHECK(ssd_capi_layout_buffer(l, -1, &b) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_buffer: argument 'index'"));
  CHECK(ssd_capi_layout_placement(l, 0, NULL) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'placement': is NULL"));
  CHECK(ssd_capi_layout_buffer(l, 0, NULL) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'buffer': is NULL"));
  CHECK(ssd_capi_layout_buffer_count(NULL, &count) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "ssd_capi_layout_buffer_count: argument 'layout': is NULL"));
  CHECK(ssd_capi_layout_placement_count(l, NULL) == SSD_CAPI_INVALID_ARGUMENT);
  CHECK(contains(ssd_capi_last_error(), "argument 'count': is NULL"));
  ssd_capi_layout_free(l);
}

static const char* verdict_of(const ssd_library* lib, const char* text) {
  static char verdict[16];
  ssd_problem* p = NULL;
  ssd_judgement* j = NULL;
  const char* v = NULL;
  verdict[0] = 0;
  OK(ssd_capi_problem_parse(text, &p));
  OK(ssd_capi_check_case(lib, p, &j));
  OK(ssd_capi_judgement_verdict(j, &v));
  if (v != NULL) strncpy(verdict, v, sizeof verdict - 1);
  ssd_capi_judgement_free(j);
  ssd_capi_problem_free(p);
  return verdict;
}

/* ssd_capi_check_case hands a kernel library the views themselves: the emulation with its strides
 * replaced by dense ones (mutant-strides_ignored) passes a contiguous case and fails the same case
 * as zxbcdt views (x read from column HP as if dense reads B, C, dt and the next rows) and as
 * strided views, all of which the honest emulation passes. */
static void test_library_gets_views(void) {
  const char* contiguous = "mamba2:f32 b2 s5 h2 p2 g1 n2 q4 +z seed=3";
  const char* zxbcdt = "mamba2:f32 b2 s5 h2 p2 g1 n2 q4 +z layout=zxbcdt seed=3";
  const char* strided = "mamba2:f32 b2 s5 h2 p2 g1 n2 q4 +z layout=strided seed=3";
  ssd_library *honest = NULL, *mutant = NULL;
  OK(ssd_capi_library_open("emulation", &honest));
  OK(ssd_capi_library_open("mutant-strides_ignored", &mutant));
  CHECK(strcmp(verdict_of(honest, zxbcdt), "PASSED") == 0);
  CHECK(strcmp(verdict_of(honest, strided), "PASSED") == 0);
  CHECK(strcmp(verdict_of(mutant, contiguous), "PASSED") == 0);
  CHECK(strcmp(verdict_of(mutant, zxbcdt), "FAILED") == 0);
  CHECK(strcmp(verdict_of(mutant, strided), "FAILED") == 0);
  ssd_capi_library_free(mutant);
  ssd_capi_library_free(honest);
}

int main(void) {
  CHECK(ssd_capi_version() == SSD_CAPI_VERSION && SSD_CAPI_VERSION == 2);
  test_zxbcdt_mamba2();
  test_zxbcdt_far();
  test_zxbcdt_recurrent_tie();
  test_zxbcdt_chunk_state();
  test_strided();
  test_contiguous();
  test_errors();
  test_library_gets_views();
  if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
  else printf("capi layout: every check holds\n");
  return check_failures ? 1 : 0;
}
