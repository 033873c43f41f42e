"""Preconditioners: adia.solve(..., precond=...), adia.precond / adia.Precond
(reuse across solves, a SciPy LinearOperator), and their errors.  GPU tests
skip without CuPy, a device or a CUDA build."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

import adia


def _solve_ok(A, x, b, info, rtol=1e-8):
    assert info.converged, info
    assert np.linalg.norm(A @ x - b) <= 1.01 * rtol * np.linalg.norm(b)


@pytest.mark.parametrize("kind", [None, "none", "jacobi", "cheb", "mg", "auto"])
def test_solve_precond_kinds(kind):
    A = adia.generate("lap3d7:20")
    b = A @ np.linspace(-1, 1, A.shape[0])
    x, info = adia.solve(A, b, precond=kind)
    _solve_ok(A, x, b, info)


def test_precond_auto_chooses():
    """auto: mg on a grid long enough to repay it, jacobi on a small grid
    and on a matrix without one; M.kind is the kind made and explain() says
    why."""
    M = adia.precond(adia.generate("lap2d5:200x20"), "auto")
    assert M.kind == "mg" and "auto: mg" in M.explain()
    M.close()
    M = adia.precond(adia.generate("lap3d7:12"), "auto")
    assert M.kind == "jacobi" and "longest edge under 128" in M.explain()
    M.close()
    M = adia.precond(adia.generate("random:2000,8"), "auto")
    assert M.kind == "jacobi" and "not mg" in M.explain()
    M.close()


def test_solve_default_precond():
    """CG's default is auto: jacobi on a small grid, mg from 128 points an
    edge; precond="none" turns it off; BiCGSTAB's default is none; where the
    mg it made stops short (A not SPD), Jacobi solves again (info.fallback)."""
    A = adia.generate("lap2d5:30")
    b = A @ np.ones(A.shape[0])
    x, info = adia.solve(A, b)
    _solve_ok(A, x, b, info)
    assert info.precond == "jacobi" and not info.fallback, info
    _, flag = adia.solve(A, b, jacobi=True)
    assert info.iterations == flag.iterations
    _, none = adia.solve(A, b, precond="none")
    assert none.converged and none.precond == "none"
    B = adia.generate("lap2d5:130")
    _, info = adia.solve(B, B @ np.ones(B.shape[0]))
    assert info.converged and info.precond == "mg" and info.iterations <= 12, info
    _, info = adia.solve(A, b, method="bicgstab")
    assert info.converged and info.precond == "none"
    N = adia.generate("band:300,1")   # not symmetric: CG fails whatever the preconditioner
    _, info = adia.solve(N, N @ np.ones(300))
    assert not info.converged and info.precond == "jacobi", info
    assert info.fallback.startswith("the default preconditioner, mg, stopped short"), info


def test_solve_precond_fewer_iterations():
    A = adia.generate("lap3d7:24")
    b = A @ np.ones(A.shape[0])
    its = {}
    for kind in ("none", "jacobi", "cheb", "mg"):
        x, info = adia.solve(A, b, precond=kind)
        _solve_ok(A, x, b, info)
        its[kind] = info.iterations
    _, flag = adia.solve(A, b, jacobi=True)
    assert its["jacobi"] == flag.iterations            # the same fused path
    assert its["mg"] < its["cheb"] < its["jacobi"]
    assert its["mg"] <= 12


def test_solve_precond_grid():
    A = adia.generate("lap3d7:16x12x10")
    b = A @ np.ones(A.shape[0])
    x, info = adia.solve(A, b, precond="mg", grid=(16, 12, 10))
    _solve_ok(A, x, b, info)
    with pytest.raises(adia.Error, match="not on a grid of"):
        adia.solve(A, b, precond="mg", grid=(12, 16, 10))


def test_precond_object_reused():
    A = adia.generate("lap3d7:20")
    P = adia.plan(A, expected_calls=1000)
    M = adia.precond(P, "mg")
    assert M.kind == "mg" and M.setup_ms > 0 and M.plan is P and M.device == "cpu"
    text = M.explain()
    assert "preconditioner mg" in text and "level 1:" in text
    for seed in range(3):
        xt = np.random.default_rng(seed).uniform(-1, 1, A.shape[0])
        b = A @ xt
        x, info = adia.solve(P, b, precond=M)
        _solve_ok(A, x, b, info)
        assert info.iterations <= 12
    C = adia.precond(P, "cheb", degree=5)
    assert C.kind == "cheb" and "degree 5" in C.explain()
    x, info = adia.solve(P, b, precond=C)
    _solve_ok(A, x, b, info)
    C.close()
    assert C.closed and "closed" in repr(C)
    with pytest.raises(ValueError, match="closed"):
        C.explain()
    M.close()
    P.close()


def test_precond_from_matrix_owns_plan():
    A = adia.generate("lap2d5:40")
    with adia.precond(A, "cheb") as M:
        assert isinstance(M.plan, adia.Plan) and M.plan.device == "cpu"
        b = A @ np.ones(A.shape[0])
        x, info = adia.solve(M.plan, b, precond=M)
        _solve_ok(A, x, b, info)
        P = M.plan
    assert P.closed


def test_precond_linear_operator():
    """For SciPy's cg, as its M=: fewer iterations than without."""
    A = adia.generate("lap3d7:16")
    b = A @ np.ones(A.shape[0])
    M = adia.precond(A, "mg")
    assert isinstance(M, spla.LinearOperator) and M.shape == A.shape
    assert M.aslinearoperator() is M
    r = np.random.default_rng(1).uniform(-1, 1, A.shape[0])
    z = M @ r
    np.testing.assert_array_equal(z, M.matvec(r))
    assert M.matvec(r.reshape(-1, 1)).shape == (A.shape[0], 1)
    Z = M.matmat(np.stack([r, 2 * r], axis=1))
    np.testing.assert_allclose(Z[:, 1], 2 * z, rtol=1e-14)
    assert r @ z > 0
    counts = []
    for pre in (None, M):
        n = [0]
        x, rc = spla.cg(A, b, M=pre, callback=lambda xk: n.__setitem__(0, n[0] + 1),
                        maxiter=500, **_tol_kw(spla.cg, 1e-8))
        assert rc == 0
        counts.append(n[0])
    assert counts[1] < counts[0] / 3, counts
    M.close()


def _tol_kw(cg, tol):
    """rtol= (SciPy >= 1.12, recent CuPy) or tol= (older)."""
    import inspect

    return {"rtol" if "rtol" in inspect.signature(cg).parameters else "tol": tol}


def test_precond_f_cycle():
    """The F cycle is not symmetric: CG refuses it, GMRES and BiCGSTAB take it."""
    A = adia.generate("lap3d7:24")
    b = A @ np.ones(A.shape[0])
    P = adia.plan(A)
    M = adia.precond(P, "mg", cycle="f")
    assert "f-cycle" in M.explain()
    with pytest.raises(adia.UnsupportedError, match="not symmetric"):
        adia.solve(P, b, precond=M)
    for method in ("gmres", "bicgstab"):
        x, info = adia.solve(P, b, method=method, precond=M, rtol=1e-8)
        assert info.converged and info.iterations <= 12, (method, info)
        np.testing.assert_allclose(x, 1.0, rtol=1e-6)
    M.close()


def test_precond_agg():
    """Smoothed aggregation of rows: biharm1d, where Jacobi needs tens of thousands."""
    A = adia.generate("biharm1d:2000")
    b = A @ np.ones(A.shape[0])
    P = adia.plan(A)
    M = adia.precond(P, "agg")
    assert M.kind == "agg" and "smoothed aggregation" in M.explain()
    x, info = adia.solve(P, b, precond=M)
    assert info.converged and info.iterations <= 400, info
    assert np.linalg.norm(b - A @ x) <= 1.01e-8 * np.linalg.norm(b)
    with pytest.raises(adia.Error, match="mg's options"):
        adia.precond(P, "agg", cycle="w")
    M.close()


def test_precond_errors():
    A = adia.generate("lap2d5:20")
    b = A @ np.ones(A.shape[0])
    P = adia.plan(A)
    with pytest.raises(ValueError, match="choose one"):
        adia.solve(A, b, jacobi=True, precond="cheb")
    with pytest.raises(ValueError, match="grid= is mg's"):
        adia.solve(A, b, precond="cheb", grid=(20, 20))
    with pytest.raises(ValueError, match="grid= is mg's"):
        adia.solve(A, b, grid=(20, 20))
    with pytest.raises(TypeError, match="precond must be"):
        adia.solve(A, b, precond=3)
    with pytest.raises(adia.Error, match="unknown kind"):
        adia.solve(A, b, precond="ilu")
    M = adia.precond(P, "cheb")
    with pytest.raises(ValueError, match="another plan"):
        adia.solve(A, b, precond=M)                    # a matrix, not M's plan
    with pytest.raises(ValueError, match="another plan"):
        adia.solve(adia.plan(A), b, precond=M)
    with pytest.raises(ValueError, match="takes no options"):
        adia.precond(P, "jacobi", degree=3)
    with pytest.raises(adia.Error, match="mg's options"):
        adia.precond(P, "cheb", smoother="jacobi")
    with pytest.raises(ValueError, match="cycle must be"):
        adia.precond(P, "mg", cycle="x")
    with pytest.raises(ValueError, match="grid must be"):
        adia.precond(P, "mg", grid=(1, 2, 3, 4))
    with pytest.raises(ValueError, match="degree must be in 1..100"):
        adia.precond(P, "cheb", degree=0)
    with pytest.raises(ValueError, match="device='gpu' for a cpu plan"):
        adia.precond(P, "cheb", device="gpu")
    with pytest.raises(adia.UnsupportedError, match="float_levels is for one process's GPU"):
        adia.precond(P, "mg", float_levels=True)
    with pytest.raises(ValueError, match="takes no options, got float_levels"):
        adia.precond(P, "jacobi", float_levels=True)
    with pytest.raises(adia.UnsupportedError, match="coarse levels in float"):
        adia.precond(P, "mg", float_levels="coarse")
    with pytest.raises(TypeError, match="float_levels must be None, a bool or"):
        adia.precond(P, "mg", float_levels=1)
    with pytest.raises(ValueError, match="float_levels must be 'all', 'coarse' or 'none'"):
        adia.precond(P, "mg", float_levels="half")
    adia.precond(P, "mg", float_levels="none").close()
    with pytest.raises(ValueError, match=r"r must have shape \(400,\)"):
        M.matvec(np.ones(3))
    Z = np.array([[2.0, 1.0], [1.0, 0.0]])            # A(1,1) = 0
    with pytest.raises(adia.Error, match=r"A\(1,1\)"):
        adia.precond(Z, "cheb")
    P.close()                                        # the plan first: M is unusable
    with pytest.raises(ValueError, match="plan is closed"):
        M.matvec(np.ones(400))
    M.close()


@pytest.mark.parametrize("kind", ["cheb", "mg"])
def test_gpu_precond(cupy, kind):
    A = adia.generate("lap3d7:24")
    b = A @ np.ones(A.shape[0])
    Pc = adia.plan(A, expected_calls=1000)
    Pg = adia.plan(A, expected_calls=1000, device="gpu")
    # mg on the GPU stores its coarse levels in float by default: the CPU's
    # numbers with every level in double (the default: test below)
    opts = {"float_levels": "none"} if kind == "mg" else {}
    Mc, Mg = adia.precond(Pc, kind), adia.precond(Pg, kind, **opts)
    assert Mg.device == "gpu"
    r = np.random.default_rng(2).uniform(-1, 1, A.shape[0])
    np.testing.assert_allclose(cupy.asnumpy(Mg @ cupy.asarray(r)), Mc @ r, rtol=1e-11,
                               atol=1e-12 * np.abs(Mc @ r).max())
    x, info = adia.solve(Pg, cupy.asarray(b), precond=Mg)        # on the device
    assert info.converged, info
    xh, infoh = adia.solve(Pg, b, precond=Mg)                    # host vectors
    assert infoh.converged and abs(infoh.iterations - info.iterations) <= 1
    _, jac = adia.solve(Pg, b, jacobi=True)
    assert info.iterations < jac.iterations
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla

    L = Mg.aslinearoperator()
    xg, rc = cspla.cg(csp.csr_matrix(A), cupy.asarray(b), M=L, maxiter=200,
                      **_tol_kw(cspla.cg, 1e-8))
    assert rc == 0
    Mc.close(), Mg.close(), Pc.close(), Pg.close()


@pytest.mark.parametrize("which", [True, "coarse"])
def test_gpu_precond_float_levels(cupy, which):
    """mg's levels in float on a float64 GPU plan (all, or the coarse
    ones): M r within float's rounding of the float64 hierarchy's, the
    solve converged in float64."""
    A = adia.generate("lap3d7:32")
    b = A @ np.ones(A.shape[0])
    Pg = adia.plan(A, expected_calls=1000, device="gpu")
    Md, Mf = adia.precond(Pg, "mg", float_levels="none"), adia.precond(Pg, "mg", float_levels=which)
    assert "levels in float" in Mf.explain()
    assert ("coarse levels in float" in Mf.explain()) == (which == "coarse")
    with adia.precond(Pg, "mg") as M:                      # the default: the coarse in float
        assert "coarse levels in float" in M.explain()
    r = cupy.asarray(np.random.default_rng(5).uniform(-1, 1, A.shape[0]))
    zd, zf = cupy.asnumpy(Md @ r), cupy.asnumpy(Mf @ r)
    assert zf.dtype == np.float64
    assert 0 < np.linalg.norm(zf - zd) / np.linalg.norm(zd) < 1e-4
    x, info = adia.solve(Pg, cupy.asarray(b), precond=Mf)
    _, infod = adia.solve(Pg, cupy.asarray(b), precond=Md)
    assert info.converged and info.iterations <= infod.iterations + 1, (info, infod)
    np.testing.assert_allclose(cupy.asnumpy(x), np.ones(A.shape[0]), rtol=1e-6)
    Mf.close(), Md.close(), Pg.close()


def test_default_falls_back_to_jacobi():
    """CG's default (auto) made mg where A is not SPD (band:300,1): mg stops
    short, the library solves again with Jacobi from x0 and says why."""
    A = adia.generate("band:300,1")
    b = A @ np.ones(A.shape[0])
    x, info = adia.solve(A, b)
    assert "mg, stopped short after" in info.fallback, info
    assert info.precond == "jacobi"
    _, ij = adia.solve(A, b, jacobi=True)
    assert info.iterations == ij.iterations and info.converged == ij.converged
    _, im = adia.solve(A, b, precond="mg")   # mg asked for by name: no fall-back
    assert im.fallback == "" and im.precond == "mg" and not im.converged
