// adia._adia: the nanobind binding of include/adia.h used by python/adia.
//
// Arrays come in as nb::ndarray (buffer protocol, DLPack,
// __cuda_array_interface__: NumPy and CuPy without copies) and are checked
// here -- value type, one dimension, unit stride, length, device -- before
// any pointer reaches C: a bad argument is a Python exception, never a
// crash.  Arrays going out are allocated by the Python side and filled
// here, which keeps this file independent of nanobind's ndarray-returning
// API (changed between nanobind 1 and 2).
//
// Errors: every adia_status < 0 becomes the Python exception class
// registered for it by adia/_errors.py (adia.Error and its subclasses),
// carrying adia_last_error() and the status as .status.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "adia.h"

namespace nb = nanobind;
using namespace nb::literals;

#if defined(NB_VERSION_MAJOR) && NB_VERSION_MAJOR >= 2
using any_array = nb::ndarray<nb::ro>;   // read-only arrays welcome (x, b, CSR arrays)
using out_array = nb::ndarray<>;         // writable
#else
using any_array = nb::ndarray<>;
using out_array = nb::ndarray<>;
#endif

// ---------------------------------------------------------------- errors

static std::map<int, nb::object> *g_error_classes;   // status -> class
static nb::object *g_error_base;                     // adia.Error

[[noreturn]] static void raise_class(PyObject *cls, const std::string &msg, int status)
{
    nb::object exc = nb::borrow<nb::object>(cls)(msg);
    try {
        nb::setattr(exc, "status", nb::int_(status));
    } catch (...) {
    }
    PyErr_SetObject(cls, exc.ptr());
    throw nb::python_error();
}

[[noreturn]] static void raise_status(adia_status st, const char *what = nullptr)
{
    std::string msg = adia_last_error();
    if (msg.empty()) msg = adia_status_string(st);
    if (what && *what) msg = std::string(what) + ": " + msg;
    PyObject *cls = PyExc_RuntimeError;
    if (g_error_classes) {
        auto it = g_error_classes->find((int)st);
        if (it != g_error_classes->end())
            cls = it->second.ptr();
        else if (g_error_base)
            cls = g_error_base->ptr();
    }
    raise_class(cls, msg, (int)st);
}

static inline void check(adia_status st, const char *what = nullptr)
{
    if (st != ADIA_OK) raise_status(st, what);
}

[[noreturn]] static void value_error(const std::string &msg)
{
    throw nb::value_error(msg.c_str());
}
[[noreturn]] static void type_error(const std::string &msg)
{
    throw nb::type_error(msg.c_str());
}

// ---------------------------------------------------------------- arrays

enum { DEV_CPU = 1, DEV_CUDA = 2, DEV_CUDA_HOST = 3, DEV_CUDA_MANAGED = 13 };

static const char *dtype_name(nb::dlpack::dtype d)
{
    if (d == nb::dtype<double>()) return "float64";
    if (d == nb::dtype<float>()) return "float32";
    if (d == nb::dtype<int64_t>()) return "int64";
    if (d == nb::dtype<int32_t>()) return "int32";
    return "another dtype";
}

// A one-dimensional contiguous array of `want` values of type d on the
// host (gpu = false) or the device (gpu = true); n < 0: any length.
template <class A>
static void *vec_ptr(const A &a, nb::dlpack::dtype d, int64_t n, bool gpu, const char *name)
{
    if (a.ndim() != 1)
        value_error(std::string(name) + " must be one-dimensional, got " + std::to_string(a.ndim()) +
                    " dimensions");
    if (a.dtype() != d)
        type_error(std::string(name) + " must be " + dtype_name(d) + ", got " + dtype_name(a.dtype()));
    if (n >= 0 && (int64_t)a.shape(0) != n)
        value_error(std::string(name) + " has length " + std::to_string(a.shape(0)) + ", expected " +
                    std::to_string(n));
    if (a.shape(0) > 1 && a.stride(0) != 1)
        value_error(std::string(name) + " must be contiguous (stride 1), got stride " +
                    std::to_string(a.stride(0)));
    int dt = a.device_type();
    if (gpu) {
        if (dt != DEV_CUDA && dt != DEV_CUDA_MANAGED)
            type_error(std::string(name) +
                       " must be a CUDA device array (CuPy) for a GPU plan; use cupy.asarray()");
    } else if (dt != DEV_CPU && dt != DEV_CUDA_HOST) {
        type_error(std::string(name) + " must be a host array (NumPy) for a CPU plan; use cupy.asnumpy()");
    }
    return (void *)a.data();
}

static bool overlaps(const void *a, size_t an, const void *b, size_t bn)
{
    const char *pa = (const char *)a, *pb = (const char *)b;
    return pa < pb + bn && pb < pa + an;
}

// ---------------------------------------------------------------- matrix

// The master matrix (CSR, double) owned by Python.
struct Matrix {
    adia_matrix *A = nullptr;
    Matrix() = default;
    explicit Matrix(adia_matrix *a) : A(a) {}
    Matrix(const Matrix &) = delete;
    Matrix &operator=(const Matrix &) = delete;
    ~Matrix() { adia_matrix_destroy(A); }
    adia_matrix *get() const
    {
        if (!A) value_error("the matrix is closed");
        return A;
    }
};

// Host CSR arrays as the C library takes them (adia_matrix_create_csr,
// adia_plan_create_csr), checked: shape, int64 row pointers from 0, int32
// columns and float64 / float32 values at least as many as they say.
struct HostCsr {
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *rowptr;
    const int32_t *colind;
    const void *values;
    adia_value_type vt;
};

static HostCsr host_csr(int64_t rows, int64_t cols, any_array &indptr, any_array &indices,
                        any_array &data)
{
    if (rows < 0 || cols < 0 || rows > INT32_MAX || cols > INT32_MAX)
        value_error("matrix shape (" + std::to_string(rows) + ", " + std::to_string(cols) +
                    ") out of range: adia indices are 32-bit");
    HostCsr c{(int32_t)rows, (int32_t)cols, 0, nullptr, nullptr, nullptr, ADIA_DOUBLE};
    c.rowptr = (const int64_t *)vec_ptr(indptr, nb::dtype<int64_t>(), rows + 1, false, "indptr");
    c.nnz = c.rowptr[rows];
    if (c.rowptr[0] != 0) value_error("indptr[0] must be 0");
    if (c.nnz < 0) value_error("indptr[-1] must be >= 0");
    c.colind = (const int32_t *)vec_ptr(indices, nb::dtype<int32_t>(), -1, false, "indices");
    if ((int64_t)indices.shape(0) < c.nnz)
        value_error("indices has " + std::to_string(indices.shape(0)) + " entries, indptr says " +
                    std::to_string(c.nnz));
    if (data.dtype() == nb::dtype<float>())
        c.vt = ADIA_FLOAT;
    else if (data.dtype() != nb::dtype<double>())
        type_error("matrix values must be float64 or float32");
    c.values = vec_ptr(data, data.dtype(), -1, false, "data");
    if ((int64_t)data.shape(0) < c.nnz)
        value_error("data has " + std::to_string(data.shape(0)) + " entries, indptr says " +
                    std::to_string(c.nnz));
    return c;
}

static Matrix *matrix_from_csr(int64_t rows, int64_t cols, any_array indptr, any_array indices,
                               any_array data)
{
    const HostCsr c = host_csr(rows, cols, indptr, indices, data);
    adia_matrix *A = nullptr;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_matrix_create_csr(c.rows, c.cols, c.nnz, c.rowptr, c.colind, c.values, c.vt, &A);
    }
    check(st);
    return new Matrix(A);
}

// Copy A's CSR arrays into indptr (rows + 1, int64), indices (nnz, int32),
// data (nnz, float64), allocated by the caller.
static void matrix_copy_to(const Matrix &M, out_array indptr, out_array indices, out_array data)
{
    adia_csr_view v;
    check(adia_matrix_csr(M.get(), &v));
    void *rp = vec_ptr(indptr, nb::dtype<int64_t>(), (int64_t)v.rows + 1, false, "indptr");
    void *ci = vec_ptr(indices, nb::dtype<int32_t>(), v.nnz, false, "indices");
    void *vp = vec_ptr(data, nb::dtype<double>(), v.nnz, false, "data");
    std::memcpy(rp, v.rowptr, sizeof(int64_t) * ((size_t)v.rows + 1));
    if (v.nnz) {
        std::memcpy(ci, v.colind, sizeof(int32_t) * (size_t)v.nnz);
        std::memcpy(vp, v.values, sizeof(double) * (size_t)v.nnz);
    }
}

// ---------------------------------------------------------------- plan

struct Plan {
    adia_plan *P = nullptr;
    Matrix *M = nullptr;        // the master matrix (adia_solve needs it)
    nb::object M_owner;         // keeps M alive
    int32_t rows = 0, cols = 0;
    int device = 0;
    adia_value_type vt = ADIA_DOUBLE;
    int64_t nnz = 0;
    int busy = 0;               // calls running without the GIL (changed under the GIL)

    Plan() = default;
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;
    ~Plan() { adia_plan_destroy(P); }   // never while busy: the caller holds a reference
    void close()
    {
        if (busy)
            throw std::runtime_error("the plan is in use by another thread (a product or solve "
                                     "is running): close it afterwards");
        adia_plan_destroy(P);
        P = nullptr;
        M = nullptr;
        M_owner = nb::object();
    }
    adia_plan *get() const
    {
        if (!P) value_error("the plan is closed");
        return P;
    }

    // y = alpha A x + beta y; stream: a cudaStream_t as an integer (GPU).
    void spmv(any_array x, out_array y, double alpha, double beta, uintptr_t stream)
    {
        adia_plan *p = get();
        nb::dlpack::dtype d = vt == ADIA_DOUBLE ? nb::dtype<double>() : nb::dtype<float>();
        bool gpu = device == 1;
        const void *xp = vec_ptr(x, d, cols, gpu, "x");
        void *yp = vec_ptr(y, d, rows, gpu, "out");
        size_t vs = adia_value_size(vt);
        if (rows && cols && overlaps(xp, (size_t)cols * vs, yp, (size_t)rows * vs))
            value_error("x and out overlap");
        adia_status st;
        if (!gpu && nnz >= 200000) {
            busy++;
            {
                nb::gil_scoped_release nogil;
                st = adia_spmv(p, alpha, xp, beta, yp);
            }
            busy--;
        } else {
            st = gpu ? adia_spmv_async(p, alpha, xp, beta, yp, (void *)stream)
                     : adia_spmv(p, alpha, xp, beta, yp);
        }
        check(st);
    }

    // The same for a GPU plan with device pointers already checked by the
    // caller (adia/_core.py: CuPy arrays of the plan's dtype, lengths and
    // contiguity): CuPy's own attributes are cheaper to read than a DLPack
    // export, which would also order the call against the legacy stream.
    void spmv_ptr(uintptr_t x, uintptr_t y, double alpha, double beta, uintptr_t stream)
    {
        adia_plan *p = get();
        if (device != 1) type_error("spmv_ptr needs a GPU plan");
        size_t vs = adia_value_size(vt);
        if (!x || !y) value_error("NULL device pointer");
        if (rows && cols && overlaps((void *)x, (size_t)cols * vs, (void *)y, (size_t)rows * vs))
            value_error("x and out overlap");
        check(adia_spmv_async(p, alpha, (const void *)x, beta, (void *)y, (void *)stream));
    }

    std::string explain() const
    {
        adia_plan *p = get();
        std::vector<char> buf(1 << 16);
        check(adia_plan_explain(p, buf.data(), buf.size()));
        return std::string(buf.data());
    }
};

// A Python Plan of P (nnz: its matrix's entries); master: the host matrix
// adia_solve takes with it (none: the plan is its own matrix).
static Plan *new_plan(adia_plan *P, int64_t nnz, nb::object master = nb::object())
{
    Plan *p = new Plan();
    p->P = P;
    if (master.is_valid()) {
        p->M = nb::cast<Matrix *>(master);
        p->M_owner = master;
    }
    p->rows = adia_plan_rows(P);
    p->cols = adia_plan_cols(P);
    p->device = adia_plan_device(P);
    p->vt = adia_plan_value_type(P);
    p->nnz = nnz;
    return p;
}

static adia_value_type parse_vt(const std::string &s)
{
    if (s == "float64" || s == "double") return ADIA_DOUBLE;
    if (s == "float32" || s == "float" || s == "single") return ADIA_FLOAT;
    value_error("dtype must be float64 or float32, got " + s);
}

static adia_chooser parse_chooser(const std::string &s)
{
    if (s == "model") return ADIA_CHOOSE_MODEL;
    if (s == "rules") return ADIA_CHOOSE_RULES;
    if (s == "measure") return ADIA_CHOOSE_MEASURE;
    if (s == "fixed") return ADIA_CHOOSE_FIXED;
    value_error("chooser must be 'model', 'rules', 'measure' or 'fixed', got '" + s + "'");
}

struct Hints {
    adia_plan_hints h;
    adia_format_params fp;
    std::string format;
};

static void make_hints(Hints &H, int64_t expected_calls, int device, const std::string &dtype,
                       const std::string &chooser, const std::string &format, const std::string &params,
                       bool nondeterministic)
{
    std::memset(&H.h, 0, sizeof H.h);
    H.h.expected_calls = expected_calls;
    H.h.nondeterministic = nondeterministic ? 1 : 0;
    H.h.vtype = parse_vt(dtype);
    if (device < -1 || device > 1) value_error("device must be -1, 0 or 1");
    H.h.device = device;
    H.h.chooser = parse_chooser(chooser);
    H.format = format;
    if (!format.empty()) {
        if (!adia_format_exists(format.c_str())) value_error("unknown format '" + format + "'");
        H.h.chooser = ADIA_CHOOSE_FIXED;
        H.h.format = H.format.c_str();
    } else if (H.h.chooser == ADIA_CHOOSE_FIXED) {
        value_error("chooser 'fixed' needs a format");
    }
    adia_format_params_default(&H.fp);
    if (!params.empty()) {
        check(adia_format_params_parse(&H.fp, params.c_str()));
        H.h.params = &H.fp;
    }
}

static Plan *plan_create(nb::object mobj, int64_t expected_calls, int device, const std::string &dtype,
                         const std::string &chooser, const std::string &format, const std::string &params,
                         bool nondeterministic)
{
    Matrix *M = nb::cast<Matrix *>(mobj);
    adia_matrix *A = M->get();
    Hints H;
    make_hints(H, expected_calls, device, dtype, chooser, format, params, nondeterministic);
    adia_plan *P = nullptr;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_create(A, &H.h, &P);
    }
    check(st);
    return new_plan(P, adia_matrix_nnz(A), mobj);
}

// A plan of host CSR arrays read in place during the call
// (adia_plan_create_csr): no master matrix -- a GPU plan's solves take it
// as the matrix (adia_solve with A NULL), its transpose its format's.
static Plan *plan_create_csr(int64_t rows, int64_t cols, any_array indptr, any_array indices,
                             any_array data, const std::string &name, int64_t expected_calls,
                             int device, const std::string &dtype, const std::string &chooser,
                             const std::string &format, const std::string &params,
                             bool nondeterministic)
{
    const HostCsr c = host_csr(rows, cols, indptr, indices, data);
    Hints H;
    make_hints(H, expected_calls, device, dtype, chooser, format, params, nondeterministic);
    adia_plan *P = nullptr;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_create_csr(c.rows, c.cols, c.nnz, c.rowptr, c.colind, c.values, c.vt,
                                  name.c_str(), &H.h, &P);
    }
    check(st);
    return new_plan(P, c.nnz);
}

// The plan's matrix as its format holds it (a GPU plan's downloaded once).
static Matrix *plan_matrix(const Plan &p)
{
    adia_plan *P = p.get();
    adia_matrix *A = nullptr;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_format_to_matrix(adia_plan_format(P), &A);
    }
    check(st);
    return new Matrix(A);
}

// New values of the plan's pattern from a host master matrix
// (adia_plan_update_values); the plan's master matrix (adia_solve's) becomes
// that one, so solves see the new values too.
static void plan_update(Plan &p, nb::object mobj)
{
    adia_plan *P = p.get();
    Matrix *M = nb::cast<Matrix *>(mobj);
    adia_matrix *A = M->get();
    if (p.busy)
        throw std::runtime_error("the plan is in use by another thread (a product or solve is "
                                 "running): update it afterwards");
    adia_status st;
    p.busy++;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_update_values(P, A);
    }
    p.busy--;
    check(st);
    if (p.M_owner.is_valid()) {
        p.M = M;
        p.M_owner = mobj;
    }
}

// The same from a CSR in device memory (CuPy's arrays, by pointer):
// adia_plan_update_values_device_csr.
static void plan_update_device_csr(Plan &p, int32_t rows, int32_t cols, int64_t nnz,
                                   uintptr_t rowptr, int rowptr_bits, uintptr_t colind,
                                   uintptr_t values, const std::string &values_dtype)
{
    adia_plan *P = p.get();
    if (p.busy)
        throw std::runtime_error("the plan is in use by another thread (a product or solve is "
                                 "running): update it afterwards");
    adia_device_csr A = {rows, cols, nnz, (const void *)rowptr, rowptr_bits,
                         (const int32_t *)colind, (const void *)values, parse_vt(values_dtype)};
    adia_status st;
    p.busy++;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_update_values_device_csr(P, &A);
    }
    p.busy--;
    check(st);
}

// A GPU plan from a CSR matrix in device memory (CuPy's arrays, by pointer):
// adia_plan_create_device_csr -- no host matrix (M stays NULL).
static Plan *plan_create_device_csr(int32_t rows, int32_t cols, int64_t nnz, uintptr_t rowptr,
                                    int rowptr_bits, uintptr_t colind, uintptr_t values,
                                    const std::string &values_dtype, int64_t expected_calls,
                                    const std::string &dtype, const std::string &chooser,
                                    const std::string &format, const std::string &params,
                                    bool nondeterministic)
{
    Hints H;
    make_hints(H, expected_calls, 1, dtype, chooser, format, params, nondeterministic);
    adia_device_csr A = {rows, cols, nnz, (const void *)rowptr, rowptr_bits,
                         (const int32_t *)colind, (const void *)values, parse_vt(values_dtype)};
    adia_plan *P = nullptr;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_create_device_csr(&A, &H.h, &P);
    }
    check(st);
    return new_plan(P, nnz);
}

// ---------------------------------------------------------------- preconditioner

// An adia_precond on a Plan, which it keeps alive (plan_owner) and checks
// at every use: the C object keeps a pointer to its plan, so a closed
// plan makes it unusable (adia/_core.py's Precond says so).
struct Precond {
    adia_precond *M = nullptr;
    Plan *plan = nullptr;
    nb::object plan_owner;
    double setup_ms = 0;        // adia_precond_create's wall clock, timed here
    int busy = 0;

    Precond() = default;
    Precond(const Precond &) = delete;
    Precond &operator=(const Precond &) = delete;
    ~Precond() { adia_precond_destroy(M); }   // destroy touches no plan: safe after it
    void close()
    {
        if (busy)
            throw std::runtime_error("the preconditioner is in use by another thread: close it "
                                     "afterwards");
        adia_precond_destroy(M);
        M = nullptr;
        plan = nullptr;
        plan_owner = nb::object();
    }
    adia_precond *get() const
    {
        if (!M) value_error("the preconditioner is closed");
        if (!plan || !plan->P) value_error("the preconditioner's plan is closed");
        return M;
    }

    // z = M r on host arrays (a CPU plan: float64).
    void apply(any_array r, out_array z)
    {
        adia_precond *m = get();
        if (plan->device == 1) type_error("a GPU preconditioner takes device arrays (apply_ptr)");
        const void *rp = vec_ptr(r, nb::dtype<double>(), plan->rows, false, "r");
        void *zp = vec_ptr(z, nb::dtype<double>(), plan->rows, false, "out");
        adia_status st;
        busy++, plan->busy++;
        {
            nb::gil_scoped_release nogil;
            st = adia_precond_apply(m, rp, zp, nullptr);
        }
        busy--, plan->busy--;
        check(st);
    }

    // The same on device pointers checked by adia/_core.py (CuPy arrays of
    // the plan's dtype and length, contiguous), queued on stream.
    void apply_ptr(uintptr_t r, uintptr_t z, uintptr_t stream)
    {
        adia_precond *m = get();
        if (plan->device != 1) type_error("apply_ptr needs a GPU preconditioner");
        if (!r || !z) value_error("NULL device pointer");
        check(adia_precond_apply(m, (const void *)r, (void *)z, (void *)stream));
    }

    std::string explain() const
    {
        adia_precond *m = get();
        std::vector<char> buf(1 << 16);
        check(adia_precond_explain(m, buf.data(), buf.size()));
        return std::string(buf.data());
    }
};

// adia_precond_create on the plan; grid: 3 points per dimension (0 0 0:
// found from the offsets); cycle 'v', 'w' or 'f'; smoother "" for the
// kind's; sweeps, degree, max_levels 0 for the kind's; float_levels mg's
// levels in float (ADIA_FLOAT_LEVELS_*, 0 the default).  The values are
// checked by adia/_core.py and again by the library.
static Precond *precond_create(nb::object pobj, const std::string &kind, std::vector<int> grid,
                               const std::string &cycle, const std::string &smoother, int sweeps,
                               int degree, int max_levels, int float_levels)
{
    Plan *plan = nb::cast<Plan *>(pobj);
    adia_plan *P = plan->get();
    if (grid.size() != 3) value_error("grid must have 3 entries");
    if (cycle.size() != 1) value_error("cycle must be one character: 'v', 'w' or 'f'");
    adia_precond_options o;
    adia_precond_options_default(&o);
    o.kind = kind.c_str();
    for (int d = 0; d < 3; d++) o.grid[d] = grid[(size_t)d];
    o.cycle = cycle[0];
    o.smoother = smoother.empty() ? nullptr : smoother.c_str();
    o.sweeps = sweeps;
    o.degree = degree;
    o.max_levels = max_levels;
    o.float_levels = float_levels;
    adia_precond *M = nullptr;
    adia_status st;
    auto t0 = std::chrono::steady_clock::now();
    plan->busy++;
    {
        nb::gil_scoped_release nogil;
        st = adia_precond_create(P, &o, &M);
    }
    plan->busy--;
    auto t1 = std::chrono::steady_clock::now();
    check(st);
    Precond *pc = new Precond();
    pc->M = M;
    pc->plan = plan;
    pc->plan_owner = pobj;
    pc->setup_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    return pc;
}

// ---------------------------------------------------------------- solve

// Options of both solves, checked here so that bad values raise ValueError.
static adia_solve_options solve_options(const std::string &method, double rtol, int max_iter,
                                        bool jacobi, int device, int restart)
{
    adia_solve_options o;
    adia_solve_options_default(&o);
    if (method == "cg")
        o.method = ADIA_SOLVE_CG;
    else if (method == "bicgstab")
        o.method = ADIA_SOLVE_BICGSTAB;
    else if (method == "gmres")
        o.method = ADIA_SOLVE_GMRES;
    else
        value_error("method must be 'cg', 'bicgstab' or 'gmres', got '" + method + "'");
    if (!(rtol > 0) || !std::isfinite(rtol)) value_error("rtol must be a positive finite number");
    if (max_iter <= 0) value_error("maxiter must be positive");
    if (restart <= 0) value_error("restart must be positive");
    o.rtol = rtol;
    o.max_iter = max_iter;
    o.jacobi = jacobi ? 1 : 0;
    o.device = device;
    o.restart = restart;
    return o;
}

static nb::dict solve_info(const adia_solve_info &info, const adia_solve_options &o)
{
    nb::dict d;
    d["iterations"] = info.iterations;
    d["converged"] = (bool)info.converged;
    d["residual"] = info.residual;
    d["time_ms"] = info.time_ms;
    d["setup_ms"] = info.setup_ms;
    d["spmv_ms"] = info.spmv_ms;
    d["spmvs"] = info.spmvs;
    d["format"] = std::string(info.format);
    d["stop"] = std::string(info.stop);
    d["fallback"] = std::string(info.fallback);
    d["method"] = std::string(adia_solver_name(o.method));
    return d;
}

// A GPU plan's solve on device arrays (CuPy's, checked by adia/_core.py:
// the plan's dtype, length, contiguity) on the caller's stream:
// adia_plan_solve, nothing through the host.
static nb::dict solve_ptr(Plan *plan, uintptr_t b, uintptr_t x, const std::string &method,
                          double rtol, int max_iter, bool jacobi, int restart, uintptr_t stream,
                          Precond *pc)
{
    adia_plan *P = plan->get();
    if (plan->device != 1) type_error("solve on device arrays needs a GPU plan");
    if (!b || !x) value_error("NULL device pointer");
    size_t bytes = (size_t)plan->rows * adia_value_size(plan->vt);
    if (plan->rows && overlaps((void *)b, bytes, (void *)x, bytes)) value_error("b and x overlap");
    adia_solve_options o = solve_options(method, rtol, max_iter, jacobi, 1, restart);
    o.precond = pc ? pc->get() : nullptr;
    adia_solve_info info;
    std::memset(&info, 0, sizeof info);
    adia_status st;
    plan->busy++;
    if (pc) pc->busy++;
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_solve(P, (const void *)b, (void *)x, &o, &info, (void *)stream);
    }
    plan->busy--;
    if (pc) pc->busy--;
    check(st);
    return solve_info(info, o);
}

static nb::dict solve(nb::object mobj, Plan *plan, any_array b, out_array x, const std::string &method,
                      double rtol, int max_iter, bool jacobi, int device, int restart, Precond *pc)
{
    // A None: the plan's own matrix (adia_solve with A NULL)
    adia_matrix *A = mobj.is_none() ? nullptr : nb::cast<Matrix *>(mobj)->get();
    adia_plan *P = plan ? plan->get() : nullptr;
    if (!A && !P) value_error("solve needs a matrix or a plan");
    int32_t n = A ? adia_matrix_rows(A) : adia_plan_rows(P);
    int32_t nc = A ? adia_matrix_cols(A) : adia_plan_cols(P);
    if (n != nc)
        raise_class(PyExc_ValueError,
                    "solve needs a square matrix, got " + std::to_string(n) + " x " +
                        std::to_string(nc),
                    ADIA_ERR_DIMENSION);
    const double *bp = (const double *)vec_ptr(b, nb::dtype<double>(), n, false, "b");
    double *xp = (double *)vec_ptr(x, nb::dtype<double>(), n, false, "x");
    if (n && overlaps(bp, (size_t)n * 8, xp, (size_t)n * 8)) value_error("b and x overlap");
    adia_solve_options o = solve_options(method, rtol, max_iter, jacobi, device, restart);
    o.precond = pc ? pc->get() : nullptr;
    adia_solve_info info;
    std::memset(&info, 0, sizeof info);
    adia_status st;
    if (plan) plan->busy++;
    if (pc) pc->busy++;
    {
        nb::gil_scoped_release nogil;
        st = adia_solve(A, P, bp, xp, &o, &info);
    }
    if (plan) plan->busy--;
    if (pc) pc->busy--;
    check(st);
    return solve_info(info, o);
}

// ---------------------------------------------------------------- analysis

static nb::dict analyze(const Matrix &M, int64_t expected_calls, int device, const std::string &dtype)
{
    adia_matrix *A = M.get();
    adia_features f;
    adia_status st;
    {
        nb::gil_scoped_release nogil;
        st = adia_matrix_analyze(A, nullptr, &f);
    }
    check(st);
    nb::dict fd;
    fd["rows"] = f.rows;
    fd["cols"] = f.cols;
    fd["nnz"] = f.nnz;
    fd["n_diag"] = f.n_diag;
    fd["delta"] = f.delta;
    fd["n_offset"] = f.n_offset;
    fd["p_offset"] = f.p_offset;
    fd["n_elem"] = f.n_elem;
    fd["n_zero"] = f.n_zero;
    fd["p_zero"] = f.p_zero;
    fd["alpha"] = f.alpha;
    fd["label_lz"] = (bool)f.label_lz;
    fd["label_s"] = (bool)f.label_s;
    fd["n_long_zero"] = f.n_long_zero;
    fd["n_scatter"] = f.n_scatter;
    fd["dia_fill"] = f.dia_fill;
    fd["dense_diag_share"] = f.dense_diag_share;
    fd["row_min"] = f.row_min;
    fd["row_max"] = f.row_max;
    fd["row_mean"] = f.row_mean;
    fd["row_var"] = f.row_var;
    fd["empty_rows"] = f.empty_rows;
    fd["lower_bandwidth"] = f.lower_bandwidth;
    fd["upper_bandwidth"] = f.upper_bandwidth;
    fd["nan_count"] = f.nan_count;
    fd["inf_count"] = f.inf_count;

    Hints H;
    make_hints(H, expected_calls, device, dtype, "model", "", "", false);
    int n = 0;
    check(adia_plan_candidates(A, &H.h, nullptr, 0, &n));
    std::vector<adia_plan_candidate> c((size_t)(n > 0 ? n : 1));
    {
        nb::gil_scoped_release nogil;
        st = adia_plan_candidates(A, &H.h, c.data(), n, &n);
    }
    check(st);
    nb::list cl;
    for (int i = 0; i < n; i++) {
        nb::dict cd;
        cd["format"] = std::string(c[i].format);
        cd["storage_bytes"] = c[i].storage_bytes;
        cd["bytes"] = c[i].bytes;
        cd["exact"] = (bool)c[i].exact;
        cd["efficiency"] = c[i].efficiency;
        cd["spmv_ms"] = c[i].spmv_ms;
        cd["convert_ms"] = c[i].convert_ms;
        cd["total_ms"] = c[i].total_ms;
        cl.append(cd);
    }
    nb::dict d;
    d["type"] = std::string(adia_matrix_type_name(f.type));
    d["format"] = std::string(f.format);
    d["features"] = fd;
    d["candidates"] = cl;
    return d;
}

// ---------------------------------------------------------------- module

NB_MODULE(_adia, m)
{
    m.doc() = "adia C library binding (internal: use the adia package)";
    m.attr("__version__") = ADIA_VERSION_STRING;
#if defined(NB_VERSION_MAJOR) && NB_VERSION_MAJOR >= 2
    m.attr("_readonly_inputs") = true;
#else
    m.attr("_readonly_inputs") = false;   // nanobind 1 refuses read-only arrays
#endif

    m.def("_register_errors", [](nb::object base, nb::dict classes) {
        if (!g_error_base) {
            g_error_base = new nb::object();
            g_error_classes = new std::map<int, nb::object>();
        }
        *g_error_base = base;
        g_error_classes->clear();
        for (auto kv : classes) (*g_error_classes)[nb::cast<int>(kv.first)] = nb::borrow<nb::object>(kv.second);
    });
    m.def("status_string", [](int s) { return std::string(adia_status_string((adia_status)s)); });

    nb::class_<Matrix>(m, "_Matrix")
        .def_prop_ro("rows", [](const Matrix &M) { return adia_matrix_rows(M.get()); })
        .def_prop_ro("cols", [](const Matrix &M) { return adia_matrix_cols(M.get()); })
        .def_prop_ro("nnz", [](const Matrix &M) { return adia_matrix_nnz(M.get()); })
        .def_prop_ro("name", [](const Matrix &M) { return std::string(adia_matrix_name(M.get())); })
        .def("set_name", [](Matrix &M, const std::string &s) { check(adia_matrix_set_name(M.get(), s.c_str())); })
        .def("copy_to", &matrix_copy_to)
        .def("close", [](Matrix &M) {
            adia_matrix_destroy(M.A);
            M.A = nullptr;
        });

    m.def(
        "matrix_transpose",
        [](const Matrix &M) {
            adia_matrix *A = M.get(), *T = nullptr;
            adia_status st;
            {
                nb::gil_scoped_release nogil;
                st = adia_matrix_transpose(A, &T);
            }
            check(st);
            return new Matrix(T);
        },
        nb::rv_policy::take_ownership);
    m.def("matrix_from_csr", &matrix_from_csr, "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a,
          nb::rv_policy::take_ownership);
    m.def(
        "generate",
        [](const std::string &spec) {
            adia_matrix *A = nullptr;
            adia_status st;
            {
                nb::gil_scoped_release nogil;
                st = adia_matrix_generate(spec.c_str(), &A);
            }
            check(st);
            return new Matrix(A);
        },
        nb::rv_policy::take_ownership);
    m.def("generator_help", []() { return std::string(adia_generator_help()); });
    m.def(
        "read_mtx",
        [](const std::string &path) {
            adia_matrix *A = nullptr;
            adia_status st;
            {
                nb::gil_scoped_release nogil;
                st = adia_matrix_load(path.c_str(), &A);
            }
            check(st);
            return new Matrix(A);
        },
        nb::rv_policy::take_ownership);
    m.def("write_mtx", [](const Matrix &M, const std::string &path) {
        adia_matrix *A = M.get();
        adia_status st;
        {
            nb::gil_scoped_release nogil;
            st = adia_matrix_write_mtx(A, path.c_str());
        }
        check(st);
    });
    m.def("read_vector", [](const std::string &path) {
        int32_t n = 0;
        double *x = nullptr;
        adia_status st;
        {
            nb::gil_scoped_release nogil;
            st = adia_vector_read_mtx(path.c_str(), &n, &x);
        }
        check(st);
        nb::bytes out((const char *)x, sizeof(double) * (size_t)n);
        std::free(x);
        return out;
    });
    m.def("write_vector", [](const std::string &path, any_array x) {
        const double *xp = (const double *)vec_ptr(x, nb::dtype<double>(), -1, false, "x");
        if (x.shape(0) > INT32_MAX) value_error("vector too long");
        int32_t n = (int32_t)x.shape(0);
        adia_status st;
        {
            nb::gil_scoped_release nogil;
            st = adia_vector_write_mtx(path.c_str(), n, xp);
        }
        check(st);
    });
    m.def(
        "spy",
        [](const Matrix &M, const std::string &path, const std::string &overlay, int size,
           const std::string &caption, const std::string &params) {
            adia_matrix *A = M.get();
            adia_spy_options o;
            std::memset(&o, 0, sizeof o);
            o.size = size;
            if (!overlay.empty()) o.overlay = overlay.c_str();
            if (!caption.empty()) o.caption = caption.c_str();
            adia_format_params fp;
            adia_format_params_default(&fp);
            if (!params.empty()) {
                check(adia_format_params_parse(&fp, params.c_str()));
                o.params = &fp;
            }
            adia_status st;
            {
                nb::gil_scoped_release nogil;
                st = adia_matrix_spy_png(A, path.c_str(), &o);
            }
            check(st);
        },
        "matrix"_a, "path"_a, "overlay"_a, "size"_a, "caption"_a, "params"_a);
    m.def("analyze", &analyze, "matrix"_a, "expected_calls"_a, "device"_a, "dtype"_a);
    m.def("gpu_device_count", []() {
        int n = 0;
        check(adia_gpu_device_count(&n));
        return n;
    });
    m.def("format_names", []() {
        std::vector<std::string> v;
        for (int i = 0; i < adia_format_count(); i++) v.push_back(adia_format_name_at(i));
        return v;
    });
    m.def("set_memory_budget", [](int64_t bytes) { check(adia_set_memory_budget(bytes)); });
    m.def("memory_budget", []() { return adia_memory_budget(); });

    nb::class_<Plan>(m, "_Plan")
        .def_prop_ro("rows", [](const Plan &p) { return (p.get(), p.rows); })
        .def_prop_ro("cols", [](const Plan &p) { return (p.get(), p.cols); })
        .def_prop_ro("closed", [](const Plan &p) { return p.P == nullptr; })
        .def_prop_ro("device", [](const Plan &p) { return (p.get(), p.device); })
        .def_prop_ro("dtype", [](const Plan &p) {
            p.get();
            return std::string(p.vt == ADIA_DOUBLE ? "float64" : "float32");
        })
        .def_prop_ro("nnz", [](const Plan &p) { return (p.get(), p.nnz); })
        .def_prop_ro("format", [](const Plan &p) { return std::string(adia_plan_format_name(p.get())); })
        .def_prop_ro("chooser", [](const Plan &p) { return std::string(adia_chooser_name(adia_plan_chooser(p.get()))); })
        .def_prop_ro("predicted_ms", [](const Plan &p) { return adia_plan_predicted_ms(p.get()); })
        .def_prop_ro("measured_ms", [](const Plan &p) { return adia_plan_measured_ms(p.get()); })
        .def_prop_ro("matrix", [](const Plan &p) {
            p.get();   /* None for a plan made from a device CSR */
            return p.M_owner.is_valid() ? p.M_owner : nb::none();
        })
        .def("spmv", &Plan::spmv, "x"_a, "y"_a, "alpha"_a, "beta"_a, "stream"_a)
        .def("spmv_ptr", &Plan::spmv_ptr, "x"_a, "y"_a, "alpha"_a, "beta"_a, "stream"_a)
        .def("explain", &Plan::explain)
        .def("update", &plan_update, "matrix"_a)
        .def("update_device_csr", &plan_update_device_csr, "rows"_a, "cols"_a, "nnz"_a, "rowptr"_a,
             "rowptr_bits"_a, "colind"_a, "values"_a, "values_dtype"_a)
        .def("save", [](const Plan &p, const std::string &path) { check(adia_plan_save(p.get(), path.c_str())); })
        .def("close", &Plan::close);

    m.def("plan_create", &plan_create, "matrix"_a, "expected_calls"_a, "device"_a, "dtype"_a, "chooser"_a,
          "format"_a, "params"_a, "nondeterministic"_a = false, nb::rv_policy::take_ownership);
    m.def("plan_create_csr", &plan_create_csr, "rows"_a, "cols"_a, "indptr"_a, "indices"_a,
          "data"_a, "name"_a, "expected_calls"_a, "device"_a, "dtype"_a, "chooser"_a, "format"_a,
          "params"_a, "nondeterministic"_a = false, nb::rv_policy::take_ownership);
    m.def("plan_matrix", &plan_matrix, "plan"_a, nb::rv_policy::take_ownership);
    m.def("plan_create_device_csr", &plan_create_device_csr, "rows"_a, "cols"_a, "nnz"_a,
          "rowptr"_a, "rowptr_bits"_a, "colind"_a, "values"_a, "values_dtype"_a,
          "expected_calls"_a, "dtype"_a, "chooser"_a, "format"_a, "params"_a,
          "nondeterministic"_a = false, nb::rv_policy::take_ownership);
    m.def(
        "plan_load",
        [](nb::object mobj, const std::string &path) {
            Matrix *M = nb::cast<Matrix *>(mobj);
            adia_plan *P = nullptr;
            check(adia_plan_load(M->get(), path.c_str(), &P));
            return new_plan(P, adia_matrix_nnz(M->get()), mobj);
        },
        nb::rv_policy::take_ownership);
    m.def("solve_ptr", &solve_ptr, "plan"_a, "b"_a, "x"_a, "method"_a, "rtol"_a, "max_iter"_a,
          "jacobi"_a, "restart"_a, "stream"_a, "precond"_a.none() = nb::none());
    // the one set of defaults (adia_solve_options_default): rtol, max_iter, restart
    m.def("solve_defaults", []() {
        adia_solve_options o;
        adia_solve_options_default(&o);
        return nb::make_tuple(o.rtol, o.max_iter, o.restart);
    });
    m.def("solve", &solve, "matrix"_a.none(), "plan"_a.none(), "b"_a, "x"_a, "method"_a, "rtol"_a, "max_iter"_a,
          "jacobi"_a, "device"_a, "restart"_a, "precond"_a.none() = nb::none());

    nb::class_<Precond>(m, "_Precond")
        .def_prop_ro("closed", [](const Precond &p) { return p.M == nullptr; })
        .def_prop_ro("kind", [](const Precond &p) { return std::string(adia_precond_kind(p.get())); })
        .def_prop_ro("setup_ms", [](const Precond &p) { return (p.get(), p.setup_ms); })
        .def("apply", &Precond::apply, "r"_a, "z"_a)
        .def("apply_ptr", &Precond::apply_ptr, "r"_a, "z"_a, "stream"_a)
        .def("explain", &Precond::explain)
        .def("close", &Precond::close);
    m.def("precond_create", &precond_create, "plan"_a, "kind"_a, "grid"_a, "cycle"_a, "smoother"_a,
          "sweeps"_a, "degree"_a, "max_levels"_a, "float_levels"_a = 0,
          nb::rv_policy::take_ownership);
}
