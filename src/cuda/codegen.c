/* codegen.c -- compiling and launching the generated kernels: NVRTC to a
 * CUBIN for the current device's architecture, loaded through the
 * runtime's library API (cudaLibraryLoadData: no link to the driver
 * library libcuda, so programs start on machines without a GPU driver).  CUBINs are cached in memory (process-wide) and on disk
 * ($ADIA_CACHE_DIR, else ~/.cache/adia), keyed by FNV-1a 64 of the source
 * (which holds the structure and the library version) and the
 * architecture.  A failed compile keeps NVRTC's log (adia_codegen_log). */
#define _POSIX_C_SOURCE 200809L
#include "codegen.h"

#include "cuda_util.h"
#include "io/outfile.h"
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>

struct adia_codegen_kernel {
    cudaLibrary_t library;
    cudaKernel_t fn;
    int rows_per_thread;      /* R of the generated kernel's warp form (1 per-row) */
};


/* ------------------------------------------------------- in-memory cache */

typedef struct cache_entry { uint64_t key; void *cubin; size_t size; struct cache_entry *next; } cache_entry;
static cache_entry *mem_cache;
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* A malloc'd copy of the cached CUBIN for key, or NULL. */
static void *mem_get(uint64_t key, size_t *size)
{
    void *out = NULL;
    pthread_mutex_lock(&mem_lock);
    for (cache_entry *e = mem_cache; e; e = e->next)
        if (e->key == key && (out = malloc(e->size))) {
            memcpy(out, e->cubin, e->size);
            *size = e->size;
            break;
        }
    pthread_mutex_unlock(&mem_lock);
    return out;
}

static void mem_put(uint64_t key, const void *cubin, size_t size)
{
    cache_entry *e = malloc(sizeof *e);
    void *c = malloc(size);
    if (!e || !c) { free(e); free(c); return; }   /* a cache miss later, no error */
    memcpy(c, cubin, size);
    *e = (cache_entry){key, c, size, NULL};
    pthread_mutex_lock(&mem_lock);
    e->next = mem_cache;
    mem_cache = e;
    pthread_mutex_unlock(&mem_lock);
}

/* ----------------------------------------------------------- disk cache */

/* Cache file name for key, or false if no cache folder can be made. */
static bool disk_path(uint64_t key, char *path, size_t len)
{
    char name[32];
    snprintf(name, sizeof name, "%016llx.cubin", (unsigned long long)key);
    return adia__cache_path(name, path, len);
}

static void *disk_get(uint64_t key, size_t *size)
{
    char path[1024];
    if (!disk_path(key, path, sizeof path)) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *buf = NULL;
    long n = -1;
    if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
        (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *size = (size_t)n;
    return buf;
}

/* Through a safe output file, so readers never see half a file.  Best
 * effort: a cache that cannot be written only costs a compile next time. */
static void disk_put(uint64_t key, const void *cubin, size_t size)
{
    char path[1024];
    adia_outfile out;
    if (!disk_path(key, path, sizeof path) || adia__outfile_open(&out, path, false) != ADIA_OK)
        return;
    adia__outfile_write(&out, cubin, size);
    adia__outfile_commit(&out);
}

/* -------------------------------------------------------------- NVRTC */

static adia_status nvrtc_check(nvrtcResult r, const char *what)
{
    if (r == NVRTC_SUCCESS) return ADIA_OK;
    return adia__error(ADIA_ERR_NVRTC, "%s: %s", what, nvrtcGetErrorString(r));
}

/* Compile src for sm_<arch> into a malloc'd CUBIN; the log is kept. */
adia_status adia__codegen_nvrtc(const char *src, int arch, void **cubin, size_t *size)
{
    nvrtcProgram prog;
    ADIA_TRY(nvrtc_check(nvrtcCreateProgram(&prog, src, "adia_generated.cu", 0, NULL, NULL),
                         "nvrtcCreateProgram"));
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    const char *opts[] = {archopt, "--std=c++14", "-default-device"};
    nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
    size_t loglen = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && (log = malloc(loglen + 1))) {
        if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
        log[loglen] = '\0';
    }
    adia__codegen_set_log(log);
    adia_status s = ADIA_OK;
    if (r != NVRTC_SUCCESS) {
        s = adia__error(ADIA_ERR_NVRTC, "compiling the generated kernel for sm_%d: %s: %.400s",
                       arch, nvrtcGetErrorString(r), log ? log : "");
    } else {
        s = nvrtc_check(nvrtcGetCUBINSize(prog, size), "nvrtcGetCUBINSize");
        if (s == ADIA_OK && !(*cubin = malloc(*size)))
            s = adia__error(ADIA_ERR_NO_MEMORY, "generated kernel: out of memory");
        if (s == ADIA_OK) {
            s = nvrtc_check(nvrtcGetCUBIN(prog, *cubin), "nvrtcGetCUBIN");
            if (s != ADIA_OK) free(*cubin);
        }
    }
    free(log);
    nvrtcDestroyProgram(&prog);
    return s;
}

static adia_status device_arch(int *arch)
{
    int dev, major, minor;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (e != cudaSuccess)
        return adia__error(ADIA_ERR_CUDA, "code generator: cannot query the device: %s",
                          cudaGetErrorString(e));
    /* NVRTC may not know a newer device than itself: use its newest arch. */
    int n = 0, best = 0;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
        int *a = malloc((size_t)n * sizeof *a);
        if (a && nvrtcGetSupportedArchs(a) == NVRTC_SUCCESS)
            for (int i = 0; i < n; i++)
                if (a[i] <= major * 10 + minor && a[i] > best) best = a[i];
        free(a);
    }
    *arch = best ? best : major * 10 + minor;
    return ADIA_OK;
}

/* The cache key of src on this device (arch: NVRTC's target for it). */
static adia_status cubin_key(const char *src, int *arch, uint64_t *key)
{
    ADIA_TRY(device_arch(arch));
    uint64_t k = adia__fnv1a(0, src, strlen(src));
    k = adia__fnv1a(k, arch, sizeof *arch);
    *key = adia__fnv1a(k, ADIA_VERSION_STRING, sizeof ADIA_VERSION_STRING);
    return ADIA_OK;
}

/* The cached CUBIN of key (memory, then disk), or NULL. */
static void *cached_cubin(uint64_t key, size_t *size)
{
    void *cubin = mem_get(key, size);
    if (!cubin && (cubin = disk_get(key, size))) mem_put(key, cubin, *size);
    return cubin;
}

/* NVRTC, the result kept in both caches.  No CUDA runtime call: safe on a
 * thread of its own while another captures a graph. */
static adia_status compile_cubin(const char *src, int arch, uint64_t key, void **cubin,
                                 size_t *size)
{
    ADIA_TRY(adia__codegen_nvrtc(src, arch, cubin, size));
    mem_put(key, *cubin, *size);
    disk_put(key, *cubin, *size);
    return ADIA_OK;
}

/* The CUBIN for src on this device: memory cache, disk cache, or NVRTC. */
static adia_status get_cubin(const char *src, void **cubin, size_t *size)
{
    int arch;
    uint64_t key;
    ADIA_TRY(cubin_key(src, &arch, &key));
    if ((*cubin = cached_cubin(key, size))) return ADIA_OK;
    return compile_cubin(src, arch, key, cubin, size);
}

/* Rows per thread of D's generated kernel (1: the per-row form). */
static int kernel_rows(const adia_diag *D, adia_value_type vt, int rows)
{
    const int R = adia__codegen_rows_per_thread(D, vt, rows);
    return R > 0 ? R : 1;
}

/* A loaded kernel from its CUBIN (freed here either way); R: its rows per
 * thread (kernel_rows). */
static adia_status load_kernel(void *cubin, int R, adia_codegen_kernel **out)
{
    adia_codegen_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        free(cubin);
        return adia__error(ADIA_ERR_NO_MEMORY, "generated kernel: out of memory");
    }
    k->rows_per_thread = R;
    adia_status s = adia_cuda_check(cudaLibraryLoadData(&k->library, cubin, NULL, NULL, 0, NULL,
                                                        NULL, 0),
                                    "loading the generated kernel (cudaLibraryLoadData)");
    free(cubin);
    if (s == ADIA_OK)
        s = adia_cuda_check(cudaLibraryGetKernel(&k->fn, k->library, ADIA_CODEGEN_KERNEL),
                            "cudaLibraryGetKernel");
    if (s != ADIA_OK) {
        adia__codegen_free(k);
        return s;
    }
    *out = k;
    return ADIA_OK;
}

adia_status adia__codegen_compile(const adia_diag *D, adia_value_type vt, int rows, int dot,
                                 adia_codegen_kernel **out)
{
    *out = NULL;
    char *src = NULL;
    ADIA_TRY(adia__codegen_diag_source(D, vt, rows, dot, &src));
    void *cubin = NULL;
    size_t size = 0;
    adia_status s = get_cubin(src, &cubin, &size);
    free(src);
    ADIA_TRY(s);
    return load_kernel(cubin, kernel_rows(D, vt, rows), out);
}

/* ------------------------------------------------- background compiles */

/* A compile on a thread of its own.  Shared by the thread and the owner
 * (refs: 2 while both hold it); whoever lets go last frees it, so an owner
 * that goes (a plan destroyed mid-compile) never waits for NVRTC: the
 * thread finishes, fills the caches for the next plan, and frees the job. */
struct adia_codegen_job {
    pthread_mutex_t lock;
    int refs;
    int done;                 /* the thread finished (under lock)     */
    adia_status status;       /* its result, once done                */
    char error[512];          /* its message when status != ADIA_OK   */
    char *src;
    int arch;
    uint64_t key;
    void *cubin;              /* the result; taken by adia__codegen_job_load */
    size_t size;
    int rows_per_thread;      /* of the kernel, taken at the start: the job keeps no
                                 pointer into its owner, which may go first */
};

/* Compiles still running, so that the process waits for them at exit: a
 * thread inside NVRTC while the libraries' static destructors run could
 * crash the exit, and a finished compile fills the disk cache for the next
 * run (a CLI solve shorter than the compile prints its result first and
 * then waits, at most one compile). */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t running_done = PTHREAD_COND_INITIALIZER;
static int running;
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;

static void wait_running(void)
{
    pthread_mutex_lock(&running_lock);
    while (running > 0) pthread_cond_wait(&running_done, &running_lock);
    pthread_mutex_unlock(&running_lock);
}

static void register_wait(void) { atexit(wait_running); }

static void running_add(int n)
{
    pthread_mutex_lock(&running_lock);
    running += n;
    if (running == 0) pthread_cond_broadcast(&running_done);
    pthread_mutex_unlock(&running_lock);
}

static void job_unref(adia_codegen_job *j)
{
    pthread_mutex_lock(&j->lock);
    int left = --j->refs;
    pthread_mutex_unlock(&j->lock);
    if (left) return;
    pthread_mutex_destroy(&j->lock);
    free(j->src);
    free(j->cubin);
    free(j);
}

static void *job_run(void *arg)
{
    adia_codegen_job *j = arg;
    void *cubin = NULL;
    size_t size = 0;
    adia_status s = compile_cubin(j->src, j->arch, j->key, &cubin, &size);
    pthread_mutex_lock(&j->lock);
    j->status = s;
    if (s != ADIA_OK) snprintf(j->error, sizeof j->error, "%s", adia_last_error());
    adia__codegen_set_log(NULL);   /* this thread's copy of the NVRTC log, which nobody reads */
    j->cubin = cubin;
    j->size = size;
    j->done = 1;
    pthread_mutex_unlock(&j->lock);
    job_unref(j);
    running_add(-1);
    return NULL;
}

adia_status adia__codegen_start(const adia_diag *D, adia_value_type vt, int rows, int dot,
                                adia_codegen_job **out)
{
    *out = NULL;
    adia_codegen_job *j = calloc(1, sizeof *j);
    if (!j) return adia__error(ADIA_ERR_NO_MEMORY, "generated kernel: out of memory");
    j->rows_per_thread = kernel_rows(D, vt, rows);
    j->refs = 1;
    pthread_mutex_init(&j->lock, NULL);
    adia_status s = adia__codegen_diag_source(D, vt, rows, dot, &j->src);
    if (s == ADIA_OK) s = cubin_key(j->src, &j->arch, &j->key);   /* CUDA calls: here */
    if (s == ADIA_OK && (j->cubin = cached_cubin(j->key, &j->size))) {
        j->done = 1;   /* no thread needed */
        j->status = ADIA_OK;
    } else if (s == ADIA_OK) {
        pthread_t t;
        pthread_attr_t attr;
        j->refs = 2;
        pthread_once(&at_exit_once, register_wait);
        running_add(1);
        int e = pthread_attr_init(&attr);
        if (!e) e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (!e) e = pthread_create(&t, &attr, job_run, j);
        pthread_attr_destroy(&attr);
        if (e) {
            running_add(-1);
            j->refs = 1;
            s = adia__error(ADIA_ERR_INTERNAL, "generated kernel: no compile thread (error %d)",
                           e);
        }
    }
    if (s != ADIA_OK) {
        job_unref(j);
        return s;
    }
    *out = j;
    return ADIA_OK;
}

int adia__codegen_job_ready(adia_codegen_job *j)
{
    pthread_mutex_lock(&j->lock);
    int done = j->done;
    pthread_mutex_unlock(&j->lock);
    return done;
}

adia_status adia__codegen_job_load(adia_codegen_job *j, adia_codegen_kernel **out)
{
    *out = NULL;
    pthread_mutex_lock(&j->lock);
    int done = j->done;
    adia_status s = j->status;
    void *cubin = j->cubin;
    j->cubin = NULL;
    pthread_mutex_unlock(&j->lock);
    if (!done) return adia__error(ADIA_ERR_INTERNAL, "generated kernel: compile not finished");
    if (s != ADIA_OK) return adia__error(s, "%s", j->error);
    if (!cubin) return adia__error(ADIA_ERR_INTERNAL, "generated kernel: loaded already");
    return load_kernel(cubin, j->rows_per_thread, out);
}

void adia__codegen_job_release(adia_codegen_job *j)
{
    if (j) job_unref(j);
}

int adia__codegen_cached(const adia_diag *D, adia_value_type vt, int rows, int dot)
{
    char *src = NULL;
    int arch;
    uint64_t key;
    size_t size;
    void *cubin = NULL;
    if (adia__codegen_diag_source(D, vt, rows, dot, &src) == ADIA_OK &&
        cubin_key(src, &arch, &key) == ADIA_OK)
        cubin = cached_cubin(key, &size);
    adia_clear_error();
    const int hit = cubin != NULL;
    free(src);
    free(cubin);
    return hit;
}

unsigned adia__codegen_grid(const adia_codegen_kernel *k, const adia_diag_args *a, int block)
{
    int64_t threads = ((int64_t)a->rows + k->rows_per_thread - 1) / k->rows_per_thread;
    return (unsigned)((threads + block - 1) / block);
}

adia_status adia__codegen_launch(const adia_codegen_kernel *k, const adia_diag_args *a,
                                adia_value_type vt, double alpha, double beta,
                                const void *x, void *y, const adia_dot_work *dw, int block,
                                void *stream)
{
    if (!k) return adia__error(ADIA_ERR_INTERNAL, "generated kernel not compiled");
    double ad = alpha, bd = beta;
    float af = (float)alpha, bf = (float)beta;
    adia_dot_work none = {0};
    void *params[] = {(void *)a, vt == ADIA_DOUBLE ? (void *)&ad : (void *)&af,
                      vt == ADIA_DOUBLE ? (void *)&bd : (void *)&bf, (void *)&x, (void *)&y,
                      (void *)(dw ? dw : &none)};
    dim3 g = {adia__codegen_grid(k, a, block), 1, 1}, b = {(unsigned)block, 1, 1};
    return adia_cuda_check(cudaLaunchKernel((const void *)k->fn, g, b, params, 0,
                                            (cudaStream_t)stream),
                           "launching the generated kernel");
}

void adia__codegen_free(adia_codegen_kernel *k)
{
    if (!k) return;
    if (k->library) cudaLibraryUnload(k->library);
    free(k);
}
