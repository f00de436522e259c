/*
 * kernel_dense.c: the tuned matmul kernels (nn.dense, nn.matmul with constant weights),
 * one C function per call site with every size a literal.
 *
 * TK_GEMV (one row): bound by memory bandwidth, so each weight is read once, in the order
 *   stored ([n][k]): rb rows at a time, each summed in wb partial sums (lane l takes the
 *   products k = l, l + wb, ...), which the compiler keeps in vector registers; the lanes
 *   are then added pairwise (halving), the k % wb leftover products after them.
 * TK_GEMM: kN_bR computes R rows x wb columns in R arrays of wb floats (or wb / vw
 *   arrays of vw per row); for each k it loads R inputs and one contiguous row of wb
 *   packed weights ([n/wb][k][wb]).
 * TK_GEMM of a b computed at run time (nn.batch_matmul, b stored [k][n]): the same blocks
 *   read b's rows in place, batch by batch (batch strides of a and b; 0 broadcasts).
 * --target generic with Tile.sub: TK_GEMV takes rb rows at a time where RC_SIMD is 1 and
 *   sub rows elsewhere; a TK_GEMM block of rb rows runs in passes of sub rows there.
 * The bias is added to the finished sum (as the reference adds it after rk_matmul), then
 * the fused epilogue; the column is the epilogue's channel.
 */
#include "emit.h"

#include <stb_ds.h>
#include <string.h>

static char op_prefix(const Node *n, int k)
{
    return epilogue_reads_full(n, k, 0, n->a.ep.n) ? 'f' : 'e';
}

static void put_params(const Node *n, Buf *b)
{
    for (int k = 2; k < (int)arrlen(n->in); k++)
        buf_printf(b, ", const float *restrict %c%d", op_prefix(n, k), k);
}

static void put_args(const Node *n, Buf *b)
{
    for (int k = 2; k < (int)arrlen(n->in); k++)
        buf_printf(b, ", %c%d", op_prefix(n, k), k);
}

static void put_comment(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    buf_printf(b, "/* n%d: nodes[%d] %s%s: dense %d x %d rows, %d columns", idx, n->json,
               n->relay_op ? n->relay_op : "", a->ep.n ? " + epilogue" : "", a->m, a->k, a->n);
    if (a->bias)
        buf_printf(b, ", bias e%d", a->bias);
    for (int s = 0; s < a->ep.n; s++)
        buf_printf(b, "%s%s", s ? ", " : ", then ", ew_table[a->ep.step[s].ew].name);
    buf_puts(b, " */\n");
}

/* v = sum (+ bias), epilogue, store, for column expression col and element index idx. */
static void put_finish(const Graph *g, const Node *n, Buf *b, const char *ind, const char *sum,
                       const char *col, const char *idx)
{
    buf_printf(b, "%s{\n%s    float v = %s", ind, ind, sum);
    if (n->a.bias)
        buf_printf(b, " + e%d[%s]", n->a.bias, col);
    buf_puts(b, ";\n");
    char in2[64];
    snprintf(in2, sizeof in2, "%s    ", ind);
    emit_epilogue(g, n, b, in2, col, idx);
    buf_printf(b, "%s    y[%s] = v;\n%s}\n", ind, idx, ind);
}

/* The finished rows nn + r of a GEMV, r < R, from their sums sR followed by lane. */
static void put_rows_finish(const Graph *g, const Node *n, Buf *b, int R, const char *lane,
                            const char *ind)
{
    for (int r = 0; r < R; r++) {
        char sum[16], col[24];
        snprintf(sum, sizeof sum, "s%d%s", r, lane);
        snprintf(col, sizeof col, "nn + %d", r);
        put_finish(g, n, b, ind, sum, col, col);
    }
}

/* The rows [n0, n0 + R) of a GEMV, as a block of code inside the loop over n. */
static void put_gemv_rows(const Graph *g, const Node *n, Buf *b, int R, const char *ind)
{
    const Attrs *a = &n->a;
    int L = a->tile.wb, K = a->k, KV = K / L * L;
    for (int r = 0; r < R; r++)
        buf_printf(b, "%sconst float *w%d = w + (long)(nn + %d) * %d;\n", ind, r, r, K);
    buf_printf(b, "%sfloat", ind);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s s%d[%d]", r ? "," : "", r, L);
    buf_puts(b, ";\n");
    buf_printf(b, "%sfor (l = 0; l < %d; l++) {\n", ind, L);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s    s%d[l] = 0.0f;\n", ind, r);
    buf_printf(b, "%s}\n", ind);
    if (KV > 0) {
        buf_printf(b, "%sfor (k = 0; k < %d; k += %d) {\n", ind, KV, L);
        buf_printf(b, "%s    %sfor (l = 0; l < %d; l++) {\n", ind, vloop(g), L);
        buf_printf(b, "%s        const float xv = x[k + l];\n", ind);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s        s%d[l] += w%d[k + l] * xv;\n", ind, r, r);
        buf_printf(b, "%s    }\n%s}\n", ind, ind);
    }
    /* fold the lanes down to 8 (in chunk order), then halve */
    int lanes = L;
    for (int c = 8; L > 8 && L % 8 == 0 && c < L; c += 8) {
        buf_printf(b, "%sfor (l = 0; l < 8; l++) {\n", ind);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s    s%d[l] += s%d[l + %d];\n", ind, r, r, c);
        buf_printf(b, "%s}\n", ind);
        lanes = 8;
    }
    for (int h = lanes / 2; h >= 1; h /= 2) {
        buf_printf(b, "%sfor (l = 0; l < %d; l++) {\n", ind, h);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s    s%d[l] += s%d[l + %d];\n", ind, r, r, h);
        buf_printf(b, "%s}\n", ind);
    }
    if (KV < K) {
        buf_printf(b, "%sfor (k = %d; k < %d; k++) {\n", ind, KV, K);
        buf_printf(b, "%s    const float xv = x[k];\n", ind);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s    s%d[0] += w%d[k] * xv;\n", ind, r, r);
        buf_printf(b, "%s}\n", ind);
    }
    put_rows_finish(g, n, b, R, "[0]", ind);
}

/* Cortex-M: the rows [nn, nn + R) of a GEMV in one named sum each (the core has no
 * vectors; a compiler keeps scalars in registers where it keeps arrays on the stack),
 * k in steps of U (unrolled), multiply-adds fused where the core has them (RC_FMA). */
static void put_gemv_rows_cm(const Graph *g, const Node *n, Buf *b, int R, int U, const char *ind)
{
    int K = n->a.k, KV = K / U * U;
    for (int r = 0; r < R; r++)
        buf_printf(b, "%sconst float *w%d = w + (long)(nn + %d) * %d;\n", ind, r, r, K);
    buf_printf(b, "%sfloat", ind);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s s%d = 0.0f", r ? "," : "", r);
    buf_puts(b, ";\n");
    for (int part = 0; part < 2; part++) {
        int from = part ? KV : 0, to = part ? K : KV, step = part ? 1 : U;
        if (from >= to)
            continue;
        buf_printf(b, "%sfor (k = %d; k < %d; k += %d) {\n", ind, from, to, step);
        for (int u = 0; u < step; u++)
            buf_printf(b, "%s    const float x%d = x[k + %d];\n", ind, u, u);
        for (int u = 0; u < step; u++)
            for (int r = 0; r < R; r++)
                buf_printf(b, "%s    s%d = RC_FMA(s%d, w%d[k + %d], x%d);\n", ind, r, r, r, u, u);
        buf_printf(b, "%s}\n", ind);
    }
    put_rows_finish(g, n, b, R, "", ind);
}

/* The loops of a GEMV over its rows, RB at a time, then the rest one at a time. */
static void put_gemv_loops(const Graph *g, const Node *n, Buf *b, int RB, bool cm)
{
    int N = n->a.n, NF = N / RB * RB;
    if (NF > 0) {
        buf_printf(b, "    for (nn = 0; nn < %d; nn += %d) {\n", NF, RB);
        if (cm)
            put_gemv_rows_cm(g, n, b, RB, n->a.tile.wb, "        ");
        else
            put_gemv_rows(g, n, b, RB, "        ");
        buf_puts(b, "    }\n");
    }
    if (NF < N) {
        buf_printf(b, "    for (nn = %d; nn < %d; nn++) {\n", NF, N);
        if (cm)
            put_gemv_rows_cm(g, n, b, 1, n->a.tile.wb, "        ");
        else
            put_gemv_rows(g, n, b, 1, "        ");
        buf_puts(b, "    }\n");
    }
}

static void emit_gemv(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    bool cm = g->target == TARGET_CORTEX_M, split = simd_passes(g, idx);
    if (cm)
        put_fma_macro(b);
    if (*vloop(g))
        put_vloop_macro(b);
    put_comment(g, idx, b);
    buf_printf(b, "/* %d weight rows at a time", a->tile.rb);
    if (split)
        buf_printf(b, " (%d where RC_SIMD is 0)", a->tile.sub);
    buf_printf(b, ", %d partial sums each, weights [%d][%d] as stored */\n", a->tile.wb, a->n, a->k);
    buf_printf(b, "static void k%d_dense(const float *restrict x, const float *restrict w", idx);
    put_params(n, b);
    buf_printf(b, ", float *restrict y)\n{\n    int nn, k%s;\n", cm ? "" : ", l");
    if (split) {
        buf_puts(b, "#if RC_SIMD\n");
        put_gemv_loops(g, n, b, a->tile.rb, cm);
        buf_puts(b, "#else /* small frames where the sums are on the stack */\n");
        put_gemv_loops(g, n, b, a->tile.sub, cm);
        buf_puts(b, "#endif\n");
    } else {
        put_gemv_loops(g, n, b, a->tile.rb, cm);
    }
    buf_puts(b, "}\n\n");
}

/* The body of kN_bR (emit_gemm_block) for R rows from m + so (so: "", or "s + " in a pass
 * of Tile.sub rows). With tile.vw (and W a multiple of it), row r's accumulators are the
 * arrays a[r * V + v] of vw columns each (V = W / vw), one weight vector per array. */
static void put_gemm_body(const Graph *g, int idx, int R, int WB, const char *so, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    int K = a->k, N = a->n;
    int AW = a->tile.vw && WB % a->tile.vw == 0 ? a->tile.vw : WB, V = WB / AW;
    buf_puts(b, "    float");
    for (int q = 0; q < R * V; q++)
        buf_printf(b, "%s a%d[%d]", q ? "," : "", q, AW);
    buf_puts(b, ";\n    int j, k;\n");
    for (int r = 0; r < R; r++)
        buf_printf(b, "    const float *x%d = x + (long)(m + %s%d) * %d;\n", r, so, r, K);
    buf_printf(b, "    for (j = 0; j < %d; j++) {\n", AW);
    for (int q = 0; q < R * V; q++)
        buf_printf(b, "        a%d[j] = 0.0f;\n", q);
    buf_puts(b, "    }\n");
    buf_printf(b, "    for (k = 0; k < %d; k++) {\n", K);
    /* packed weights: rows of WB; b read in place: its rows of N */
    if (a->tile.streams) /* arrays of AW columns, each its own stream [V][K][AW] */
        buf_printf(b, "        const float *wk = w + (long)k * %d;\n", AW);
    else
        buf_printf(b, "        const float *wk = w + (long)k * %d;\n", a->tile.packed ? WB : N);
    for (int r = 0; r < R; r++)
        buf_printf(b, "        const float v%d = x%d[k];\n", r, r);
    buf_printf(b, "        %sfor (j = 0; j < %d; j++) {\n", vloop(g), AW);
    if (V == 1)
        buf_puts(b, "            const float wv = wk[j];\n");
    else
        for (int v = 0; v < V; v++)
            buf_printf(b, "            const float wv%d = wk[j + %ld];\n", v,
                       (long)v * AW * (a->tile.streams ? K : 1));
    for (int r = 0; r < R; r++)
        for (int v = 0; v < V; v++) {
            if (V == 1)
                buf_printf(b, "            a%d[j] += v%d * wv;\n", r, r);
            else
                buf_printf(b, "            a%d[j] += v%d * wv%d;\n", r * V + v, r, v);
        }
    buf_puts(b, "        }\n    }\n");
    for (int v = 0; v < V; v++) {
        char col[24];
        snprintf(col, sizeof col, v ? "nc0 + %d + j" : "nc0 + j", v * AW);
        if (V == 1)
            buf_puts(b, "    for (j = 0; j < nc; j++) {\n");
        else if (v == 0)
            buf_printf(b, "    for (j = 0; j < %d && j < nc; j++) {\n", AW);
        else
            buf_printf(b, "    for (j = 0; j < %d && %d + j < nc; j++) {\n", AW, v * AW);
        for (int r = 0; r < R; r++) {
            char sum[16], idxs[64];
            snprintf(sum, sizeof sum, "a%d[j]", r * V + v);
            snprintf(idxs, sizeof idxs, "(long)(m + %s%d) * %d + %s", so, r, N, col);
            put_finish(g, n, b, "        ", sum, col, idxs);
        }
        buf_puts(b, "    }\n");
    }
}

/* kN_bR (kN_bR_wW for the last block when it is W < wb wide): R rows from m x W columns
 * from nc0 (nc of them stored), its body put_gemm_body's. --target generic with
 * Tile.sub: passes of sub rows where RC_SIMD is 0. */
static void emit_gemm_block(const Graph *g, int idx, int R, int WB, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    buf_printf(b, "/* n%d: %d rows from m x %d columns from nc0 (the first nc are stored) */\n", idx,
               R, WB);
    buf_printf(b, "static void k%d_b%d", idx, R);
    if (WB != a->tile.wb)
        buf_printf(b, "_w%d", WB);
    buf_puts(b, "(const float *restrict x, const float *restrict w");
    put_params(n, b);
    buf_puts(b, ", float *restrict y, int m, int nc0, int nc)\n{\n");
    if (simd_passes(g, idx) && R == a->tile.rb) {
        Buf whole = { 0 }, pass = { 0 };
        char end[16];
        snprintf(end, sizeof end, "%d", R);
        put_gemm_body(g, idx, R, WB, "", &whole);
        put_gemm_body(g, idx, a->tile.sub, WB, "s + ", &pass);
        put_simd_split(b, buf_cstr(&whole), buf_cstr(&pass), end, a->tile.sub);
        buf_free(&whole);
        buf_free(&pass);
    } else {
        put_gemm_body(g, idx, R, WB, "", b);
    }
    buf_puts(b, "}\n\n");
}

/* The calls of one column block's functions (width W) at indent ind, on input xn and
 * output yn. */
static void put_gemm_calls(const Node *n, int idx, int W, Buf *b, const char *ind, const char *nc,
                           const char *xn, const char *yn)
{
    const Attrs *a = &n->a;
    int RB = a->tile.rb, M = a->m, MF = M / RB * RB;
    /* Tile.full: the rows after MF as a block of RB overlapping the one before */
    bool over = a->tile.full && MF > 0 && MF < M;
    char sfx[16] = "";
    if (W != a->tile.wb)
        snprintf(sfx, sizeof sfx, "_w%d", W);
    if (MF > 0) {
        buf_printf(b, "%sfor (m = 0; m < %d; m += %d)\n", ind, MF, RB);
        buf_printf(b, "%s    k%d_b%d%s(%s, wp", ind, idx, RB, sfx, xn);
        put_args(n, b);
        buf_printf(b, ", %s, m, nc0, %s);\n", yn, nc);
    }
    if (MF < M) {
        buf_printf(b, "%sk%d_b%d%s(%s, wp", ind, idx, over ? RB : M - MF, sfx, xn);
        put_args(n, b);
        buf_printf(b, ", %s, %d, nc0, %s);\n", yn, over ? M - RB : MF, nc);
    }
}

/* The block functions of node idx: full blocks (when nfull > 0), then the narrower last
 * block (tile.wr), each for rb rows and for the rows left over. */
static void emit_gemm_blocks(const Graph *g, int idx, int nfull, Buf *b)
{
    const Attrs *a = &g->nodes[idx].a;
    int RB = a->tile.rb, M = a->m, MF = M / RB * RB;
    for (int w = 0; w < 2; w++) {
        int W = w ? a->tile.wr : a->tile.wb;
        if (!W || (w == 0 && nfull == 0))
            continue;
        if (MF > 0)
            emit_gemm_block(g, idx, RB, W, b);
        if (MF < M && !(a->tile.full && MF > 0))
            emit_gemm_block(g, idx, M - MF, W, b);
    }
}

static void emit_gemm(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    int RB = a->tile.rb, WB = a->tile.wb, WR = a->tile.wr, M = a->m, N = a->n, K = a->k;
    int MF = M / RB * RB, NBLK = (N + WB - 1) / WB, NFULL = WR ? NBLK - 1 : NBLK;
    if (*vloop(g))
        put_vloop_macro(b);
    emit_gemm_blocks(g, idx, NFULL, b);
    put_comment(g, idx, b);
    int AW = a->tile.streams ? a->tile.vw : WB; /* columns a stream */
    buf_printf(b, "/* tiling: %d rows x %d columns in registers, weights packed [%d]", RB, WB, NFULL);
    if (AW < WB)
        buf_printf(b, "[%d]", WB / AW);
    buf_printf(b, "[%d][%d]", K, AW);
    if (WR && AW < WB)
        buf_printf(b, " then [%d][%d][%d]", WR / AW, K, AW);
    else if (WR)
        buf_printf(b, " then [%d][%d]", K, WR);
    buf_puts(b, " */\n");
    buf_printf(b, "static void k%d_dense(const float *restrict x, const float *restrict w", idx);
    put_params(n, b);
    buf_puts(b, ", float *restrict y)\n{\n");
    if (NFULL > 0 || MF > 0)
        buf_printf(b, "    int %s%s%s;\n", NFULL > 0 ? "nb" : "", NFULL > 0 && MF > 0 ? ", " : "",
                   MF > 0 ? "m" : "");
    if (NFULL > 0) {
        buf_printf(b, "    for (nb = 0; nb < %d; nb++) {\n", NFULL);
        buf_printf(b, "        const int nc0 = nb * %d;\n", WB);
        buf_printf(b, "        const int nc = nb == %d ? %d : %d;\n", NBLK - 1, N - (NBLK - 1) * WB, WB);
        buf_printf(b, "        const float *wp = w + (long)nb * %ld;\n", (long)K * WB);
        put_gemm_calls(n, idx, WB, b, "        ", "nc", "x", "y");
        buf_puts(b, "    }\n");
    }
    if (WR) {
        buf_printf(b, "    { /* the last %d columns */\n", N - NFULL * WB);
        buf_printf(b, "        const int nc0 = %d;\n", NFULL * WB);
        buf_printf(b, "        const float *wp = w + %ldL;\n", (long)NFULL * K * WB);
        char nc[16];
        snprintf(nc, sizeof nc, "%d", N - NFULL * WB);
        put_gemm_calls(n, idx, WR, b, "        ", nc, "x", "y");
        buf_puts(b, "    }\n");
    }
    buf_puts(b, "}\n\n");
}

/* A matmul whose b is computed (not packed): per batch, the blocks of emit_gemm read b's
 * rows of n in place; the last n % wb columns are a block of their own width. */
static void emit_gemm_inplace(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Attrs *a = &n->a;
    int RB = a->tile.rb, WB = a->tile.wb, WR = a->tile.wr, M = a->m, N = a->n, K = a->k;
    int MF = M / RB * RB, NFULL = N / WB;
    if (*vloop(g))
        put_vloop_macro(b);
    emit_gemm_blocks(g, idx, NFULL, b);
    put_comment(g, idx, b);
    buf_printf(b, "/* tiling: %d rows x %d columns in registers; %d batches of a [%d][%d] (stride "
               "%lld) by b [%d][%d] read in place (stride %lld) */\n", RB, WB, a->batch, M, K,
               (long long)a->sa, K, N, (long long)a->sb);
    buf_printf(b, "static void k%d_dense(const float *restrict x, const float *restrict w", idx);
    put_params(n, b);
    buf_printf(b, ", float *restrict y)\n{\n    int i%s%s;\n", NFULL > 0 ? ", nb" : "",
               MF > 0 ? ", m" : "");
    buf_printf(b, "    for (i = 0; i < %d; i++) {\n", a->batch);
    buf_printf(b, "        const float *xi = x + (long)i * %lld, *wi = w + (long)i * %lld;\n",
               (long long)a->sa, (long long)a->sb);
    buf_printf(b, "        float *yi = y + (long)i * %lld;\n", (long long)M * N);
    if (NFULL > 0) {
        buf_printf(b, "        for (nb = 0; nb < %d; nb++) {\n", NFULL);
        buf_printf(b, "            const int nc0 = nb * %d;\n", WB);
        buf_puts(b, "            const float *wp = wi + nc0;\n");
        char nc[16];
        snprintf(nc, sizeof nc, "%d", WB);
        put_gemm_calls(n, idx, WB, b, "            ", nc, "xi", "yi");
        buf_puts(b, "        }\n");
    }
    if (WR) {
        buf_printf(b, "        { /* the last %d columns */\n", WR);
        buf_printf(b, "            const int nc0 = %d;\n", NFULL * WB);
        buf_puts(b, "            const float *wp = wi + nc0;\n");
        char nc[16];
        snprintf(nc, sizeof nc, "%d", WR);
        put_gemm_calls(n, idx, WR, b, "            ", nc, "xi", "yi");
        buf_puts(b, "        }\n");
    }
    buf_puts(b, "    }\n}\n\n");
}

void emit_dense_kernel(const Graph *g, int idx, Buf *b)
{
    if (g->nodes[idx].a.tile.kind == TK_GEMV)
        emit_gemv(g, idx, b);
    else if (!g->nodes[idx].a.tile.packed)
        emit_gemm_inplace(g, idx, b);
    else
        emit_gemm(g, idx, b);
}
