/* A minimal check macro for the C API's C tests: prints the failed condition with its line and the
 * API's last error, counts failures, and lets the test run on (so one run shows every failure). */
#ifndef SSD_CAPI_TEST_CHECK_H
#define SSD_CAPI_TEST_CHECK_H
#include <stdio.h>

#include "ssd/capi.h"

static int check_failures = 0;

#define CHECK(cond)                                                                                  \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      ++check_failures;                                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond,       \
              ssd_capi_last_error());                                                                \
    }                                                                                                \
  } while (0)

/* A call that must succeed. */
#define OK(call) CHECK((call) == SSD_CAPI_OK)

#endif
