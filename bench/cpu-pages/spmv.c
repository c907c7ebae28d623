/*
 * 4 KiB pages against transparent huge pages for the native executor's
 * buffers (bench/cpu-pages.ts): one CSR matrix (the harness's raw format:
 * int32 rows, cols, nnz; int32 rowPtr[rows+1]; int32 colIdx[nnz]; float64
 * values[nnz]) laid out twice as the executor lays it out (x, y, the column
 * indices, the row pointers, the values, each on a 64-byte line, in one
 * block): once as the native library allocates it (posix_memalign, 64
 * bytes) and once on a 2 MiB boundary with madvise MADV_HUGEPAGE, and a
 * plain f64 SpMV timed over each in turn.
 *   spmv MATRIX.bin RUNS CALLS
 * prints "ms_4k ms_huge huge_kb": medians of RUNS timings of CALLS calls,
 * and the process's AnonHugePages after the huge block was touched.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void spmv(const int32_t *restrict rp, const int32_t *restrict ci, const double *restrict v,
                 const double *restrict x, double *restrict y, int rows) {
  for (int i = 0; i < rows; i++) {
    double acc = 0.0;
    for (int p = rp[i]; p < rp[i + 1]; p++) acc = acc + v[p] * x[ci[p]];
    y[i] = acc;
  }
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define LINE(n) (((n) + 63) / 64 * 64)
#define HUGE ((size_t)2 << 20)

static char *block(size_t bytes, int huge) {
  void *p = NULL;
  if (huge) {
    bytes = (bytes + HUGE - 1) / HUGE * HUGE;
    if (posix_memalign(&p, HUGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  } else if (posix_memalign(&p, 64, bytes) != 0)
    return NULL;
  memset(p, 0, bytes);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: spmv MATRIX.bin RUNS CALLS\n"), 2;
  FILE *f = fopen(argv[1], "rb");
  int32_t h[3];
  if (!f || fread(h, 4, 3, f) != 3) return fprintf(stderr, "%s: cannot read the header\n", argv[1]), 1;
  const int rows = h[0], cols = h[1], nnz = h[2], runs = atoi(argv[2]), calls = atoi(argv[3]);
  const size_t ox = 64, oy = ox + LINE(8 * (size_t)cols), oi = oy + LINE(8 * (size_t)rows),
               op = oi + LINE(4 * (size_t)nnz), ov = op + LINE(4 * (size_t)(rows + 1)), end = ov + LINE(8 * (size_t)nnz);
  char *b[2] = {block(end, 0), block(end, 1)};
  if (!b[0] || !b[1]) return fprintf(stderr, "out of memory\n"), 1;
  if (fread(b[0] + op, 4, rows + 1, f) != (size_t)(rows + 1) || fread(b[0] + oi, 4, nnz, f) != (size_t)nnz ||
      fread(b[0] + ov, 8, nnz, f) != (size_t)nnz)
    return fprintf(stderr, "%s: short file\n", argv[1]), 1;
  fclose(f);
  for (int j = 0; j < cols; j++) ((double *)(b[0] + ox))[j] = 1.0 + (j % 7) * 0.25;
  memcpy(b[1], b[0], end);
  double *t[2] = {malloc(sizeof(double) * runs), malloc(sizeof(double) * runs)};
  for (int r = 0; r < runs; r++)
    for (int k = 0; k < 2; k++) {
      char *m = b[(r + k) % 2];
      double t0 = now_ms();
      for (int c = 0; c < calls; c++)
        spmv((int32_t *)(m + op), (int32_t *)(m + oi), (double *)(m + ov), (double *)(m + ox), (double *)(m + oy), rows);
      t[(r + k) % 2][r] = (now_ms() - t0) / calls;
    }
  qsort(t[0], runs, sizeof(double), cmp);
  qsort(t[1], runs, sizeof(double), cmp);
  long huge_kb = 0;
  char line[256];
  FILE *s = fopen("/proc/self/smaps_rollup", "r");
  while (s && fgets(line, sizeof line, s))
    if (!strncmp(line, "AnonHugePages:", 14)) huge_kb = atol(line + 14);
  if (s) fclose(s);
  printf("%.6f %.6f %ld\n", t[0][runs / 2], t[1][runs / 2], huge_kb);
  return 0;
}
