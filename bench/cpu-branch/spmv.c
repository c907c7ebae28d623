/*
 * SpMV (f32, CSR) timed run by run on one generated pattern, to see what
 * the branch predictor learns of the row lengths across repeated runs
 * (bench/cpu-branch.ts). Usage: spmv ROWS MAXLEN RUNS SEED; MAXLEN 0 gives
 * every row 2 entries, else lengths uniform in 1..MAXLEN. Prints one line:
 * ns per row of each run, space-separated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static unsigned long long state;
static unsigned next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (unsigned)state;
}

/* Not inlined: the loop is the one every run executes, at the same address. */
__attribute__((noinline)) static void spmv(int n, const int *rp, const int *ci, const float *v, const float *x, float *y) {
  for (int i = 0; i < n; i++) {
    float a = 0;
    for (int p = rp[i]; p < rp[i + 1]; p++) a += v[p] * x[ci[p]];
    y[i] = a;
  }
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  int n = atoi(argv[1]), maxlen = atoi(argv[2]), runs = atoi(argv[3]);
  state = 88172645463325252ULL + (unsigned long long)atoi(argv[4]);
  int cap = maxlen > 2 ? maxlen : 2;
  int *rp = malloc(sizeof(int) * (n + 1));
  int *ci = malloc(sizeof(int) * (size_t)n * cap);
  float *v = malloc(sizeof(float) * (size_t)n * cap), *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  if (!rp || !ci || !v || !x || !y) return 3;
  rp[0] = 0;
  for (int i = 0; i < n; i++) {
    int len = maxlen == 0 ? 2 : 1 + (int)(next() % (unsigned)maxlen);
    for (int k = 0; k < len; k++) {
      ci[rp[i] + k] = (int)(next() % (unsigned)n);
      v[rp[i] + k] = 0.5f;
    }
    rp[i + 1] = rp[i] + len;
  }
  for (int i = 0; i < n; i++) x[i] = 1;
  float sink = 0;
  for (int r = 0; r < runs; r++) {
    double t = now_ns();
    spmv(n, rp, ci, v, x, y);
    t = now_ns() - t;
    sink += y[r % n];
    printf("%s%.3f", r ? " " : "", t / n);
  }
  printf("\n");
  return sink == -1.0f;
}
