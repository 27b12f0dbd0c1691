/* One rank of bench/steps.sh's PMIx fence: each rank puts a key, then times three fences that
 * collect data (the modex MPI_Init does): the first includes the ranks' start skew, the next two
 * are the fence itself. Prints "rank first second third" in milliseconds. */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(void) {
  pmix_proc_t me;
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
    fprintf(stderr, "PMIx_Init failed\n");
    return 1;
  }
  char text[64];
  snprintf(text, sizeof text, "address-of-rank-%u", me.rank);
  pmix_value_t value;
  value.type = PMIX_STRING;
  value.data.string = text;
  PMIx_Put(PMIX_GLOBAL, "bench.address", &value);
  PMIx_Commit();
  pmix_info_t info;
  bool collect = true;
  PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  double times[3];
  for (int i = 0; i < 3; ++i) {
    double start = Now();
    if (PMIx_Fence(NULL, 0, &info, 1) != PMIX_SUCCESS) {
      fprintf(stderr, "PMIx_Fence failed\n");
      return 1;
    }
    times[i] = Now() - start;
  }
  printf("%u %.3f %.3f %.3f\n", me.rank, times[0], times[1], times[2]);
  PMIx_Finalize(NULL, 0);
  return 0;
}
