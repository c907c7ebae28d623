/*
 * Baseline CPU kernels for bench/cpu-kernels.ts: CSR SpMV (f32, f64) and
 * SpMM with K = 32 (f32, explicit 8-wide vector extensions, since gcc's plain
 * loop over K is a poor baseline). Single-threaded. Built as a shared
 * library that the bench loads (koffi) and calls in turn with dype's
 * executors, so that the machine's load hits the baseline and dype alike:
 *   dy_bench_load(MATRIX.bin)  reads a CSR matrix in the harness's raw format
 *     (int32 rows, cols, nnz; int32 rowPtr[rows+1]; int32 colIdx[nnz];
 *     float64 values[nnz]) and makes the operands; 0 on success.
 *   dy_bench_run(kernel)       runs kernel 0 (spmv_f32), 1 (spmv_f64) or
 *     2 (spmm32_f32) once and returns a check value (an output element).
 *   dy_bench_free()            releases them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float v8f __attribute__((vector_size(32)));

static void spmv_f32(int rows, const int32_t *rp, const int32_t *ci, const float *v, const float *x, float *y) {
  for (int i = 0; i < rows; i++) {
    float acc = 0;
    for (int p = rp[i]; p < rp[i + 1]; p++) acc += v[p] * x[ci[p]];
    y[i] = acc;
  }
}

static void spmv_f64(int rows, const int32_t *rp, const int32_t *ci, const double *v, const double *x, double *y) {
  for (int i = 0; i < rows; i++) {
    double acc = 0;
    for (int p = rp[i]; p < rp[i + 1]; p++) acc += v[p] * x[ci[p]];
    y[i] = acc;
  }
}

/* Y[i, :] = sum_p A[i, j_p] * B[j_p, :], K = 32 as four 8-wide vectors. */
static void spmm32_f32(int rows, const int32_t *rp, const int32_t *ci, const float *v, const float *B, float *Y) {
  for (int i = 0; i < rows; i++) {
    v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int p = rp[i]; p < rp[i + 1]; p++) {
      const float *b = B + (size_t)ci[p] * 32;
      v8f s = {v[p], v[p], v[p], v[p], v[p], v[p], v[p], v[p]};
      v8f b0, b1, b2, b3;
      memcpy(&b0, b, 32);
      memcpy(&b1, b + 8, 32);
      memcpy(&b2, b + 16, 32);
      memcpy(&b3, b + 24, 32);
      a0 += s * b0;
      a1 += s * b1;
      a2 += s * b2;
      a3 += s * b3;
    }
    float *y = Y + (size_t)i * 32;
    memcpy(y, &a0, 32);
    memcpy(y + 8, &a1, 32);
    memcpy(y + 16, &a2, 32);
    memcpy(y + 24, &a3, 32);
  }
}

static int rows, cols, nnz;
static int32_t *rp, *ci;
static double *v64, *x64, *y64;
static float *v32, *x32, *y32, *B, *Y;

void dy_bench_free(void) {
  free(rp), free(ci), free(v64), free(x64), free(y64), free(v32), free(x32), free(y32), free(B), free(Y);
  rp = ci = NULL;
  v64 = x64 = y64 = NULL;
  v32 = x32 = y32 = B = Y = NULL;
}

int dy_bench_load(const char *path) {
  dy_bench_free();
  FILE *f = fopen(path, "rb");
  if (!f) return 1;
  int32_t hdr[3];
  if (fread(hdr, 4, 3, f) != 3) return fclose(f), 1;
  rows = hdr[0], cols = hdr[1], nnz = hdr[2];
  rp = malloc(4 * (size_t)(rows + 1)), ci = malloc(4 * (size_t)nnz);
  v64 = malloc(8 * (size_t)nnz);
  if (fread(rp, 4, rows + 1, f) != (size_t)(rows + 1) || fread(ci, 4, nnz, f) != (size_t)nnz ||
      fread(v64, 8, nnz, f) != (size_t)nnz)
    return fclose(f), 1;
  fclose(f);
  v32 = malloc(4 * (size_t)nnz);
  for (int p = 0; p < nnz; p++) v32[p] = (float)v64[p];
  x64 = malloc(8 * (size_t)cols), y64 = malloc(8 * (size_t)rows);
  x32 = malloc(4 * (size_t)cols), y32 = malloc(4 * (size_t)rows);
  B = aligned_alloc(32, 4 * (size_t)cols * 32 + 32), Y = aligned_alloc(32, 4 * (size_t)rows * 32 + 32);
  for (int j = 0; j < cols; j++) {
    x64[j] = 1.0 + (j % 7) * 0.25;
    x32[j] = (float)x64[j];
    for (int k = 0; k < 32; k++) B[(size_t)j * 32 + k] = (float)((j + k) % 5) * 0.5f;
  }
  return 0;
}

double dy_bench_run(int kernel) {
  switch (kernel) {
    case 0:
      spmv_f32(rows, rp, ci, v32, x32, y32);
      return y32[rows / 2];
    case 1:
      spmv_f64(rows, rp, ci, v64, x64, y64);
      return y64[rows / 2];
    case 2:
      spmm32_f32(rows, rp, ci, v32, B, Y);
      return Y[(size_t)(rows / 2) * 32 + 3];
    default:
      return 0.0 / 0.0;
  }
}
