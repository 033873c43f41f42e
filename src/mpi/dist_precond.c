/* dist_precond.c -- block Jacobi: a preconditioner of each process's own
 * diagonal block (the rows held here against the same columns), made by
 * libadia's adia_precond_create on a plan of that block, on the matrix's
 * device.  Each process applies its own M to its own rows, so z = M r
 * needs no communication; the couplings between the blocks are the outer
 * method's (CG, BiCGSTAB, GMRES over the distributed operator).  With mg
 * on each block the iterations grow with the number of blocks but stay
 * far below Jacobi's (docs/distributed.md), a first step to multigrid
 * across the processes.
 *
 * On a device matrix whose parts keep their diagonals as dia (a stencil's
 * do) the block is made on the device (dist_block.c); otherwise it is
 * read back from the plans of D's parts (adia_format_to_matrix: a device
 * plan's storage is downloaded once), its columns of other processes'
 * rows dropped, and planned anew.  D keeps that plan beside M and frees
 * both in adia_dist_precond_destroy or adia_dist_destroy. */
#include "dist.h"

/* This process's own diagonal block as a matrix (double, rows x rows):
 * its rows read back from the parts, the columns of other processes' rows
 * dropped (adia__dist_read_rows, DIST_COLS_OWN), in int32. */
static adia_status own_block(const adia_dist_matrix *D, adia_matrix **out)
{
    *out = NULL;
    dist_rows r;
    DIST_TRY(adia__dist_read_rows(D, DIST_COLS_OWN, &r));
    int32_t *colind = NULL;
    adia_status s = adia__dist_cols32(&r, D->rows, "the own block for its preconditioner", &colind);
    if (s == ADIA_OK)
        s = adia_matrix_create_csr((int32_t)D->rows, (int32_t)D->rows, r.nnz, r.rowptr, colind,
                                   r.val, ADIA_DOUBLE, out);
    free(colind);
    adia__dist_rows_free(&r);
    return s;
}

/* The own block's plan: on the device where the parts lend their
 * diagonals (dist_block.c), else by the host route (own_block). */
static adia_status block_plan(adia_dist_matrix *D, adia_plan **plan)
{
    /* a solver's many products: the model may convert */
    adia_plan_hints h = {.device = D->gpu >= 0 ? 1 : 0, .expected_calls = 1000};
    const char *route = getenv("ADIA_DIST_BLOCK");   /* "host": the host route (tests, A/B) */
    const int host = route && !strcmp(route, "host");
    if (route && *route && !host && strcmp(route, "device"))
        return adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_BLOCK=%s: device or host", route);
    if (D->dev && !host) {
        adia_status s = adia__dist_device_block(D, &h, plan);
        if (s != ADIA_ERR_UNSUPPORTED) return s;
    }
    adia_matrix *B = NULL;
    DIST_TRY(own_block(D, &B));
    adia_status s = adia_plan_create(B, &h, plan);
    adia_matrix_destroy(B);
    return s;
}

/* ADIA_DIST_MG (rank 0's, agreed): "slab" mg across the processes, refused
 * where it cannot run; "block" block Jacobi with mg on each block; unset
 * (auto): slab where it can run, else block. */
static adia_status mg_route(const adia_dist_matrix *D, int *route)
{
    const char *env = getenv("ADIA_DIST_MG");
    adia_status s = ADIA_OK;
    *route = 0;
    if (D->rank == 0 && env && *env) {
        if (!strcmp(env, "slab")) *route = 1;
        else if (!strcmp(env, "block")) *route = 2;
        else s = adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_MG=%s: slab or block", env);
    }
    MPI_Bcast(route, 1, MPI_INT, 0, D->comm);
    return adia__dist_agree(D->comm, s);
}

/* mg across the processes where the kind is mg and the matrix suits (see
 * mg_route); ADIA_OK with *M NULL: the block route.  Agreed. */
static adia_status slab_precond(adia_dist_matrix *D, const adia_precond_options *opt,
                                adia_plan **plan, adia_precond **M, dist_slab **ctx)
{
    int route = 0;
    if (!opt || !opt->kind || strcmp(opt->kind, "mg")) return ADIA_OK;
    DIST_TRY(mg_route(D, &route));
    /* opt->grid is the whole matrix's: no block's */
    const int grid = opt->grid[0] > 0 || opt->grid[1] > 0 || opt->grid[2] > 0;
    if (route == 2 && grid)
        return adia__dist_agree(D->comm, adia_set_error(ADIA_ERR_INVALID_ARG, "ADIA_DIST_MG="
                                "block: opt->grid names the whole matrix's grid; block mg finds "
                                "each block's own (leave it 0)"));
    if (route == 2) return ADIA_OK;
    char why[200] = "";
    adia_status s = adia__dist_slab_precond(D, opt, plan, M, ctx, why, sizeof why);
    if (s == ADIA_ERR_UNSUPPORTED && (route == 1 || grid))   /* every process: agreed */
        return adia__dist_agree(D->comm, adia_set_error(ADIA_ERR_UNSUPPORTED, "%s: mg across "
                                "the processes cannot run: %s", route == 1 ? "ADIA_DIST_MG=slab"
                                : "opt->grid (the whole matrix's)", why));
    return s == ADIA_ERR_UNSUPPORTED ? ADIA_OK : s;
}

/* The preconditioner of the own block: its plan on D's device, then M. */
static adia_status block_precond(adia_dist_matrix *D, const adia_precond_options *opt,
                                 adia_plan **plan, adia_precond **M)
{
    adia_status s = block_plan(D, plan);
    if (s == ADIA_OK) s = adia_precond_create(*plan, opt, M);
    if (s != ADIA_OK) {
        adia_plan_destroy(*plan);
        *plan = NULL;
    }
    return s;
}

adia_status adia_dist_precond_create(adia_dist_matrix *D, const adia_precond_options *opt,
                                     adia_precond **M)
{
    const char *f = "adia_dist_precond_create";
    DIST_TRY(adia__dist_check(D, f));
    adia_status s = M ? ADIA_OK : adia_set_error(ADIA_ERR_INVALID_ARG, "%s: M is NULL", f);
    if (M) *M = NULL;   /* NULL on any failure */
    if (s == ADIA_OK && D->nprec == DIST_PRECONDS)
        s = adia_set_error(ADIA_ERR_INVALID_ARG, "%s: the matrix holds %d preconditioners "
                           "already: destroy one first", f, DIST_PRECONDS);
    DIST_TRY(adia__dist_agree(D->comm, s));
    adia_plan *plan = NULL;
    adia_precond *made = NULL;
    dist_slab *slab = NULL;
    s = slab_precond(D, opt, &plan, &made, &slab);   /* agreed */
    if (s == ADIA_OK && !made)
        s = adia__dist_agree(D->comm, block_precond(D, opt, &plan, &made));
    if (s != ADIA_OK) {   /* made on some processes only: undone everywhere */
        adia_precond_destroy(made);
        adia_plan_destroy(plan);
        adia__dist_slab_free(slab);
        return s;
    }
    D->prec[D->nprec] = made;
    D->prec_plan[D->nprec] = plan;
    D->prec_slab[D->nprec++] = slab;
    *M = made;
    return ADIA_OK;
}

void adia_dist_precond_destroy(adia_dist_matrix *D, adia_precond *M)
{
    if (!M || !D || D->magic != DIST_MAGIC) return;
    for (int k = 0; k < D->nprec; k++) {
        if (D->prec[k] != M) continue;
        adia_precond_destroy(M);
        adia_plan_destroy(D->prec_plan[k]);
        adia__dist_slab_free(D->prec_slab[k]);
        D->nprec--;
        D->prec[k] = D->prec[D->nprec];
        D->prec_plan[k] = D->prec_plan[D->nprec];
        D->prec_slab[k] = D->prec_slab[D->nprec];
        return;
    }
}

void adia__dist_precond_free(adia_dist_matrix *D)
{
    while (D->nprec > 0) adia_dist_precond_destroy(D, D->prec[D->nprec - 1]);
}

const char *adia_dist_precond_scope(const adia_dist_matrix *D, const adia_precond *M)
{
    if (!D || D->magic != DIST_MAGIC || !M) return "";
    for (int k = 0; k < D->nprec; k++)
        if (D->prec[k] == M) return D->prec_slab[k] ? "slabs" : "blocks";
    return "";
}
