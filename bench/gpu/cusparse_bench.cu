// cuSPARSE baseline of bench/gpu/run.sh, timed in the same way as the generated kernels.
//
// Reads a job's inputs with dype_check's own reader (the generated dype_check_common.h of any
// CUDA project, on the include path: Matrix Market, .npy, .csr folders), so both see the same
// matrix; runs y = A x (an --input x) or Y = A B (an --input B, row-major) in float32 with every
// CSR algorithm of cuSPARSE that takes the layout; checks each result against the float64
// reference (--ref) as dype_check does; then times each one as dype_check times a variant: CUDA
// events around every call on one stream, the median of --reps after --warmup calls. The
// descriptors, the work buffer and cuSPARSE's preprocessing are made once, before the timing, so
// a timed call is the library's compute alone (what dype_check times of a generated kernel).
//
//   cusparse_bench --input A=FILE --input x=FILE [--ref y=FILE] [--csv FILE] [--reps N] [--warmup N]
//   cusparse_bench --input A=FILE --input B=FILE [--ref Y=FILE] ...
// CSV rows (dype_check's columns): kernel cusparse, op spmv or spmm, variant the algorithm.
// Exit status: 0 every algorithm ran and matched, 1 a mismatch or bad input, 2 bad usage, 3 a
// CUDA or cuSPARSE error.
#include "dype_check_common.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>


namespace {

struct CudaFailure : std::runtime_error { using std::runtime_error::runtime_error; };

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure(std::string(what) + ": " + cudaGetErrorString(e));
}

void sparse_ok(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw CudaFailure(std::string(what) + ": " + cusparseGetErrorString(s));
}

template <typename T> struct DeviceBuffer {
  T* p = nullptr;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  explicit DeviceBuffer(size_t n) { cuda_ok(cudaMalloc((void**)&p, std::max<size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
  template <typename S> explicit DeviceBuffer(const std::vector<S>& host) : DeviceBuffer(host.size()) {
    std::vector<T> conv(host.begin(), host.end());
    cuda_ok(cudaMemcpy(p, conv.data(), conv.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  ~DeviceBuffer() { cudaFree(p); }
  std::vector<double> download(size_t n) const {
    std::vector<T> h(n);
    cuda_ok(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    return std::vector<double>(h.begin(), h.end());
  }
};

struct Timing {
  double median_ms = 0, min_ms = 0;
};

template <typename F> Timing time_it(F call, const Cli& cli, cudaStream_t stream) {
  for (int w = 0; w < cli.warmup; ++w) call();
  cuda_ok(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t a, b;
  cuda_ok(cudaEventCreate(&a), "cudaEventCreate");
  cuda_ok(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<double> ms;
  for (int r = 0; r < cli.reps; ++r) {
    cuda_ok(cudaEventRecord(a, stream), "cudaEventRecord");
    call();
    cuda_ok(cudaEventRecord(b, stream), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(b), "timed call");
    float t = 0;
    cuda_ok(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.min_ms = ms.front();
  t.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return t;
}

// cuSPARSE's answer for a layout it does not take (the SpMM algorithms are layout-specific).
bool supported(cusparseStatus_t s, const char* what) {
  if (s == CUSPARSE_STATUS_NOT_SUPPORTED) return false;
  sparse_ok(s, what);
  return true;
}

struct Job {
  const Cli& cli;
  Checker& chk;
  FILE* csv;
  cusparseHandle_t handle;
  cudaStream_t stream;

  // One algorithm: its work buffer and preprocessing once, a checked call, then the timed calls. `size`,
  // `preprocess` and `compute` are the algorithm's three cuSPARSE calls (the last two given the work buffer).
  template <typename Size, typename Preprocess, typename Compute, typename Got>
  void algorithm(const char* op, const char* name, Size size, Preprocess preprocess, Compute compute, const char* result, Got got) {
    size_t bytes = 0;
    if (!supported(size(&bytes), "bufferSize")) {
      std::printf("  %-12s %-16s not supported for this layout\n", op, name);
      return;
    }
    DeviceBuffer<char> work(bytes);
    if (!supported(preprocess((void*)work.p), "preprocess")) {
      std::printf("  %-12s %-16s not supported for this layout\n", op, name);
      return;
    }
    auto call = [&] { sparse_ok(compute((void*)work.p), name); };
    call();
    cuda_ok(cudaStreamSynchronize(stream), name);
    const std::string check = chk.compare(std::string(op) + " " + name, result, got(), nullptr, cli.rtol < 0 ? 1e-4 : cli.rtol);
    if (cli.check_only) return;
    const Timing t = time_it(call, cli, stream);
    std::printf("  %-12s %-16s %10.4f ms (min %.4f)\n", op, name, t.median_ms, t.min_ms);
    if (csv) std::fprintf(csv, "cusparse,%s,%s,%.6f,%.6f,%d,%s\n", op, name, t.median_ms, t.min_ms, cli.reps, check.c_str());
  }
};

// The CSR form alone (sparse_of also builds the CSC form, a second sort of every entry).
Sparse csr_of(const Mtx& file) {
  const Mtx m = as_entries(file);
  Sparse s;
  s.rows = m.rows;
  s.cols = m.cols;
  compress(m, true, s.rowPtr, s.colIdx, s.vals);
  return s;
}

void spmv(Job& job, const Sparse& a, const Dense& x) {
  if (x.rows * x.cols != a.cols) throw std::runtime_error("x has " + std::to_string(x.rows * x.cols) + " values, A has " + std::to_string(a.cols) + " columns");
  DeviceBuffer<int> ptr(a.rowPtr), idx(a.colIdx);
  DeviceBuffer<float> val(a.vals), dx(x.v), dy((size_t)a.rows);
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  sparse_ok(cusparseCreateCsr(&A, a.rows, a.cols, a.nnz(), ptr.p, idx.p, val.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F), "cusparseCreateCsr");
  sparse_ok(cusparseCreateDnVec(&X, a.cols, dx.p, CUDA_R_32F), "cusparseCreateDnVec");
  sparse_ok(cusparseCreateDnVec(&Y, a.rows, dy.p, CUDA_R_32F), "cusparseCreateDnVec");
  const float one = 1, zero = 0;
  const std::pair<cusparseSpMVAlg_t, const char*> algs[] = {{CUSPARSE_SPMV_CSR_ALG1, "CSR_ALG1"}, {CUSPARSE_SPMV_CSR_ALG2, "CSR_ALG2"}};
  const auto N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  for (const auto& entry : algs) {
    const auto alg = entry.first;
    job.algorithm(
        "spmv", entry.second,
        [&](size_t* bytes) { return cusparseSpMV_bufferSize(job.handle, N, &one, A, X, &zero, Y, CUDA_R_32F, alg, bytes); },
        [&](void* w) { return cusparseSpMV_preprocess(job.handle, N, &one, A, X, &zero, Y, CUDA_R_32F, alg, w); },
        [&](void* w) { return cusparseSpMV(job.handle, N, &one, A, X, &zero, Y, CUDA_R_32F, alg, w); },
        "y", [&] { return dy.download((size_t)a.rows); });
  }
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  cusparseDestroySpMat(A);
}

void spmm(Job& job, const Sparse& a, const Dense& b) {
  if (b.rows != a.cols) throw std::runtime_error("B has " + std::to_string(b.rows) + " rows, A has " + std::to_string(a.cols) + " columns");
  const long long k = b.cols;
  DeviceBuffer<int> ptr(a.rowPtr), idx(a.colIdx);
  DeviceBuffer<float> val(a.vals), dB(b.v), dC((size_t)(a.rows * k));
  cusparseSpMatDescr_t A;
  cusparseDnMatDescr_t B, C;
  sparse_ok(cusparseCreateCsr(&A, a.rows, a.cols, a.nnz(), ptr.p, idx.p, val.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F), "cusparseCreateCsr");
  sparse_ok(cusparseCreateDnMat(&B, b.rows, k, k, dB.p, CUDA_R_32F, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
  sparse_ok(cusparseCreateDnMat(&C, a.rows, k, k, dC.p, CUDA_R_32F, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
  const float one = 1, zero = 0;
  const auto N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const std::pair<cusparseSpMMAlg_t, const char*> algs[] = {{CUSPARSE_SPMM_CSR_ALG1, "CSR_ALG1"}, {CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2"}, {CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3"}};
  for (const auto& entry : algs) {
    const auto alg = entry.first;
    job.algorithm(
        "spmm", entry.second,
        [&](size_t* bytes) { return cusparseSpMM_bufferSize(job.handle, N, N, &one, A, B, &zero, C, CUDA_R_32F, alg, bytes); },
        [&](void* w) { return cusparseSpMM_preprocess(job.handle, N, N, &one, A, B, &zero, C, CUDA_R_32F, alg, w); },
        [&](void* w) { return cusparseSpMM(job.handle, N, N, &one, A, B, &zero, C, CUDA_R_32F, alg, w); },
        "Y", [&] { return dC.download((size_t)(a.rows * k)); });
  }
  cusparseDestroyDnMat(B);
  cusparseDestroyDnMat(C);
  cusparseDestroySpMat(A);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Cli cli = parse(argc, argv, false);
    const bool isSpmv = cli.inputs.count("x") > 0;
    if (isSpmv == (cli.inputs.count("B") > 0)) throw Usage("give --input A and exactly one of --input x (SpMV) or --input B (SpMM)");
    const Sparse a = csr_of(read_input(input_path(cli, "A")));
    const Dense dense = load_dense(cli, isSpmv ? "x" : "B");
    cudaDeviceProp prop;
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s (sm_%d%d), cuSPARSE %d\n", prop.name, prop.major, prop.minor, CUSPARSE_VERSION);
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    cusparseHandle_t handle;
    sparse_ok(cusparseCreate(&handle), "cusparseCreate");
    sparse_ok(cusparseSetStream(handle, stream), "cusparseSetStream");
    FILE* csv = nullptr;
    if (!cli.csv.empty()) {
      csv = std::fopen(cli.csv.c_str(), "w");
      if (!csv) throw std::runtime_error(cli.csv + ": cannot write: " + std::strerror(errno));
      std::fprintf(csv, "kernel,op,variant,median_ms,min_ms,reps,check\n");
    }
    Checker chk(cli);
    Job job{cli, chk, csv, handle, stream};
    if (isSpmv) spmv(job, a, dense);
    else spmm(job, a, dense);
    if (csv) std::fclose(csv);
    cusparseDestroy(handle);
    cudaStreamDestroy(stream);
    std::printf(chk.failures == 0 ? "all checks passed\n" : "%d check(s) failed\n", chk.failures);
    return chk.failures == 0 ? 0 : 1;
  } catch (const Usage& u) {
    if (u.what()[0]) std::fprintf(stderr, "cusparse_bench: usage: %s\n", u.what());
    std::fprintf(stderr, "usage: cusparse_bench --input A=FILE (--input x=FILE | --input B=FILE) [--ref y|Y=FILE] [--csv FILE] [--reps N>=20] [--warmup N] [--rtol R] [--check-only]\n");
    return 2;
  } catch (const CudaFailure& e) {
    std::fprintf(stderr, "cusparse_bench: CUDA error: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cusparse_bench: %s\n", e.what());
    return 1;
  }
}
