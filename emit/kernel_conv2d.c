/*
 * kernel_conv2d.c: the tuned conv2d kernels, one C function per call site with every
 * shape, stride and padding a literal (Attrs.tile says which kernel, fuse.c packs the
 * weights it reads). Also the epilogue writer shared with kernel_dense.c.
 *
 * TK_CONV, weights packed [groups][blocks][ci/groups][kh][kw][rb]:
 *   kN_bR   a register block: R output channels x wb output columns of one row, kept in R
 *           arrays of wb floats; for each input channel and tap, R weights are loaded once
 *           and the innermost loop runs over the wb columns (contiguous input when the
 *           stride is 1). Every kx tap is inside the input: no bounds checks.
 *   kN_e    one output pixel near the left/right border (or in a row narrower than wb),
 *           taps clipped to the input; the innermost loop runs over the rb channels.
 *   kN_conv2d  the driver: batches, channel blocks, rows (taps ky clipped to the input
 *           per row), interior column strips (the last one overlapping its neighbour when
 *           wb does not divide the interior) and border pixels.
 *   A 1x1 stride-1 unpadded conv is one GEMM: its rows are flattened into one long row.
 *   kN_bR_wW  the same block W (< wb) columns wide, for the rest of a row's interior.
 * TK_CONV_OC, the same packing: kN_bo keeps wb arrays of rb accumulators (vectorised over
 *   the channels; with rb over 16, rb / 16 arrays per column), broadcasting each input
 *   value: any wb fits a row, as the vector is along the channels.
 *   With tile.rows (x86-64-avx2, rows of a few pixels, half or more of them border ones:
 *   ResNet's 4x4 and 2x2 stages), the driver first copies the input into xd, the node's
 *   scratch, with the columns its rows read zero-padded: every pixel is interior, a block
 *   is a whole row (tap rows clipped per row) or, with tile.rows > 1, every row of the
 *   image (kN_bo's tap rows unrolled, each row's clipped as it is emitted), so the weights
 *   are read once a call.
 *   With tile.clip (x86-64-avx512), strips of wb cover the whole row: kN_boA, the strip at
 *   column A that reaches the border (0, or the last wb columns), reads its row of input
 *   from column 0 and each of its columns' input values under a literal condition on kx
 *   (0.0f for taps outside the input, as the zero padding); no border pixels (kN_e).
 * TK_CONV with tile.rows (strided convs, few channels): per output row, the input rows it
 *   reads are copied into a local buffer with their padding and split by column phase
 *   (the stride), so every column is interior and reads are contiguous (kN_rR, below).
 * TK_WINO (x86-64-avx2, 1-D stride-1 convs), weights transformed and packed
 *   [8][cop / rb][groups][ci][rb]: Winograd F(6, 3) along the row (emit_wino, below):
 *   the input transformed 8 channels a vector, kN_bw the products of one point for rb
 *   channels x wb tiles, then each tile's 6 outputs through the bias and the epilogue.
 * TK_DEPTHWISE, weights OIHW: per channel and output row, one loop over the interior
 *   columns with all kh x kw taps unrolled (rows grouped by which taps are inside the
 *   input, so each group's taps are literals; on x86 targets in overlapping strips of one
 *   vector); border columns clip their taps. With tile.rows (rows of 4 columns or more),
 *   each channel's input is first copied into a zero-padded plane (one per column phase
 *   when strided along the rows), so every column is interior and read contiguously, and
 *   output rows go tile.rows at a time, each input row read once (put_plane_rows).
 * --target x86-64-avx2: the blocks' multiply-adds are one loop per broadcast operand (a
 *   weight in kN_bR / kN_rR, an input value in kN_bo), kept a loop of one vector, and their
 *   accumulators of more than a vector are arrays of one vector each (Tile.vw): gcc then
 *   builds one broadcast at a time instead of all of them before the multiply-adds (see
 *   compiler/pack.c, bcast_fits, for the block sizes this allows).
 * --target generic, Tile.sub: a TK_CONV block's function runs its rb rows as one block
 *   where the emitted C's RC_SIMD is 1 (a core with vector registers) and, where it is 0,
 *   in passes of sub rows from oc + s (small frames on scalar cores, whose sums are arrays
 *   on the stack); border pixels keep one sum per channel there.
 * --target cortex-m: the TK_CONV blocks and border pixels keep their sums in named
 *   scalars (a<r>_<j>), load each input column once per row of taps and multiply-add with
 *   RC_FMA (fmaf where the core has a fused multiply-add).
 * The sum of each output starts at the bias and adds taps in (input channel, ky, kx)
 * order, as rk_conv2d does; the fused epilogue is applied as each output is stored.
 */
#include "emit.h"

#include <ctype.h>
#include <math.h>
#include <stb_ds.h>
#include <string.h>

void put_float_literal(Buf *b, float f)
{
    if (isnan(f))
        buf_puts(b, "NAN");
    else if (isinf(f))
        buf_puts(b, f < 0 ? "-INFINITY" : "INFINITY");
    else
        buf_printf(b, "%af", (double)f);
}

void put_fma_macro(Buf *b)
{
    buf_puts(b, "#ifndef RC_FMA /* s + w * x, fused where the core has a fused multiply-add */\n"
                "#if defined(__ARM_FEATURE_FMA)\n"
                "#define RC_FMA(s, w, x) fmaf(w, x, s)\n"
                "#else\n"
                "#define RC_FMA(s, w, x) ((s) + (w) * (x))\n"
                "#endif\n"
                "#endif\n\n");
}

void put_vloop_macro(Buf *b)
{
    buf_puts(b, "#ifndef RC_VLOOP /* before a block's loop over its columns: kept a loop */\n"
                "#if defined(__clang__) && !defined(__x86_64__) && !defined(__i386__)\n"
                "#define RC_VLOOP _Pragma(\"clang loop unroll(disable)\")\n"
                "#else\n"
                "#define RC_VLOOP\n"
                "#endif\n"
                "#endif\n\n");
}

const char *vloop(const Graph *g)
{
    return g->target == TARGET_GENERIC ? "RC_VLOOP " : "";
}

void put_simd_macro(Buf *b)
{
    buf_puts(b, "#ifndef RC_SIMD /* 1: a core with vector registers, which hold a block's sums; "
                "0: blocks in passes of a few rows (small stack frames; smaller code at -Os) */\n"
                "#if (defined(__SSE2__) || defined(__AVX__) || defined(__ARM_NEON) || "
                "defined(__ARM_NEON__) || defined(__wasm_simd128__) || defined(__ALTIVEC__) || "
                "defined(__riscv_vector) || defined(_M_X64) || defined(_M_ARM64)) && "
                "!defined(__OPTIMIZE_SIZE__)\n"
                "#define RC_SIMD 1\n"
                "#else\n"
                "#define RC_SIMD 0\n"
                "#endif\n"
                "#endif\n"
                "#ifndef RC_WIDE /* 1: vectors of 16 floats, which blocks twice as wide fill */\n"
                "#if RC_SIMD && defined(__AVX512F__)\n"
                "#define RC_WIDE 1\n"
                "#else\n"
                "#define RC_WIDE 0\n"
                "#endif\n"
                "#endif\n\n");
}

void put_simd_split(Buf *b, const char *whole, const char *pass, const char *end, int S)
{
    buf_printf(b, "#if RC_SIMD\n%s#else /* in passes of %d row(s): small frames where the sums are "
                  "on the stack */\n    int s;\n    for (s = 0; s < %s; s += %d) {\n", whole, S, end, S);
    while (*pass) { /* indented one level more */
        const char *e = strchr(pass, '\n');
        size_t len = e ? (size_t)(e - pass) + 1 : strlen(pass);
        if (len > 1)
            buf_puts(b, "    ");
        buf_write(b, pass, len);
        pass += len;
    }
    buf_puts(b, "    }\n#endif\n");
}

bool simd_passes(const Graph *g, int idx)
{
    const Tile *t = &g->nodes[idx].a.tile;
    return (t->kind == TK_CONV || t->kind == TK_CONV_ROWS || t->kind == TK_GEMV ||
            t->kind == TK_GEMM) && t->sub &&
           t->sub < t->rb;
}

static bool x86_target(const Graph *g)
{
    return g->target == TARGET_X86_64_AVX2 || g->target == TARGET_X86_64_AVX512;
}

/* x86-64-avx2 conv blocks: each broadcast operand has a loop of its own (put_bcast_fmas,
 * emit_block_oc), sized by compiler/pack.c (bcast_fits). */
static bool bcast_loops(const Graph *g)
{
    return g->target == TARGET_X86_64_AVX2;
}

/* Before a conv block's loop over its columns: RC_VLOOP (generic), or on x86 RC_CLOOP, a
 * pragma that keeps it a loop under gcc (-O3 unrolls a loop of a few trips completely and
 * then may leave it scalar: ResNet-18's 4x4 and 2x2 convs, 14.5 -> 13.0 ms). The border
 * pixels' loop over their channels carries RC_CLOOP on every target (emit_edge). */
static const char *col_loop(const Graph *g)
{
    return x86_target(g) ? "RC_CLOOP " : vloop(g);
}

void put_lane_taps(Buf *b, const Conv *c, int oy, int ox, int cb, const char *ind,
                   const char *acc, const char *src)
{
    for (int ky = 0; ky < c->KH; ky++) {
        long iy = (long)oy * c->SH - c->PT + (long)ky * c->DH;
        for (int kx = 0; kx < c->KW && iy >= 0 && iy < c->HI; kx++) {
            long ix = (long)ox * c->SW - c->PL + (long)kx * c->DW;
            if (ix >= 0 && ix < c->WI)
                buf_printf(b, "%s%s += wf[%d + c] * %s[%ld + c];\n", ind, acc, (ky * c->KW + kx) * cb,
                           src, (iy * c->WI + ix) * cb);
        }
    }
}

void put_cloop_macro(Buf *b)
{
    buf_puts(b, "#ifndef RC_CLOOP /* before a loop gcc should keep a loop (not unroll completely) */\n"
                "#if defined(__GNUC__) && __GNUC__ >= 8 && !defined(__clang__)\n"
                "#define RC_CLOOP _Pragma(\"GCC unroll 1\")\n"
                "#else\n"
                "#define RC_CLOOP\n"
                "#endif\n"
                "#endif\n\n");
}

static void put_col_loop_macro(const Graph *g, Buf *b)
{
    if (x86_target(g))
        put_cloop_macro(b);
    else if (*vloop(g))
        put_vloop_macro(b);
}

/* Operand names: inputs 2.. are eK (indexed per channel or as a scalar, and the bias)
 * or fK when read per output element (the kernels offset those to the element's block). */
bool epilogue_reads_full(const Node *n, int k, int s0, int s1)
{
    for (int s = s0; s < s1; s++)
        if (n->a.ep.step[s].operand == k && n->a.ep.step[s].bcast == EPB_FULL)
            return true;
    return false;
}

static char op_prefix(const Node *n, int k)
{
    return epilogue_reads_full(n, k, 0, n->a.ep.n) ? 'f' : 'e';
}

/* Steps [s0, s1) of n's epilogue (emit_epilogue: all of them). */
static void put_epilogue_steps(const Node *n, Buf *b, const char *ind, const char *chan,
                               const char *idx, int s0, int s1)
{
    for (int s = s0; s < s1; s++) {
        const EpStep *st = &n->a.ep.step[s];
        const EwDesc *ew = &ew_table[st->ew];
        buf_printf(b, "%s{\n%s    const float ", ind, ind);
        if (!st->operand) {
            buf_puts(b, "x = v;\n");
        } else {
            char opnd[96];
            if (st->bcast == EPB_CHANNEL)
                snprintf(opnd, sizeof opnd, "e%d[%s]", st->operand, chan);
            else if (st->bcast == EPB_SCALAR)
                snprintf(opnd, sizeof opnd, "e%d[0]", st->operand);
            else
                snprintf(opnd, sizeof opnd, "f%d[%s]", st->operand, idx);
            if (st->swap)
                buf_printf(b, "x = %s, y = v;\n", opnd);
            else
                buf_printf(b, "x = v, y = %s;\n", opnd);
        }
        if (strstr(ew->expr, "p0")) {
            buf_printf(b, "%s    const float p0 = ", ind);
            put_float_literal(b, st->p0);
            buf_puts(b, ";\n");
        }
        if (strstr(ew->expr, "p1")) {
            buf_printf(b, "%s    const float p1 = ", ind);
            put_float_literal(b, st->p1);
            buf_puts(b, ";\n");
        }
        buf_printf(b, "%s    v = (float)(%s); /* %s */\n%s}\n", ind, ew->expr, ew->name, ind);
    }
}

void emit_epilogue(const Graph *g, const Node *n, Buf *b, const char *ind, const char *chan,
                   const char *idx)
{
    (void)g;
    put_epilogue_steps(n, b, ind, chan, idx, 0, n->a.ep.n);
}

/* Where a depthwise conv's epilogue leaves the loop over the taps: at its first step
 * that calls a function other than a rounding, fabsf or sqrtf (rk_expf, tanhf, ...), on
 * targets with vectors. Inside the tap loop, with its strided loads, such a step kept gcc
 * 12 from vectorising the loop at full width (EfficientNet's depthwise convs with swish ran
 * 2.5-4x slower than the conv and the swish apart); from that step on, the epilogue is a
 * pass over the channel's finished plane, still in L1, that vectorises alone. Cortex-M
 * has no vectors: the epilogue stays in the loop there (no second pass over the plane). */
static int depthwise_cut(const Graph *g, const Node *n)
{
    static const char *const cheap[] = { "fabsf", "floorf", "ceilf", "roundf", "truncf", "sqrtf" };
    if (g->target == TARGET_CORTEX_M)
        return n->a.ep.n;
    for (int s = 0; s < n->a.ep.n; s++) {
        const char *e = ew_table[n->a.ep.step[s].ew].expr;
        for (const char *p = strchr(e, '('); p; p = strchr(p + 1, '(')) {
            const char *q = p;
            while (q > e && (isalnum((unsigned char)q[-1]) || q[-1] == '_'))
                q--;
            bool call = q < p, known = false;
            for (int k = 0; k < (int)(sizeof cheap / sizeof *cheap); k++)
                known |= (size_t)(p - q) == strlen(cheap[k]) && !strncmp(q, cheap[k], (size_t)(p - q));
            if (call && !known)
                return s;
        }
    }
    return n->a.ep.n;
}

/* The steps of the depthwise epilogue from depthwise_cut on, as a loop that compilers
 * vectorise: over each channel's plane yc as it is finished (whole false: in the loops
 * put_channel_start opens), or, for planes under 64 outputs (a loop too short to
 * vectorise well), over the whole output once every channel is done (whole true: after
 * them). i is declared. */
static void put_depthwise_tail(const Graph *g, const Node *n, const Conv *c, Buf *b, bool whole)
{
    int cut = depthwise_cut(g, n);
    long plane = (long)c->HO * c->WO;
    if (cut == n->a.ep.n || whole != (plane < 64))
        return;
    const char *ind = whole ? "        " : "                ";
    buf_printf(b, "%.*sfor (i = 0; i < %ld; i++) { /* the epilogue from %s on, over the %s */\n",
               (int)strlen(ind) - 4, ind, whole ? plane * c->N * c->CO : plane,
               ew_table[n->a.ep.step[cut].ew].name, whole ? "output" : "plane");
    buf_printf(b, "%sfloat v = %s[i];\n", ind, whole ? "y" : "yc");
    char chan[48] = "ch";
    if (whole) {
        snprintf(chan, sizeof chan, "i / %ld %% %d", plane, c->CO);
        for (int k = 2; k < (int)arrlen(n->in); k++)
            if (epilogue_reads_full(n, k, cut, n->a.ep.n))
                buf_printf(b, "%sconst float *f%d = e%d;\n", ind, k, k);
    }
    put_epilogue_steps(n, b, ind, chan, "i", cut, n->a.ep.n);
    buf_printf(b, "%s%s[i] = v;\n%.*s}\n", ind, whole ? "y" : "yc", (int)strlen(ind) - 4, ind);
}

/* ", const float *restrict e2, ..." for inputs 2.. of n: in a block function, an operand
 * read per output element is fK_ (the block offsets it to its batch as fK). */
static void put_operand_params(const Node *n, Buf *b, bool block)
{
    for (int k = 2; k < (int)arrlen(n->in); k++) {
        bool full = op_prefix(n, k) == 'f';
        buf_printf(b, ", const float *restrict %c%d%s", block && full ? 'f' : 'e', k,
                   block && full ? "_" : "");
    }
}

/* ", e2, e3, ..." for the calls from the driver. */
static void put_operand_args(const Node *n, Buf *b)
{
    for (int k = 2; k < (int)arrlen(n->in); k++)
        buf_printf(b, ", e%d", k);
}

/* The node's comment: where it came from and what it computes. */
static void put_header_comment(const Graph *g, int idx, Buf *b, const char *what)
{
    const Node *n = &g->nodes[idx];
    char s1[160], s2[160], s3[160];
    buf_printf(b, "/* n%d: nodes[%d] %s%s: %s %s * %s -> %s", idx, n->json,
               n->relay_op ? n->relay_op : "", n->a.ep.n ? " + epilogue" : "", what,
               shape_str(&g->values[n->in[0]].shape, s1, sizeof s1),
               shape_str(&g->values[n->in[1]].shape, s2, sizeof s2),
               shape_str(&g->values[n->out].shape, s3, sizeof s3));
    if (n->a.bias)
        buf_printf(b, ", bias e%d", n->a.bias);
    for (int s = 0; s < n->a.ep.n; s++)
        buf_printf(b, "%s%s", s ? ", " : ", then ", ew_table[n->a.ep.step[s].ew].name);
    buf_puts(b, " */\n");
}

void conv_init(const Graph *g, int idx, bool flatten, Conv *c)
{
    const Node *n = &g->nodes[idx];
    const Window *w = &n->a.conv;
    const int64_t *xd = g->values[n->in[0]].shape.dim, *yd = g->values[n->out].shape.dim;
    memset(c, 0, sizeof *c);
    c->idx = idx;
    c->N = (int)xd[0], c->CI = (int)xd[1], c->HI = (int)xd[2], c->WI = (int)xd[3];
    c->CO = (int)yd[1], c->HO = (int)yd[2], c->WO = (int)yd[3];
    c->KH = w->kh, c->KW = w->kw, c->SH = w->sh, c->SW = w->sw, c->DH = w->dh, c->DW = w->dw;
    c->PT = w->pt, c->PL = w->pl, c->G = w->groups;
    c->CIG = c->CI / c->G, c->COG = c->CO / c->G;
    c->RB = n->a.tile.rb, c->WB = n->a.tile.wb;
    c->CH = n->a.tile.chains > 1 ? n->a.tile.chains : 1;
    c->U = 1;
    if (flatten && c->KH == 1 && c->KW == 1 && c->SH == 1 && c->SW == 1 && c->PT == 0 &&
        c->PL == 0 && c->HO == c->HI && c->WO == c->WI) {
        /* 1x1: one long row (a GEMM over the flattened pixels) */
        c->WI = c->WO = c->HI * c->WI;
        c->HI = c->HO = 1;
        c->flat = true;
    }
    c->IS = (long)c->KH * c->KW * c->RB, c->TS = c->RB, c->HS = n->a.tile.vw ? n->a.tile.vw : 16;
    if (n->a.tile.streams && n->a.tile.kind == TK_CONV_OC) { /* [..][h][tap][ic][vs] */
        int vs = n->a.tile.streams > 1 ? n->a.tile.vw : c->RB;
        c->IS = vs, c->TS = (long)c->CIG * vs, c->HS = (long)c->KH * c->KW * c->CIG * vs;
        if (vs == c->RB)
            c->HS = n->a.tile.vw ? n->a.tile.vw : 16;
    }
    c->NB = (c->COG + c->RB - 1) / c->RB;
    c->LAST = c->COG - (c->NB - 1) * c->RB;
    c->full = n->a.tile.full && c->LAST != c->RB;
    c->S = simd_passes(g, idx) ? n->a.tile.sub : 0;
    /* ox is interior when ox*SW - PL >= 0 and ox*SW - PL + (KW-1)*DW <= WI - 1 */
    c->OXLO = (c->PL + c->SW - 1) / c->SW;
    long top = (long)c->WI - 1 - (long)(c->KW - 1) * c->DW + c->PL;
    c->OXHI = top < 0 ? 0 : (int)(top / c->SW + 1);
    if (c->OXHI > c->WO)
        c->OXHI = c->WO;
    if (c->OXLO > c->WO)
        c->OXLO = c->WO;
    if (c->OXHI < c->OXLO)
        c->OXHI = c->OXLO;
    c->strips = c->OXHI - c->OXLO >= c->WB;
    c->clip = n->a.tile.kind == TK_CONV_OC && n->a.tile.clip;
    if (c->clip)
        c->strips = c->WO >= c->WB;
    /* a narrower block for the rest of the interior (tile.wr of them, overlapping the strip
     * before when that is wider than the rest), else a strip of wb overlapping */
    int rest = c->strips ? (c->OXHI - c->OXLO) % c->WB : 0;
    c->WR = rest && n->a.tile.wr ? n->a.tile.wr : 0;
}

/* The start of a block or edge function: the parameters after the operands, then where
 * block blk (batch, group, channel block) and row oy are: x, w, y, oc, ky0, ky1 (and nr,
 * the channels stored). The driver passes only (blk, oy, ox), so it stays small where a
 * compiler inlines it into NAME_run. */
void put_border_locals(const Conv *c, Buf *b)
{
    buf_printf(b, "    const int ix0 = ox * %d - %d;\n", c->SW, c->PL);
    buf_printf(b, "    const int kx0 = ix0 >= 0 ? 0 : (-ix0 + %d) / %d;\n", c->DW - 1, c->DW);
    buf_printf(b, "    int kx1 = %d - ix0 < 0 ? 0 : (%d - ix0) / %d + 1;\n", c->WI - 1, c->WI - 1, c->DW);
    buf_puts(b, "    int r, ic, ky, kx;\n");
    buf_printf(b, "    if (kx1 > %d)\n        kx1 = %d;\n", c->KW, c->KW);
}

void put_block_locals(const Conv *c, Buf *b, bool need_nr)
{
    int gnb = c->G * c->NB;
    buf_printf(b, "    const int bt = blk / %d, gb = blk %% %d, grp = gb / %d, ob = gb %% %d;\n", gnb,
               gnb, c->NB, c->NB);
    buf_printf(b, "    const int oc = grp * %d + ob * %d;\n", c->COG, c->RB);
    if (need_nr)
        buf_printf(b, "    const int nr = ob == %d ? %d : %d;\n", c->NB - 1, c->LAST, c->RB);
    buf_printf(b, "    const int iy0 = oy * %d - %d;\n", c->SH, c->PT);
}

static void put_block_start(const Node *n, const Conv *c, Buf *b, bool need_nr)
{
    buf_puts(b, ", float *restrict y_, int blk, int oy, int ox)\n{\n");
    put_block_locals(c, b, need_nr);
    if (c->RY <= 1) { /* (a whole image's block clips its taps per row as it emits them) */
        buf_printf(b, "    const int ky0 = iy0 >= 0 ? 0 : (-iy0 + %d) / %d;\n", c->DH - 1, c->DH);
        buf_printf(b, "    const int kyn = %d - iy0 < 0 ? 0 : (%d - iy0) / %d + 1;\n", c->HI - 1,
                   c->HI - 1, c->DH);
        buf_printf(b, "    const int ky1 = kyn > %d ? %d : kyn;\n", c->KH, c->KH);
    }
    buf_printf(b, "    const float *x = x_ + ((long)bt * %d + (long)grp * %d) * %ld;\n", c->CI, c->CIG,
               (long)c->HI * c->WI);
    buf_printf(b, "    const float *w = w_ + (long)gb * %ld;\n", (long)c->CIG * c->KH * c->KW * c->RB);
    buf_printf(b, "    float *y = y_ + (long)bt * %ld;\n", (long)c->CO * c->HO * c->WO);
    for (int k = 2; k < (int)arrlen(n->in); k++)
        if (op_prefix(n, k) == 'f')
            buf_printf(b, "    const float *f%d = f%d_ + (long)bt * %ld;\n", k, k,
                       (long)c->CO * c->HO * c->WO);
}

/* The start of block function kN_bR (kN_bR_wW): its comment (what: how it keeps its
 * sums), its parameters, and where its block is (put_block_start). */
static void put_block_head(const Node *n, const Conv *c, Buf *b, int R, int W, const char *what)
{
    buf_printf(b, "/* n%d: %d output channels from oc x %d columns from (oy, ox)%s; taps ky in "
                  "[ky0, ky1), every kx */\n", c->idx, R, W, what);
    buf_printf(b, "static void k%d_b%d", c->idx, R);
    if (W != c->WB)
        buf_printf(b, "_w%d", W);
    buf_puts(b, "(const float *restrict x_, const float *restrict w_");
    put_operand_params(n, b, true);
    put_block_start(n, c, b, c->full);
}

/* The loops over input channels ic and tap rows ky of a block starting at column ox, with
 * xr (the tap row's input from the block's first column; from its column 0 in a clipped
 * strip, row_start) and wr (its packed weights). */
static void put_tap_loops(const Conv *c, Buf *b, bool row_start)
{
    buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CIG);
    buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
    buf_printf(b, "            const float *xr = x + ((long)ic * %d + oy * %d - %d + ky * %d) * %d", c->HI,
               c->SH, c->PT, c->DH, c->WI);
    if (row_start)
        buf_puts(b, ";\n");
    else
        buf_printf(b, " + (ox * %d - %d);\n", c->SW, c->PL);
    buf_printf(b, "            const float *wr = w + (long)ic * %ld + ky * %ld;\n", c->IS,
               c->KW * c->TS);
}

/* The accumulators of a column block of R channels x W columns: per channel, W / V arrays
 * of V floats (V = W: one array; a<r * H + h> holds columns [h * V, (h + 1) * V)). */
static int acc_arrays(int W, int V)
{
    return V > 0 && V < W && W % V == 0 ? W / V : 1;
}

/* Whether row r of a block (of a pass of c->S rows when so is "s + ") may be a padded
 * channel of a full last block, stored only when below nr. */
static bool padded_row(const Conv *c, int r, const char *so)
{
    return c->full && r >= (*so ? (c->LAST - 1) % c->S + 1 : c->LAST);
}

/* The arrays of accumulators of a column block (a0 ...), started at the bias (zero in a
 * full last block's padded channels), and the other loop variables (after j). Row r is
 * channel oc + so + r: so is "", or "s + " in a pass (put_passes). */
static void put_acc_init(const Node *n, const Conv *c, Buf *b, int R, int W, int V,
                         const char *vars, const char *so)
{
    int H = acc_arrays(W, V), AW = W / H;
    buf_puts(b, "    float");
    for (int q = 0; q < R * H; q++)
        buf_printf(b, "%s a%d[%d]", q ? "," : "", q, AW);
    buf_printf(b, ";\n    int j, %s, kx;\n", vars);
    buf_printf(b, "    for (j = 0; j < %d; j++) {\n", AW);
    for (int q = 0; q < R * H; q++) {
        int r = q / H;
        if (n->a.bias && padded_row(c, r, so))
            buf_printf(b, "        a%d[j] = nr > %s%d ? e%d[oc + %s%d] : 0.0f;\n", q, so, r, n->a.bias,
                       so, r);
        else if (n->a.bias)
            buf_printf(b, "        a%d[j] = e%d[oc + %s%d];\n", q, n->a.bias, so, r);
        else
            buf_printf(b, "        a%d[j] = 0.0f;\n", q);
    }
    buf_puts(b, "    }\n");
}

/* The stores of a column block: channel oc + so + r, columns ox + j of row oy, through the
 * epilogue. */
static void put_acc_store(const Graph *g, const Conv *c, Buf *b, int R, int W, int V, const char *so)
{
    const Node *n = &g->nodes[c->idx];
    long plane = (long)c->HO * c->WO;
    int H = acc_arrays(W, V), AW = W / H;
    buf_printf(b, "    for (j = 0; j < %d; j++) {\n", AW);
    buf_printf(b, *so ? "        const long i = ((long)(oc + s) * %d + oy) * %d + ox + j;\n"
                      : "        const long i = ((long)oc * %d + oy) * %d + ox + j;\n", c->HO, c->WO);
    buf_puts(b, "        float v;\n");
    for (int q = 0; q < R * H; q++) {
        int r = q / H, h = q % H;
        char chan[32], idx[48];
        snprintf(chan, sizeof chan, "oc + %s%d", so, r);
        snprintf(idx, sizeof idx, r || h ? "i + %ld" : "i", (long)r * plane + h * AW);
        /* a full last block stores its nr channels */
        bool pad = padded_row(c, r, so);
        const char *ind = pad ? "            " : "        ";
        if (pad)
            buf_printf(b, "        if (nr > %s%d) {\n", so, r);
        buf_printf(b, "%sv = a%d[j];\n", ind, q);
        emit_epilogue(g, n, b, ind, chan, idx);
        buf_printf(b, "%sy[%s] = v;\n", ind, idx);
        if (pad)
            buf_puts(b, "        }\n");
    }
    buf_puts(b, "    }\n");
}

/* The index of column `at` + j of a block at stride SW. */
static void col_index(char *xi, size_t n, int at, int SW)
{
    if (at)
        snprintf(xi, n, SW > 1 ? "(%d + j) * %d" : "%d + j", at, SW);
    else
        snprintf(xi, n, SW > 1 ? "j * %d" : "j", SW);
}

/* x86: the multiply-adds of one tap of a column block, one loop per channel r (its weight
 * wr[r] broadcast once, then multiplied by the W columns of xk, stride SW), each kept a loop
 * (RC_CLOOP): gcc vectorises a loop of one vector and builds the broadcast of its invariant
 * operand just before it. Written as one loop over the columns, the R broadcasts were all
 * built first, and R of them plus R accumulators outgrew the 16 AVX2 registers (spilled:
 * conv3x3 32 -> 32 at 34 GFLOP/s). */
static void put_bcast_fmas(Buf *b, const char *ind, int R, int W, int V, int SW, const char *wr,
                           const char *xk)
{
    int H = acc_arrays(W, V), AW = W / H;
    for (int r = 0; r < R; r++) {
        buf_printf(b, "%sRC_CLOOP for (j = 0; j < %d; j++) {\n", ind, AW);
        for (int h = 0; h < H; h++) {
            char xi[48];
            col_index(xi, sizeof xi, h * AW, SW);
            buf_printf(b, "%s    a%d[j] += %s[%d] * %s[%s];\n", ind, r * H + h, wr, r, xk, xi);
        }
        buf_printf(b, "%s}\n", ind);
    }
}

/* The multiply-adds of tap kx of a block of R rows x W columns (row r: weight wr[kx * RB +
 * so + r], columns xk[j * SW]): a loop per broadcast operand where the target says so
 * (put_bcast_fmas), else one loop over the columns, of one vector where the rows are
 * arrays of Tile.vw (H of them a row, their columns xv0, xv1, ... a vector apart). */
static void put_tap_fmas(const Graph *g, const Conv *c, Buf *b, const char *ind, int R, int W,
                         int SW, const char *so)
{
    int V = g->nodes[c->idx].a.tile.vw;
    if (bcast_loops(g)) {
        buf_printf(b, "%sconst float *wk = wr + kx * %d%s;\n", ind, c->RB, *so ? " + s" : "");
        put_bcast_fmas(b, ind, R, W, V, SW, "wk", "xk");
        return;
    }
    int H = acc_arrays(W, V), AW = W / H;
    for (int r = 0; r < R; r++)
        buf_printf(b, "%sconst float w%d = wr[kx * %d + %s%d];\n", ind, r, c->RB, so, r);
    buf_printf(b, "%s%sfor (j = 0; j < %d; j++) {\n", ind, col_loop(g), AW);
    for (int h = 0; h < H; h++) {
        char xi[48];
        col_index(xi, sizeof xi, h * AW, SW);
        buf_printf(b, "%s    const float xv%.*d = xk[%s];\n", ind, H > 1, h, xi);
    }
    for (int r = 0; r < R; r++)
        for (int h = 0; h < H; h++)
            buf_printf(b, "%s    a%d[j] += w%d * xv%.*d;\n", ind, r * H + h, r, H > 1, h);
    buf_printf(b, "%s}\n", ind);
}

/* What a block function computes after its start: R rows, W columns, row r being channel
 * oc + so + r (put_acc_init). */
typedef void BlockBody(const Graph *g, const Conv *c, const void *ctx, Buf *b, int R, int W,
                       const char *so);

/* The body of a block function of R rows, and its end: one pass over the R rows or, with
 * c->S (--target generic), that where RC_SIMD is 1 (the sums of R rows fit a core's vector
 * registers) and else passes of S rows from oc + s (arrays of S x W floats on the stack). */
static void put_passes(const Graph *g, const Conv *c, const void *ctx, Buf *b, int R, int W,
                       BlockBody *body)
{
    if (!c->S || R != c->RB) {
        body(g, c, ctx, b, R, W, "");
        buf_puts(b, "}\n\n");
        return;
    }
    Buf whole = { 0 }, pass = { 0 };
    char end[16] = "nr"; /* full: no pass of padded rows alone */
    if (!c->full)
        snprintf(end, sizeof end, "%d", R);
    body(g, c, ctx, &whole, R, W, "");
    body(g, c, ctx, &pass, c->S, W, "s + ");
    put_simd_split(b, buf_cstr(&whole), buf_cstr(&pass), end, c->S);
    buf_free(&whole);
    buf_free(&pass);
    buf_puts(b, "}\n\n");
}

static void block_body(const Graph *g, const Conv *c, const void *ctx, Buf *b, int R, int W,
                       const char *so)
{
    const Node *n = &g->nodes[c->idx];
    (void)ctx;
    put_acc_init(n, c, b, R, W, n->a.tile.vw, "ic, ky", so);
    put_tap_loops(c, b, false);
    buf_printf(b, "            for (kx = 0; kx < %d; kx++) {\n", c->KW);
    buf_printf(b, "                const float *xk = xr + kx * %d;\n", c->DW);
    put_tap_fmas(g, c, b, "                ", R, W, c->SW, so);
    buf_puts(b, "            }\n        }\n    }\n");
    put_acc_store(g, c, b, R, W, n->a.tile.vw, so);
}

/* A block function of R output channels x W columns (ctx: what its body reads besides). */
typedef void BlockEmit(const Graph *g, const Conv *c, const void *ctx, int R, int W, Buf *b);

/* kN_bR (kN_bR_wW when W is not wb): the register block of R output channels x W
 * columns (see the top of the file). */
static void emit_block(const Graph *g, const Conv *c, const void *ctx, int R, int W, Buf *b)
{
    (void)ctx;
    put_block_head(&g->nodes[c->idx], c, b, R, W, "");
    put_passes(g, c, NULL, b, R, W, block_body);
}

/* --target generic: the columns of the blocks that run where the emitted C's RC_WIDE is 1
 * (vectors of 16 floats: AVX-512), twice wb, for the blocks of Tile.sub (RC_SIMD) whose
 * rows have `cols` interior columns, at least that many; 0: none. Blocks of 8 columns
 * leave half of each such vector unused: gcc 12 -O3 -march=native, Emerald Rapids, 3x3
 * 32 -> 32 at 56x56 (11 channels a block) 806 -> 537 us, 1x1 64 -> 128 at 28x28 205 -> 81
 * (x86-64-avx512's own blocks: 361, 79). */
static int wide_cols(const Graph *g, const Conv *c, int cols)
{
    bool one = c->full || c->LAST == c->RB; /* one block function for every channel block */
    return g->target == TARGET_GENERIC && c->S && one && cols >= 2 * c->WB ? 2 * c->WB : 0;
}

/* The block of c->WW columns of emit (emit_block, emit_rows_block) inside #if RC_WIDE,
 * where RC_SIMD is 1: one pass. */
static void emit_wide_block(const Graph *g, const Conv *c, const void *ctx, Buf *b, BlockEmit *emit)
{
    Conv cw = *c;
    cw.S = 0;
    buf_puts(b, "#if RC_WIDE\n");
    emit(g, &cw, ctx, c->RB, c->WW, b);
    buf_puts(b, "#endif\n\n");
}

/* ---- Cortex-M ----
 * The core has no vectors but 32 float registers, which a compiler fills with named
 * scalars where it keeps arrays on the stack: the block's R x W sums are a<r>_<j>; per
 * input channel and tap row, the input values the W columns read are loaded once (x<i>,
 * shared by the kx taps), each tap's R weights once, and every multiply-add is RC_FMA
 * (fused where the core has it). */

/* The stores of the sums a<r>_<j> (or a<r> with W 0: one pixel, channels r < nr when
 * guarded), through the epilogue; the end of the function. */
static void put_cm_store(const Graph *g, const Conv *c, Buf *b, int R, int W, bool guarded)
{
    const Node *n = &g->nodes[c->idx];
    long plane = (long)c->HO * c->WO;
    buf_printf(b, "    {\n        const long i = ((long)oc * %d + oy) * %d + ox;\n        float v;\n",
               c->HO, c->WO);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < (W ? W : 1); j++) {
            char chan[32], idx[48], ind[16];
            snprintf(chan, sizeof chan, "oc + %d", r);
            snprintf(idx, sizeof idx, "i + %ld", r * plane + j);
            snprintf(ind, sizeof ind, guarded && r ? "            " : "        ");
            if (guarded && r)
                buf_printf(b, "        if (nr > %d) {\n", r);
            if (W)
                buf_printf(b, "%sv = a%d_%d;\n", ind, r, j);
            else
                buf_printf(b, "%sv = a%d;\n", ind, r);
            emit_epilogue(g, n, b, ind, chan, idx);
            buf_printf(b, "%sy[%s] = v;\n", ind, idx);
            if (guarded && r)
                buf_puts(b, "        }\n");
        }
    buf_puts(b, "    }\n}\n\n");
}

/* kN_bR (kN_bR_wW) for Cortex-M: R output channels x W columns in named sums. */
static void emit_block_cm(const Graph *g, const Conv *c, const void *ctx, int R, int W, Buf *b)
{
    (void)ctx;
    const Node *n = &g->nodes[c->idx];
    int span = (W - 1) * c->SW + (c->KW - 1) * c->DW + 1;
    put_block_head(n, c, b, R, W, " in named sums");
    for (int r = 0; r < R; r++) {
        buf_puts(b, "    float");
        for (int j = 0; j < W; j++) {
            buf_printf(b, "%s a%d_%d = ", j ? "," : "", r, j);
            if (n->a.bias)
                buf_printf(b, "e%d[oc + %d]", n->a.bias, r);
            else
                buf_puts(b, "0.0f");
        }
        buf_puts(b, ";\n");
    }
    buf_puts(b, "    int ic, ky;\n");
    put_tap_loops(c, b, false);
    for (int i = 0; i < span; i++) { /* the input columns some (j, kx) reads */
        bool used = false;
        for (int kx = 0; kx < c->KW && !used; kx++)
            used = i - kx * c->DW >= 0 && (i - kx * c->DW) % c->SW == 0 &&
                   (i - kx * c->DW) / c->SW < W;
        if (used)
            buf_printf(b, "            const float x%d = xr[%d];\n", i, i);
    }
    for (int kx = 0; kx < c->KW; kx++) {
        buf_puts(b, "            {\n");
        for (int r = 0; r < R; r++)
            buf_printf(b, "                const float w%d = wr[%d];\n", r, kx * c->RB + r);
        for (int r = 0; r < R; r++)
            for (int j = 0; j < W; j++)
                buf_printf(b, "                a%d_%d = RC_FMA(a%d_%d, w%d, x%d);\n", r, j, r, j, r,
                           j * c->SW + kx * c->DW);
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "        }\n    }\n");
    put_cm_store(g, c, b, R, W, false);
}

/* kN_e for Cortex-M: one border pixel, rb channels in named sums (nr stored), taps
 * clipped. */
static void emit_edge_cm(const Graph *g, const Conv *c, Buf *b)
{
    const Node *n = &g->nodes[c->idx];
    bool guarded = c->LAST != c->RB;
    buf_printf(b, "/* n%d: one pixel near the border, nr output channels from oc in named sums; taps "
                  "clipped */\n", c->idx);
    buf_printf(b, "static void k%d_e(const float *restrict x_, const float *restrict w_", c->idx);
    put_operand_params(n, b, true);
    put_block_start(n, c, b, guarded);
    buf_printf(b, "    const int ix0 = ox * %d - %d;\n", c->SW, c->PL);
    buf_printf(b, "    const int kx0 = ix0 >= 0 ? 0 : (-ix0 + %d) / %d;\n", c->DW - 1, c->DW);
    buf_printf(b, "    int kx1 = %d - ix0 < 0 ? 0 : (%d - ix0) / %d + 1;\n", c->WI - 1, c->WI - 1, c->DW);
    buf_puts(b, "    int ic, ky, kx;\n");
    buf_puts(b, "    float");
    for (int r = 0; r < c->RB; r++) {
        buf_printf(b, "%s a%d = ", r ? "," : "", r);
        if (!n->a.bias)
            buf_puts(b, "0.0f");
        else if (guarded && r)
            buf_printf(b, "nr > %d ? e%d[oc + %d] : 0.0f", r, n->a.bias, r);
        else
            buf_printf(b, "e%d[oc + %d]", n->a.bias, r);
    }
    buf_puts(b, ";\n");
    buf_printf(b, "    if (kx1 > %d)\n        kx1 = %d;\n", c->KW, c->KW);
    buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CIG);
    buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
    buf_printf(b, "            const float *xr = x + ((long)ic * %d + oy * %d - %d + ky * %d) * %d;\n",
               c->HI, c->SH, c->PT, c->DH, c->WI);
    buf_printf(b, "            const float *wr = w + ((long)ic * %d + ky) * %d;\n", c->KH,
               c->KW * c->RB);
    buf_puts(b, "            for (kx = kx0; kx < kx1; kx++) {\n");
    buf_printf(b, "                const float xv = xr[ix0 + kx * %d];\n", c->DW);
    buf_printf(b, "                const float *wk = wr + kx * %d;\n", c->RB);
    for (int r = 0; r < c->RB; r++)
        buf_printf(b, "                a%d = RC_FMA(a%d, wk[%d], xv);\n", r, r, r);
    buf_puts(b, "            }\n        }\n    }\n");
    put_cm_store(g, c, b, c->RB, 0, guarded);
}

/* The input value x<j> that column j of a clipped strip at column `at` (Tile.clip) reads
 * at tap kx from xr, its input row from column 0: a literal condition on kx where a tap
 * falls outside the input (0.0f there, as in the zero padding), 0.0f where all do. */
static void put_clipped_load(const Conv *c, Buf *b, const char *ind, int at, int j)
{
    int base = (at + j) * c->SW - c->PL; /* the input column of tap 0 */
    int klo = base >= 0 ? 0 : (-base + c->DW - 1) / c->DW;
    int khi = c->WI - 1 - base < 0 ? -1 : (c->WI - 1 - base) / c->DW;
    if (khi > c->KW - 1)
        khi = c->KW - 1;
    buf_printf(b, "%s    const float x%d = ", ind, j);
    if (klo > khi) {
        buf_puts(b, "0.0f;\n");
        return;
    }
    if (klo > 0)
        buf_printf(b, "kx >= %d%s", klo, khi < c->KW - 1 ? " && " : " ? ");
    if (khi < c->KW - 1)
        buf_printf(b, "kx <= %d ? ", khi);
    buf_printf(b, "xr[kx * %d %c %d]", c->DW, base < 0 ? '-' : '+', base < 0 ? -base : base);
    buf_puts(b, klo > 0 || khi < c->KW - 1 ? " : 0.0f;\n" : ";\n");
}

/* The multiply-adds of one (ic, ky) of kN_bo for rows [q0, q1) of its block, xr<q> the
 * row of input its row q reads (kx loop included; at >= 0: a clipped strip at that column,
 * put_clipped_load): with bl (x86-64-avx2, bcast_loops) one loop per column (its input
 * value broadcast once) and the loop over the taps kept a loop: unrolled, gcc shares the
 * broadcasts of the columns that two taps read (x[kx + j]), and keeps them all (3x3 32 ->
 * 32 in blocks of 16 channels x 6 columns: 43 -> 93 GFLOP/s); else the input values first,
 * then one loop over the channels. */
static void put_oc_tap_loop(const Conv *c, Buf *b, const char *ind, int q0, int q1, int H, int HW,
                            int at, bool bl)
{
    buf_printf(b, "%s%sfor (kx = 0; kx < %d; kx++) {\n", ind, bl ? "RC_CLOOP " : "", c->KW);
    buf_printf(b, "%s    const float *wk = wr + kx * %ld;\n", ind, c->TS);
    if (bl) {
        for (int q = q0; q < q1; q++)
            for (int j = 0; j < c->WB; j++) {
                buf_printf(b, "%s    RC_CLOOP for (r = 0; r < %d; r++) {\n", ind, HW);
                for (int h = 0; h < H; h++)
                    buf_printf(b, "%s        a%d[r] += xr%.0d[kx * %d + %d] * wk[%ld + r];\n", ind,
                               (q * c->WB + j) * H + h, q, c->DW, j * c->SW, h * c->HS);
                buf_printf(b, "%s    }\n", ind);
            }
    } else {
        for (int q = q0; q < q1; q++)
            for (int j = 0; j < c->WB; j++) {
                if (at >= 0)
                    put_clipped_load(c, b, ind, at, j);
                else
                    buf_printf(b, "%s    const float x%d = xr%.0d[kx * %d + %d];\n", ind, q * c->WB + j,
                               q, c->DW, j * c->SW);
            }
        buf_printf(b, "%s    for (r = 0; r < %d; r++) {\n", ind, HW);
        for (int h = 0; h < H; h++) {
            buf_printf(b, "%s        const float wv%d = wk[%ld + r];\n", ind, h, h * c->HS);
            for (int q = q0; q < q1; q++)
                for (int j = 0; j < c->WB; j++)
                    buf_printf(b, "%s        a%d[r] += x%d * wv%d;\n", ind, (q * c->WB + j) * H + h,
                               q * c->WB + j, h);
        }
        buf_printf(b, "%s    }\n", ind);
    }
    buf_printf(b, "%s}\n", ind);
}

/* The taps of kN_bo (put_oc_tap_loop). x86-64-avx2 writes both forms: clang 14 unrolls the
 * loops per column completely, then leaves most multiply-adds scalar or in 128-bit vectors
 * (3x3 32 -> 32 at 56x56, -O3 -march=x86-64-v3 on Emerald Rapids: 4538 us against gcc's
 * 679), and vectorises the single loop (1140 us; -march=znver3 918, gcc 684), though its 6
 * input values and 12 accumulators outgrow the 16 registers; gcc spills those (1100). */
static void put_oc_taps(const Graph *g, const Conv *c, Buf *b, const char *ind, int q0, int q1, int H,
                        int HW, int at)
{
    bool bl = bcast_loops(g);
    if (at >= 0 && (bl || q1 - q0 != 1))
        unreachable(); /* (pack.c clips only the blocks of one row, without Tuning.regs) */
    if (bl) {
        buf_puts(b, "#if defined(__clang__)\n");
        put_oc_tap_loop(c, b, ind, q0, q1, H, HW, at, false);
        buf_puts(b, "#else\n");
    }
    put_oc_tap_loop(c, b, ind, q0, q1, H, HW, at, bl);
    if (bl)
        buf_puts(b, "#endif\n");
}

/* kN_bo: wb output columns from (oy, ox) x rb output channels from oc (nr of them
 * stored), vectorised over the channels: one array of rb accumulators per column. With
 * c->RY > 1 (every row of the image, oy 0), ry rows of wb columns: per input channel, the
 * tap rows ky each row reads are unrolled (those outside the input left out), so every
 * weight is read once a call. kN_boA (at = A >= 0, Tile.clip): the strip at column A
 * (ox), reaching the border, its taps outside the input read as zeros. */
static void emit_block_oc(const Graph *g, const Conv *c, Buf *b, int at)
{
    const Node *n = &g->nodes[c->idx];
    /* more than 16 channels: H arrays of HW per column (array q = j * H + h holds column j's
     * channels [h * HW, (h + 1) * HW)), as a compiler keeps an array of one vector in a
     * register but spills wider ones */
    int V = n->a.tile.vw ? n->a.tile.vw : 16;
    int H = c->RB > V && c->RB % V == 0 ? c->RB / V : 1, HW = c->RB / H;
    int RY = c->RY > 1 ? c->RY : 1, P = RY * c->WB; /* rows, pixels */
    buf_printf(b, "/* n%d: %d columns from (oy, ox)%s x %d output channels from oc (nr stored); taps ky "
                  "in [ky0, ky1), every kx%s */\n", c->idx, c->WB, RY > 1 ? " of every row" : "", c->RB,
               at >= 0 ? ", those outside the input read as zeros" : "");
    buf_printf(b, "static void k%d_bo", c->idx);
    if (at >= 0)
        buf_printf(b, "%d", at);
    buf_puts(b, "(const float *restrict x_, const float *restrict w_");
    put_operand_params(n, b, true);
    put_block_start(n, c, b, true);
    buf_puts(b, "    float");
    for (int q = 0; q < P * H; q++)
        buf_printf(b, "%s a%d[%d]", q ? "," : "", q, HW);
    buf_puts(b, RY == 1 ? ";\n    int r, ic, ky, kx;\n" : ";\n    int r, ic, kx;\n");
    buf_printf(b, "    for (r = 0; r < %d; r++) {\n", HW);
    for (int q = 0; q < P * H; q++)
        buf_printf(b, "        a%d[r] = 0.0f;\n", q);
    buf_puts(b, "    }\n");
    if (n->a.bias) {
        for (int h = 0; h < H; h++) {
            buf_printf(b, "    for (r = 0; r + %d < nr && r < %d; r++) {\n", h * HW, HW);
            for (int p = 0; p < P; p++)
                buf_printf(b, "        a%d[r] = e%d[oc + %d + r];\n", p * H + h, n->a.bias, h * HW);
            buf_puts(b, "    }\n");
        }
    }
    if (RY == 1) {
        put_tap_loops(c, b, at >= 0);
        put_oc_taps(g, c, b, "            ", 0, 1, H, HW, at);
        buf_puts(b, "        }\n    }\n");
    } else {
        buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CIG);
        for (int ky = 0; ky < c->KH; ky++) {
            int q0 = RY, q1 = 0; /* the rows whose tap row ky is inside the input */
            for (int q = 0; q < RY; q++) {
                int iy = q * c->SH - c->PT + ky * c->DH;
                if (iy >= 0 && iy < c->HI)
                    q0 = q < q0 ? q : q0, q1 = q + 1;
            }
            if (q0 >= q1)
                continue;
            buf_printf(b, "        { /* tap row %d */\n", ky);
            buf_printf(b, "            const float *wr = w + (long)ic * %ld + %ld;\n", c->IS,
                       ky * c->KW * c->TS);
            for (int q = q0; q < q1; q++)
                buf_printf(b, "            const float *xr%.0d = x + ((long)ic * %d + iy0 + %d) * %d + ox * %d;\n",
                           q, c->HI, q * c->SH + ky * c->DH, c->WI, c->SW);
            put_oc_taps(g, c, b, "            ", q0, q1, H, HW, -1);
            buf_puts(b, "        }\n");
        }
        buf_puts(b, "    }\n");
    }
    for (int h = 0; h < H; h++) {
        if (H == 1)
            buf_puts(b, "    for (r = 0; r < nr; r++) {\n");
        else
            buf_printf(b, "    for (r = 0; r + %d < nr && r < %d; r++) {\n", h * HW, HW);
        buf_printf(b, "        const long i = ((long)(oc + %d + r) * %d + oy) * %d + ox;\n", h * HW,
                   c->HO, c->WO);
        buf_puts(b, "        float v;\n");
        char chan[32];
        snprintf(chan, sizeof chan, h ? "oc + %d + r" : "oc + r", h * HW);
        for (int p = 0; p < P; p++) {
            char idx[32];
            int off = p / c->WB * c->WO + p % c->WB;
            snprintf(idx, sizeof idx, off ? "i + %d" : "i", off);
            buf_printf(b, "        v = a%d[r];\n", p * H + h);
            emit_epilogue(g, n, b, "        ", chan, idx);
            buf_printf(b, "        y[%s] = v;\n", idx);
        }
        buf_puts(b, "    }\n");
    }
    buf_puts(b, "}\n\n");
}

/* The body of kN_e with C chains (emit_edge). */
static void edge_body(const Graph *g, const Conv *c, Buf *b, int C)
{
    const Node *n = &g->nodes[c->idx];
    buf_puts(b, "    float");
    for (int q = 0; q < C; q++)
        buf_printf(b, "%s a%d[%d]", q ? "," : "", q, c->RB);
    buf_puts(b, ";\n");
    put_border_locals(c, b);
    buf_printf(b, "    for (r = 0; r < %d; r++) {\n", c->RB);
    for (int q = 0; q < C; q++)
        buf_printf(b, "        a%d[r] = 0.0f;\n", q);
    buf_puts(b, "    }\n");
    if (n->a.bias)
        buf_printf(b, "    for (r = 0; r < nr; r++)\n        a0[r] = e%d[oc + r];\n", n->a.bias);
    /* the main loop takes C input channels a step; the rest go to a0 */
    for (int part = 0; part < 2; part++) {
        int step = part ? 1 : C;
        if (part && c->CIG % C == 0)
            break;
        if (!part && C == 1)
            buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CIG);
        else if (!part)
            buf_printf(b, "    for (ic = 0; ic + %d <= %d; ic += %d) {\n", C, c->CIG, C);
        else
            buf_printf(b, "    for (ic = %d; ic < %d; ic++) {\n", c->CIG / C * C, c->CIG);
        buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
        for (int q = 0; q < step; q++) {
            buf_printf(b, "            const float *xr%d = x + ((long)(ic + %d) * %d + oy * %d - %d + "
                          "ky * %d) * %d;\n", q, q, c->HI, c->SH, c->PT, c->DH, c->WI);
            buf_printf(b, "            const float *wr%d = w + ((long)(ic + %d) * %d + ky) * %d;\n", q,
                       q, c->KH, c->KW * c->RB);
        }
        buf_puts(b, "            for (kx = kx0; kx < kx1; kx++) {\n");
        for (int q = 0; q < step; q++) {
            buf_printf(b, "                const float xv%d = xr%d[ix0 + kx * %d];\n", q, q, c->DW);
            buf_printf(b, "                const float *wk%d = wr%d + kx * %d;\n", q, q, c->RB);
        }
        /* the loop over the output channels kept a loop: gcc -O3 unrolled it completely
         * and left it scalar, or vectorised the loop over the taps instead (3x3 convs
         * whose every pixel is a border one ran 5-7x slower than at -O2). A hint that
         * other compilers skip. */
        buf_printf(b, "                RC_CLOOP for (r = 0; r < %d; r++) {\n", c->RB);
        for (int q = 0; q < step; q++)
            buf_printf(b, "                    a%d[r] += wk%d[r] * xv%d;\n", q, q, q);
        buf_puts(b, "                }\n            }\n        }\n    }\n");
    }
    buf_puts(b, "    for (r = 0; r < nr; r++) {\n");
    buf_printf(b, "        const long i = ((long)(oc + r) * %d + oy) * %d + ox;\n", c->HO, c->WO);
    buf_puts(b, "        float v = a0[r]");
    for (int q = 1; q < C; q++)
        buf_printf(b, " + a%d[r]", q);
    buf_puts(b, ";\n");
    emit_epilogue(g, n, b, "        ", "oc + r", "i");
    buf_puts(b, "        y[i] = v;\n    }\n");
}

/* kN_e: one border pixel, nr (<= rb) output channels from oc, taps clipped. With ch > 1
 * chains, input channels ic, ic + 1, ... go to ch independent sums per channel (a0, a1,
 * ...) so the additions do not wait for each other, added up at the end; one chain where
 * the blocks run in passes (RC_SIMD 0: the sums are on the stack). */
static void emit_edge(const Graph *g, const Conv *c, Buf *b)
{
    const Node *n = &g->nodes[c->idx];
    int C = c->CH < c->CIG ? c->CH : 1;
    buf_printf(b, "/* n%d: one pixel near the border, nr output channels from oc; taps clipped */\n",
               c->idx);
    buf_printf(b, "static void k%d_e(const float *restrict x_, const float *restrict w_", c->idx);
    put_operand_params(n, b, true);
    put_block_start(n, c, b, true);
    if (c->S && C > 1) {
        buf_puts(b, "#if RC_SIMD\n");
        edge_body(g, c, b, C);
        buf_puts(b, "#else /* one sum per channel: a small frame */\n");
        edge_body(g, c, b, 1);
        buf_puts(b, "#endif\n");
    } else {
        edge_body(g, c, b, C);
    }
    buf_puts(b, "}\n\n");
}

/* One call of the block function(s) for column ox (an expression) at indent ind: the
 * last channel block of a group may have its own (narrower) function. With blk_loop, the
 * call sits in a loop over every channel block. Row-buffered blocks (kN_rR) read xd and
 * are told the batch and the group's block gb. */
static void put_block_call(const ConvCalls *cc, Buf *b, const char *ind, const char *ox, int W,
                           bool blk_loop)
{
    const Conv *c = cc->c;
    const char *bv = cc->rows ? "gb" : "blk";
    char in2[64];
    snprintf(in2, sizeof in2, "%s%s", ind, blk_loop ? "    " : "");
    if (blk_loop)
        buf_printf(b, "%sfor (blk = 0; blk < %d; blk++)\n", ind, c->N * c->G * c->NB);
    /* one function for every channel block (TK_CONV_OC, or a full last block) */
    bool one = cc->oc || c->full || c->LAST == c->RB;
    for (int last = 0; last < 2; last++) {
        int R = last ? c->LAST : c->RB;
        if (last && one)
            break;
        if (!one)
            buf_printf(b, last ? "%selse\n" : "%sif (%s %% %d != %d)\n", in2, bv, c->NB, c->NB - 1);
        buf_printf(b, cc->oc ? "%s%sk%d_bo" : "%s%sk%d_%c%d", in2, one ? "" : "    ", c->idx,
                   cc->rows ? 'r' : 'b', R);
        if (W != c->WB)
            buf_printf(b, "_w%d", W);
        buf_puts(b, "(");
        cc->args(cc->ctx, b, cc->rows);
        buf_printf(b, cc->rows ? ", bt, gb, oy, %s);\n" : ", blk, oy, %s);\n", ox);
    }
}

/* The strips of a row with Tile.clip: the clipped ones, at column `left` (0, where the
 * left border needs one) and `right` (WO - WB, where the right one does and it is not the
 * left one; -1: none), interior strips every wb from s0 while they end by e0 (`loop`: at
 * least one), then, when those leave a rest, one more at column `rest` (-1: none),
 * overlapping its neighbours and inside the interior (pack.c, clip_strips). */
typedef struct {
    int left, right, s0, e0, rest;
    bool loop;
} ClipPlan;

static ClipPlan clip_plan(const Conv *c)
{
    ClipPlan p = { -1, -1, 0, c->WO, -1, false };
    if (c->OXLO > 0)
        p.left = 0, p.s0 = c->WB;
    if (c->OXHI < c->WO) {
        p.e0 = c->WO - c->WB;
        if (p.e0 != p.left)
            p.right = p.e0;
    }
    p.loop = p.e0 - p.s0 >= c->WB;
    if (p.e0 > p.s0 && (p.e0 - p.s0) % c->WB) {
        int r = p.e0 - c->WB > p.s0 ? p.e0 - c->WB : p.s0;
        p.rest = r < c->OXHI - c->WB ? r : c->OXHI - c->WB;
    }
    return p;
}

/* One call of a Tile.clip block at column at, a clipped strip's function (kN_boA) where
 * clipped. */
static void put_clip_call(const ConvCalls *cc, Buf *b, const char *ind, int at, bool clipped)
{
    buf_printf(b, "%sk%d_bo", ind, cc->c->idx);
    if (clipped)
        buf_printf(b, "%d", at);
    buf_puts(b, "(");
    cc->args(cc->ctx, b, false);
    buf_printf(b, ", blk, oy, %d);\n", at);
}

/* The strips of row oy with Tile.clip (clip_plan), left to right where they do not
 * overlap: the clipped one at column 0, the interior ones, the clipped one at the end. */
static void emit_clip_calls(const ConvCalls *cc, Buf *b, const char *ind)
{
    const Conv *c = cc->c;
    ClipPlan p = clip_plan(c);
    if (p.left >= 0)
        put_clip_call(cc, b, ind, p.left, true);
    if (p.loop) {
        buf_printf(b, "%sfor (ox = %d; ox + %d <= %d; ox += %d)\n%s    k%d_bo(", ind, p.s0, c->WB,
                   p.e0, c->WB, ind, c->idx);
        cc->args(cc->ctx, b, false);
        buf_puts(b, ", blk, oy, ox);\n");
    }
    if (p.rest >= 0) {
        buf_printf(b, "%s/* the rest of the interior: a strip overlapping its neighbours */\n", ind);
        put_clip_call(cc, b, ind, p.rest, false);
    }
    if (p.right >= 0)
        put_clip_call(cc, b, ind, p.right, true);
}

/* The interior strips of row oy: every wb columns, then the rest: a block of wr (from the
 * end of the interior, overlapping the strip before when wr is wider than the rest), or
 * one of wb overlapping the strip before. */
static void emit_strip_calls(const ConvCalls *cc, Buf *b, const char *ind, bool blk_loop)
{
    const Conv *c = cc->c;
    char in2[64];
    if (!c->strips)
        return;
    if (c->clip) {
        if (blk_loop)
            unreachable(); /* (not a flattened 1x1: pack.c) */
        emit_clip_calls(cc, b, ind);
        return;
    }
    snprintf(in2, sizeof in2, "%s    ", ind);
    if (c->WW) { /* the wide strips first, then those of wb from where they end */
        buf_printf(b, "%sox = %d;\n#if RC_WIDE\n", ind, c->OXLO);
        buf_printf(b, "%sfor (; ox + %d <= %d; ox += %d) {\n", ind, c->WW, c->OXHI, c->WW);
        put_block_call(cc, b, in2, "ox", c->WW, blk_loop);
        buf_printf(b, "%s}\n#endif\n%sfor (; ox + %d <= %d; ox += %d) {\n", ind, ind, c->WB,
                   c->OXHI, c->WB);
    } else {
        buf_printf(b, "%sfor (ox = %d; ox + %d <= %d; ox += %d) {\n", ind, c->OXLO, c->WB, c->OXHI,
                   c->WB);
    }
    put_block_call(cc, b, in2, "ox", c->WB, blk_loop);
    buf_printf(b, "%s}\n", ind);
    if ((c->OXHI - c->OXLO) % c->WB) {
        char ox[32];
        int W = c->WR ? c->WR : c->WB;
        snprintf(ox, sizeof ox, "%d", c->OXHI - W);
        buf_printf(b, "%s/* %s */\n", ind,
                   c->WR ? "the rest of the interior" : "the last strip overlaps the one before");
        put_block_call(cc, b, ind, ox, W, blk_loop);
    }
}

/* The border pixels of row oy: columns [0, lo) and [hi, WO), taps clipped. */
static void emit_border_calls(const ConvCalls *cc, Buf *b, const char *ind, int lo, int hi,
                              bool blk_loop)
{
    const Conv *c = cc->c;
    for (int s = 0; s < 2; s++) {
        int from = s ? hi : 0, to = s ? c->WO : lo;
        if (from >= to)
            continue;
        buf_printf(b, "%sfor (ox = %d; ox < %d; ox++)\n", ind, from, to);
        if (blk_loop)
            buf_printf(b, "%s    for (blk = 0; blk < %d; blk++)\n", ind, c->N * c->G * c->NB);
        buf_printf(b, "%s%sk%d_e(", ind, blk_loop ? "        " : "    ", c->idx);
        cc->args(cc->ctx, b, false);
        buf_puts(b, ", blk, oy, ox);\n");
    }
}

void put_conv_driver(const ConvCalls *cc, Buf *b)
{
    const Conv *c = cc->c;
    /* border pixels: all of a row when it has no strip, none with Tile.clip */
    int lo = c->clip ? 0 : c->strips ? c->OXLO : c->WO;
    int hi = c->clip || !c->strips ? c->WO : c->OXHI;
    /* (strips at literal columns alone, with Tile.clip: no ox) */
    buf_puts(b, !c->clip || clip_plan(c).loop ? "    int blk, oy, ox;\n" : "    int blk, oy;\n");
    if (c->HO == 1 && c->KH == 1 && c->KW == 1) {
        /* a 1x1 conv as one GEMM: column strips outside, so a strip of the input (all
         * input channels) stays in cache while every channel block reads it */
        buf_puts(b, "    oy = 0;\n");
        emit_strip_calls(cc, b, "    ", true);
        emit_border_calls(cc, b, "    ", lo, hi, true);
    } else {
        buf_printf(b, "    for (blk = 0; blk < %d; blk++) { /* batch, group, channel block */\n",
                   c->N * c->G * c->NB);
        if (c->RY > 1)
            buf_printf(b, "        for (oy = 0; oy < %d; oy += %d) {\n", c->HO, c->RY);
        else
            buf_printf(b, "        for (oy = 0; oy < %d; oy++) {\n", c->HO);
        emit_strip_calls(cc, b, "            ", false);
        emit_border_calls(cc, b, "            ", lo, hi, false);
        buf_puts(b, "        }\n    }\n");
    }
}

/* The float kernels' call arguments: x (xd when row-buffered), w, the operands, y. */
static void put_call_args(const void *ctx, Buf *b, bool rows)
{
    buf_puts(b, rows ? "xd, w" : "x, w");
    put_operand_args(ctx, b);
    buf_puts(b, ", y");
}

/* TK_CONV_OC with tile.rows: the blocks read xd, the input with the columns its rows read
 * (WP of them) zero-padded: every column is interior. */
static void pad_columns(Conv *c)
{
    c->WI = (c->WO - 1) * c->SW + (c->KW - 1) * c->DW + 1;
    c->PL = 0;
    c->OXLO = 0, c->OXHI = c->WO;
    c->strips = c->WO >= c->WB;
    c->WR = 0;
}

/* The copy of x into xd for pad_columns (c: the conv before it): each input row, from
 * column -PL, zeros outside the input. */
static void put_pad_copy(const Conv *c, int WP, Buf *b)
{
    int lo = c->PL < WP ? c->PL : WP, hi = c->WI + c->PL < WP ? c->WI + c->PL : WP;
    buf_printf(b, "    int t, i; /* xd: %ld floats, the node's scratch */\n",
               (long)c->N * c->CI * c->HI * WP);
    buf_printf(b, "    for (t = 0; t < %ld; t++) { /* (batch, channel, row) */\n",
               (long)c->N * c->CI * c->HI);
    buf_printf(b, "        const float *r = x + (long)t * %d;\n", c->WI);
    buf_printf(b, "        float *d = xd + (long)t * %d;\n", WP);
    if (lo > 0)
        buf_printf(b, "        for (i = 0; i < %d; i++)\n            d[i] = 0.0f;\n", lo);
    if (hi > lo)
        buf_printf(b, "        for (i = %d; i < %d; i++)\n            d[i] = r[i - %d];\n", lo, hi,
                   c->PL);
    if (hi < WP)
        buf_printf(b, "        for (i = %d; i < %d; i++)\n            d[i] = 0.0f;\n", hi, WP);
    buf_puts(b, "    }\n");
}

/* put_call_args of the blocks reading xd */
static void put_xd_args(const void *ctx, Buf *b, bool rows)
{
    (void)rows;
    put_call_args(ctx, b, true);
}

static void emit_direct(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Conv c, c0;
    conv_init(g, idx, true, &c);
    bool padded = n->a.tile.kind == TK_CONV_OC && n->a.tile.rows;
    c0 = c;
    if (padded)
        pad_columns(&c);
    if (padded && n->a.tile.rows > 1)
        c.RY = c.HO; /* blocks of every row (pack.c) */
    bool border = !c.clip && (!c.strips || c.OXLO > 0 || c.OXHI < c.WO);
    bool oc = n->a.tile.kind == TK_CONV_OC;
    bool cm = g->target == TARGET_CORTEX_M && !oc;
    if (cm)
        put_fma_macro(b);
    /* RC_CLOOP: the blocks' loops on x86 (not the avx512 TK_CONV_OC blocks), the border
     * pixels' loop over their channels */
    if (!cm && (border || (c.strips && x86_target(g) && (!oc || bcast_loops(g)))))
        put_cloop_macro(b);
    if (c.strips && !oc && !x86_target(g))
        put_col_loop_macro(g, b);
    if (c.strips && oc && c.clip) {
        ClipPlan p = clip_plan(&c);
        if (p.loop || p.rest >= 0)
            emit_block_oc(g, &c, b, -1);
        if (p.left >= 0)
            emit_block_oc(g, &c, b, p.left);
        if (p.right >= 0)
            emit_block_oc(g, &c, b, p.right);
    } else if (c.strips && oc) {
        emit_block_oc(g, &c, b, -1);
    } else if (c.strips) {
        for (int w = 0; w < 2; w++) {
            int W = w ? c.WR : c.WB;
            if (!W)
                continue;
            BlockEmit *emit = cm ? emit_block_cm : emit_block;
            emit(g, &c, NULL, c.RB, W, b);
            if (c.LAST != c.RB && !c.full)
                emit(g, &c, NULL, c.LAST, W, b);
        }
        c.WW = wide_cols(g, &c, c.OXHI - c.OXLO);
        if (c.WW)
            emit_wide_block(g, &c, NULL, b, emit_block);
    }
    if (border && n->a.tile.streams)
        unreachable(); /* (the border functions read weights [ic][tap][rb]) */
    if (border)
        (cm ? emit_edge_cm : emit_edge)(g, &c, b);
    put_header_comment(g, idx, b, "conv2d");
    char lay[64]; /* the packed layout after [groups][blocks] (Tile.streams: a stream per tap
                   * and per array of channels) */
    int vs = (int)c.IS;
    if (n->a.tile.streams && vs < c.RB)
        snprintf(lay, sizeof lay, "[%d][%d][%d][%d][%d]", c.RB / vs, c.KH, c.KW, c.CIG, vs);
    else if (n->a.tile.streams)
        snprintf(lay, sizeof lay, "[%d][%d][%d][%d]", c.KH, c.KW, c.CIG, c.RB);
    else
        snprintf(lay, sizeof lay, "[%d][%d][%d][%d]", c.CIG, c.KH, c.KW, c.RB);
    buf_printf(b, "/* tiling: %d output channels x %d columns in registers (vectorised over the "
                  "%s), weights packed [%d][%d]%s; interior columns [%d, %d)%s */\n",
               c.RB, c.WB, oc ? "channels" : "columns", c.G, c.NB, lay, c.OXLO, c.OXHI,
               padded ? " of xd, the input with its columns zero-padded"
               : c.clip ? ", the border ones in clipped strips" : "");
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    if (padded && (int64_t)c.N * c.CI * c.HI * c.WI * (int64_t)sizeof(float) > n->a.tile.scratch)
        unreachable(); /* pack.c sized the scratch */
    buf_puts(b, padded ? ", float *restrict y, float *restrict xd)\n{\n" : ", float *restrict y)\n{\n");
    if (padded)
        put_pad_copy(&c0, c.WI, b);
    ConvCalls cc = { &c, oc, false, padded ? put_xd_args : put_call_args, n };
    put_conv_driver(&cc, b);
    buf_puts(b, "}\n\n");
}

/* ---- depthwise ---- */

/* For border column ox (at indent ind): ix, its first input column, and the taps
 * [kx0, kx1) of a kw-tap window (stride sw, dilation dw, left padding pl) inside the
 * wi-column input. */
void put_border_taps(Buf *b, const char *ind, int sw, int pl, int dw, int wi, int kw)
{
    buf_printf(b, "%sconst int ix = ox * %d - %d;\n", ind, sw, pl);
    buf_printf(b, "%sconst int kx0 = ix >= 0 ? 0 : (-ix + %d) / %d;\n", ind, dw - 1, dw);
    buf_printf(b, "%sint kx1 = %d - ix < 0 ? 0 : (%d - ix) / %d + 1;\n", ind, wi - 1, wi - 1, dw);
    buf_printf(b, "%sif (kx1 > %d)\n%s    kx1 = %d;\n", ind, kw, ind, kw);
}

/* Output rows from oy on that read the same tap rows [*ky0, *ky1) of a kh-tap window
 * (stride sh, dilation dh, top padding pt, input height hi): returns the end of the run. */
int conv_row_group(int oy, int ho, int hi, int kh, int sh, int dh, int pt, int *ky0, int *ky1)
{
    for (int r = oy;; r++) {
        int k0 = 0, k1 = 0;
        if (r < ho) {
            int iy0 = r * sh - pt;
            k0 = iy0 >= 0 ? 0 : (-iy0 + dh - 1) / dh;
            k1 = hi - 1 - iy0 < 0 ? 0 : (hi - 1 - iy0) / dh + 1;
            if (k1 > kh)
                k1 = kh;
            if (k0 > k1)
                k0 = k1;
        }
        if (r == oy)
            *ky0 = k0, *ky1 = k1;
        else if (r == ho || k0 != *ky0 || k1 != *ky1)
            return r;
    }
}

/* The loops over batches and channels of a depthwise conv and, per channel, its input xc,
 * weights wc, output yc, full-size operands fK and bias. */
static void put_channel_start(const Graph *g, const Node *n, const Conv *c, Buf *b)
{
    long plane = (long)c->HO * c->WO;
    /* the steps applied in these loops (the rest: after them, put_depthwise_tail) */
    int inner = plane < 64 ? depthwise_cut(g, n) : n->a.ep.n;
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c->N);
    buf_printf(b, "        for (ch = 0; ch < %d; ch++) {\n", c->CO);
    buf_printf(b, "            const float *xc = x + ((long)bt * %d + ch) * %ld;\n", c->CO,
               (long)c->HI * c->WI);
    buf_printf(b, "            const float *wc = w + (long)ch * %d;\n", c->KH * c->KW);
    buf_printf(b, "            float *yc = y + ((long)bt * %d + ch) * %ld;\n", c->CO, plane);
    for (int k = 2; k < (int)arrlen(n->in); k++)
        if (epilogue_reads_full(n, k, 0, inner))
            buf_printf(b, "            const float *f%d = e%d + ((long)bt * %d + ch) * %ld;\n", k, k,
                       c->CO, plane);
    if (n->a.bias)
        buf_printf(b, "            const float bias = e%d[ch];\n", n->a.bias);
    else
        buf_puts(b, "            const float bias = 0.0f;\n");
}

/* Whether a tap reads column phase p of the depthwise plane (layout.c). */
static bool plane_phase_read(const Conv *c, int p)
{
    for (int kx = 0; kx < c->KW; kx++)
        if (kx * c->DW % c->SW == p)
            return true;
    return false;
}

/* The pointer to row off of the plane's column phase p: r{off}, or r{off}p{p}. */
static void plane_row_name(char *s, size_t n, int off, int p)
{
    if (p)
        snprintf(s, n, "r%dp%d", off, p);
    else
        snprintf(s, n, "r%d", off);
}

/* The output rows q < R of a block (oy + q) that read row off of the padded plane:
 * bit q of the result, the tap row ky in kys[q]. */
static unsigned plane_row_users(const Conv *c, int R, int off, int *kys)
{
    unsigned m = 0;
    for (int q = 0; q < R; q++) {
        int d = off - q * c->SH;
        if (d >= 0 && d % c->DH == 0 && d / c->DH < c->KH)
            m |= 1u << q, kys[q] = d / c->DH;
    }
    return m;
}

/* The macros of the depthwise plane kernel's rows (put_plane_rows). RC_PLOOP before its
 * loops over the strips and their columns keeps them loops under clang: clang 14 unrolled
 * them and left every multiply-add of dwconv3x3 128 @28 scalar (AArch64: 144 fmadd, no
 * vector fmla; x86-64-avx512, -O3 -march=native on Emerald Rapids: 130 us against gcc's 22;
 * with the pragma on the inner loop alone it vectorised one strip of two). RC_PKEEP(v) is
 * a plane value that several output rows use: v + 0.0f under gcc, which otherwise turns
 * every use back into a memory operand of its multiply-add (a register equivalent to a
 * load), one load per tap, most of them split across cache lines, and the loads bound the
 * loop; the + 0.0f is exact but for the sign of a zero tap (-0.0f reads +0.0f), which
 * changes at most the sign of an output that is zero. dwconv3x3 128 @28 on
 * x86-64-avx512 (gcc 12 -O3, Emerald Rapids): 2 rows a block, 31.3 us; 7 rows, loads in
 * memory operands 31.4; 7 rows with + 0.0f 22.2 (2 rows with it: 24.4). Under clang the
 * value as it is: 22.0 us, with + 0.0f 33.4. */
void put_plane_macros(Buf *b)
{
    buf_puts(b, "#ifndef RC_PLOOP /* before a depthwise plane's loops: kept loops (clang) */\n"
                "#if defined(__clang__)\n"
                "#define RC_PLOOP _Pragma(\"clang loop unroll(disable)\")\n"
                "#else\n"
                "#define RC_PLOOP\n"
                "#endif\n"
                "#endif\n"
                "#ifndef RC_PKEEP /* a plane value several output rows read: kept in a register */\n"
                "#if defined(__GNUC__) && !defined(__clang__)\n"
                "#define RC_PKEEP(v) ((v) + 0.0f)\n"
                "#else\n"
                "#define RC_PKEEP(v) (v)\n"
                "#endif\n"
                "#endif\n\n");
}

/* Rows oy + q (q < R) of a depthwise conv over the padded plane xd: strips of V columns
 * (the last overlapping the one before), each output summing its taps from the bias (in
 * the order ky, kx). Each plane row's values are read once for the block, in ascending
 * rows; on x86, a value that several output rows use through RC_PKEEP (put_plane_macros). */
static void put_plane_rows(const Graph *g, const Conv *c, Buf *b, int R, int HP, int WP,
                           const char *ind)
{
    const Node *n = &g->nodes[c->idx];
    int V = n->a.tile.wb;
    int last = (R - 1) * c->SH + (c->KH - 1) * c->DH; /* the last plane row read */
    int kys[32];
    if (R > 32)
        unreachable(); /* pack.c: at most plane_rows_max */
    for (int off = 0; off <= last; off++)
        if (plane_row_users(c, R, off, kys))
            for (int p = 0; p < c->SW; p++) /* tap kx reads column phase kx * DW % SW */
                if (plane_phase_read(c, p)) {
                    char name[32];
                    plane_row_name(name, sizeof name, off, p);
                    buf_printf(b, "%sconst float *%s = xd + ", ind, name);
                    if (p)
                        buf_printf(b, "%ld + ", (long)p * HP * WP);
                    buf_printf(b, "(long)(oy * %d + %d) * %d;\n", c->SH, off, WP);
                }
    /* both loops RC_PLOOP, the inner one counting from 0: for AArch64 with the pragmas
     * alone, clang 14 vectorised one strip of four; now each is a vector loop */
    bool wide = plane_wide(g, c->idx);
    for (int w = wide; w >= 0; w--) {
        int S = w ? 2 * V : V;
        if (wide)
            buf_puts(b, w ? "#if RC_WIDE\n" : "#else\n");
        buf_printf(b, "%sRC_PLOOP for (o0 = 0; o0 < %d; o0 += %d) {\n", ind, c->WO, S);
        buf_printf(b, "%s    const int s = o0 + %d <= %d ? o0 : %d;\n", ind, S, c->WO, c->WO - S);
        buf_printf(b, "%s    RC_PLOOP for (j = 0; j < %d; j++) {\n", ind, S);
    }
    if (wide)
        buf_puts(b, "#endif\n");
    buf_printf(b, "%s        const int ox = s + j;\n", ind);
    for (int q = 0; q < R; q++)
        buf_printf(b, "%s        float v%d = bias;\n", ind, q);
    for (int off = 0; off <= last; off++) {
        unsigned m = plane_row_users(c, R, off, kys);
        if (!m)
            continue;
        bool shared = (m & (m - 1)) != 0 && x86_target(g);
        for (int kx = 0; kx < c->KW; kx++) {
            char name[32];
            plane_row_name(name, sizeof name, off, kx * c->DW % c->SW);
            buf_printf(b, "%s        const float a%d_%d = %s%s[ox + %d]%s;\n", ind, off, kx,
                       shared ? "RC_PKEEP(" : "", name, kx * c->DW / c->SW, shared ? ")" : "");
            for (int q = 0; q < R; q++)
                if (m >> q & 1)
                    buf_printf(b, "%s        v%d += wc[%d] * a%d_%d;\n", ind, q, kys[q] * c->KW + kx,
                               off, kx);
        }
    }
    char in3[64];
    snprintf(in3, sizeof in3, "%s            ", ind);
    for (int q = 0; q < R; q++) {
        char yi[48];
        if (q)
            snprintf(yi, sizeof yi, "(long)(oy + %d) * %d + ox", q, c->WO);
        else
            snprintf(yi, sizeof yi, "(long)oy * %d + ox", c->WO);
        buf_printf(b, "%s        {\n%s            float v = v%d;\n", ind, ind, q);
        put_epilogue_steps(n, b, in3, "ch", yi, 0, depthwise_cut(g, n));
        buf_printf(b, "%s            yc[%s] = v;\n%s        }\n", ind, yi, ind);
    }
    buf_printf(b, "%s    }\n%s}\n", ind, ind);
}

/* Strips of 16 columns where RC_WIDE is 1, of 8 elsewhere: gcc 12 -O3 -march=native,
 * Emerald Rapids, depthwise 3x3 128 at 28x28 41.5 -> 32.7 us (x86-64-avx512: 22) */
bool plane_wide(const Graph *g, int idx)
{
    const Node *n = &g->nodes[idx];
    const Tile *t = &n->a.tile;
    return g->target == TARGET_GENERIC && n->op == IR_CONV2D && t->kind == TK_DEPTHWISE &&
           t->rows && !t->lanes && g->values[n->out].shape.dim[3] >= 2 * t->wb;
}

/* TK_DEPTHWISE with tile.rows: per channel, the input is copied into the zero-padded plane
 * xd (the node's scratch; its padding is zeroed once a call), split by column phase when
 * the stride along the rows is more than 1, then every output column is interior;
 * tile.rows output rows at a time, sharing loads. */
static void emit_depthwise_plane(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Conv c;
    conv_init(g, idx, false, &c);
    int HP, WP;
    int64_t floats = depthwise_plane_f32(g->target, &n->a.conv, c.HO, c.WO, &HP, &WP);
    if (floats * (int64_t)sizeof(float) > n->a.tile.scratch)
        unreachable(); /* pack.c chose and sized it */
    long phase = (long)HP * WP; /* floats of a column phase (layout.c) */
    bool align = floats > phase * c.SW; /* moved to a 64-byte boundary (layout.c) */
    int CR = c.HI < HP - c.PT ? c.HI : HP - c.PT; /* the input rows the plane holds */
    put_plane_macros(b);
    put_header_comment(g, idx, b, "depthwise conv2d");
    buf_printf(b, "/* per channel: the input copied into xd, a zero-padded plane of %d x %d", HP, WP);
    if (c.SW > 1)
        buf_printf(b, " per column phase (%d: padded column c at phase c %% %d, column c / %d)", c.SW,
                   c.SW, c.SW);
    buf_printf(b, "; %d output row%s at a time, in strips of %d columns, taps unrolled */\n",
               n->a.tile.rows, n->a.tile.rows > 1 ? "s" : "", n->a.tile.wb);
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    buf_printf(b, ", float *restrict y, float *restrict xd)\n{\n    int bt, ch, oy, o0, j, i;\n");
    if (align)
        buf_puts(b, "    xd += (16 - (uintptr_t)xd / sizeof *xd % 16) % 16; /* to 64 bytes */\n");
    buf_printf(b, "    for (i = 0; i < %ld; i++)\n        xd[i] = 0.0f;\n", phase * c.SW);
    put_channel_start(g, n, &c, b);
    for (int p = 0; p < c.SW && CR > 0; p++) {
        /* phase p, column j: padded column j * SW + p, input column j * SW + p - PL; the
         * columns [j0, j1) hold the input */
        int lo = c.PL - p, j0 = lo <= 0 ? 0 : (lo + c.SW - 1) / c.SW;
        int hi = c.WI + c.PL - p, j1 = hi <= 0 ? 0 : (hi + c.SW - 1) / c.SW;
        if (j1 > WP)
            j1 = WP;
        if (!plane_phase_read(&c, p) || j0 >= j1)
            continue;
        if (c.SW > 1)
            buf_printf(b, "            for (oy = 0; oy < %d; oy++) /* the input rows, columns of phase %d */\n",
                       CR, p);
        else
            buf_printf(b, "            for (oy = 0; oy < %d; oy++) /* the input rows and columns read */\n", CR);
        buf_printf(b, "                for (i = 0; i < %d; i++)\n                    xd[", j1 - j0);
        if (p)
            buf_printf(b, "%ld + ", (long)p * phase);
        buf_printf(b, "(long)(oy + %d) * %d + %d + i] = xc[(long)oy * %d + ", c.PT, WP, j0, c.WI);
        int first = j0 * c.SW + p - c.PL; /* the input column of phase column j0, >= 0 */
        if (first)
            buf_printf(b, "%d + ", first);
        buf_printf(b, c.SW > 1 ? "i * %d];\n" : "i];\n", c.SW);
    }
    int R = n->a.tile.rows; /* output rows a block (pack.c) */
    if (c.HO >= R) {
        buf_printf(b, "            for (oy = 0; oy + %d <= %d; oy += %d) {\n", R, c.HO, R);
        put_plane_rows(g, &c, b, R, HP, WP, "                ");
        buf_puts(b, "            }\n");
    }
    if (c.HO % R) {
        buf_printf(b, "            oy = %d;\n            {\n", c.HO - c.HO % R);
        put_plane_rows(g, &c, b, c.HO % R, HP, WP, "                ");
        buf_puts(b, "            }\n");
    }
    put_depthwise_tail(g, n, &c, b, false);
    buf_puts(b, "        }\n    }\n");
    put_depthwise_tail(g, n, &c, b, true);
    buf_puts(b, "}\n\n");
}

/* TK_DEPTHWISE with tile.lanes (x86, outputs of a few pixels a channel): blocks of
 * tile.lanes channels as the vector lanes, the weights packed [co / lanes][taps][lanes]
 * (pack.c). Per block, the inputs copied into [hi * wi][lanes] (the scratch, xd); then per
 * output pixel
 * (unrolled) one loop over the block's channels summing, from the bias, the taps inside
 * the input (in the order ky, kx; the padding's taps, which the plane kernel multiplies by
 * zero, are left out: of a 5x5 on 2 x 2 outputs, 16 of every 25), into [pixels][lanes];
 * then per channel the epilogue steps up to depthwise_cut and the store, back into NCHW
 * (the rest of the epilogue after every channel, put_depthwise_tail). The plane kernel
 * spends about as long on a channel of 2 x 2 outputs as of 8 x 8. */
static void emit_depthwise_lanes(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Conv c;
    conv_init(g, idx, false, &c);
    int cb = n->a.tile.lanes, taps = c.KH * c.KW;
    long in = (long)c.HI * c.WI, pix = (long)c.HO * c.WO;
    if ((in + pix) * cb * (long)sizeof(float) > n->a.tile.scratch || c.CO % cb || pix >= 64 ||
        !n->a.tile.packed)
        unreachable(); /* pack.c chose the block and sized the scratch */
    int cut = depthwise_cut(g, n);
    put_header_comment(g, idx, b, "depthwise conv2d");
    buf_printf(b, "/* per block of %d channels (the vector lanes): their inputs [%ld][%d] (xd), "
                  "their weights packed [%d][%d], the taps inside the input of each output pixel "
                  "in one loop over the block */\n", cb, in, cb, taps, cb);
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    buf_puts(b, ", float *restrict y, float *restrict xd)\n{\n");
    buf_printf(b, "    float *restrict ya = xd + %ld;\n", in * cb);
    buf_puts(b, "    int bt, c0, c, j;\n");
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        for (c0 = 0; c0 < %d; c0 += %d) {\n", c.CO, cb);
    buf_printf(b, "            for (c = 0; c < %d; c++) {\n", cb);
    buf_printf(b, "                const float *xc = x + ((long)bt * %d + c0 + c) * %ld;\n", c.CO, in);
    buf_printf(b, "                for (j = 0; j < %ld; j++)\n", in);
    buf_printf(b, "                    xd[(long)j * %d + c] = xc[j];\n            }\n", cb);
    buf_printf(b, "            const float *wf = w + (long)c0 * %d;\n", taps);
    for (int oy = 0; oy < c.HO; oy++)
        for (int ox = 0; ox < c.WO; ox++) {
            buf_printf(b, "            for (c = 0; c < %d; c++) { /* output (%d, %d) */\n", cb, oy, ox);
            if (n->a.bias)
                buf_printf(b, "                float v = e%d[c0 + c];\n", n->a.bias);
            else
                buf_puts(b, "                float v = 0.0f;\n");
            put_lane_taps(b, &c, oy, ox, cb, "                ", "v", "xd");
            buf_printf(b, "                ya[%ld + c] = v;\n            }\n", ((long)oy * c.WO + ox) * cb);
        }
    buf_printf(b, "            for (c = 0; c < %d; c++) {\n", cb);
    buf_puts(b, "                const int ch = c0 + c;\n");
    buf_printf(b, "                float *yc = y + ((long)bt * %d + ch) * %ld;\n", c.CO, pix);
    for (int k = 2; k < (int)arrlen(n->in); k++)
        if (epilogue_reads_full(n, k, 0, cut))
            buf_printf(b, "                const float *f%d = e%d + ((long)bt * %d + ch) * %ld;\n", k, k,
                       c.CO, pix);
    buf_printf(b, "                for (j = 0; j < %ld; j++) {\n", pix);
    buf_printf(b, "                    float v = ya[(long)j * %d + c];\n", cb);
    put_epilogue_steps(n, b, "                    ", "ch", "j", 0, cut);
    buf_puts(b, "                    yc[j] = v;\n                }\n            }\n        }\n    }\n");
    if (cut < n->a.ep.n) {
        buf_puts(b, "    {\n        long i;\n");
        put_depthwise_tail(g, n, &c, b, true);
        buf_puts(b, "    }\n");
    }
    buf_puts(b, "}\n\n");
}

/* The float depthwise border pixel's body: clipped taps, the epilogue, the store. */
typedef struct {
    const Graph *g;
    const Node *n;
    const Conv *c;
    int ky0, ky1;
    const char *yi;
} DwBorder;

static void dw_border_body(const void *ctx, Buf *b)
{
    const DwBorder *d = ctx;
    buf_puts(b, "                    float v = bias;\n");
    for (int ky = d->ky0; ky < d->ky1; ky++)
        buf_printf(b, "                    for (kx = kx0; kx < kx1; kx++)\n"
                      "                        v += wc[%d + kx] * r%d[ix + kx * %d];\n",
                   ky * d->c->KW, ky, d->c->DW);
    put_epilogue_steps(d->n, b, "                    ", "ch", d->yi, 0, depthwise_cut(d->g, d->n));
    buf_printf(b, "                    yc[%s] = v;\n                }\n", d->yi);
}

static void emit_depthwise(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Conv c;
    conv_init(g, idx, true, &c);
    char yi[48];
    snprintf(yi, sizeof yi, "(long)oy * %d + ox", c.WO);
    put_header_comment(g, idx, b, "depthwise conv2d");
    buf_printf(b, "/* per channel and output row: one loop over the interior columns [%d, %d) with "
                  "the taps unrolled */\n", c.OXLO, c.OXHI);
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    buf_printf(b, ", float *restrict y)\n{\n    int bt, ch, oy, ox%s%s%s;\n",
               c.OXLO > 0 || c.OXHI < c.WO ? ", kx" : "",
               n->a.tile.chains && c.OXHI - c.OXLO > n->a.tile.wb ? ", o0" : "",
               depthwise_cut(g, n) < n->a.ep.n ? ", i" : "");
    put_channel_start(g, n, &c, b);
    /* rows grouped by their tap range [ky0, ky1) */
    int oy = 0;
    while (oy < c.HO) {
        int ky0, ky1, end = conv_row_group(oy, c.HO, c.HI, c.KH, c.SH, c.DH, c.PT, &ky0, &ky1);
        buf_printf(b, "            for (oy = %d; oy < %d; oy++) { /* taps ky in [%d, %d) */\n", oy, end,
                   ky0, ky1);
        for (int ky = ky0; ky < ky1; ky++)
            buf_printf(b, "                const float *r%d = xc + (long)(oy * %d + %d) * %d;\n", ky,
                       c.SH, ky * c.DH - c.PT, c.WI);
        int V = n->a.tile.wb;
        if (c.OXHI > c.OXLO && n->a.tile.chains && c.OXHI - c.OXLO > V) {
            /* strips of exactly V columns (one vector), the last one overlapping the one
             * before: no scalar remainder */
            buf_printf(b, "                for (o0 = %d; o0 < %d; o0 += %d) {\n", c.OXLO, c.OXHI, V);
            buf_printf(b, "                    const int s = o0 + %d <= %d ? o0 : %d;\n", V, c.OXHI,
                       c.OXHI - V);
            buf_printf(b, "                    for (ox = s; ox < s + %d; ox++) {\n", V);
            buf_printf(b, "                        const int ix = ox * %d - %d;\n", c.SW, c.PL);
            buf_puts(b, "                        float v = bias;\n");
            for (int ky = ky0; ky < ky1; ky++)
                for (int kx = 0; kx < c.KW; kx++)
                    buf_printf(b, "                        v += wc[%d] * r%d[ix + %d];\n",
                               ky * c.KW + kx, ky, kx * c.DW);
            put_epilogue_steps(n, b, "                        ", "ch", yi, 0, depthwise_cut(g, n));
            buf_printf(b, "                        yc[%s] = v;\n                    }\n                }\n",
                       yi);
        } else if (c.OXHI > c.OXLO) {
            buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", c.OXLO, c.OXHI);
            buf_printf(b, "                    const int ix = ox * %d - %d;\n", c.SW, c.PL);
            buf_puts(b, "                    float v = bias;\n");
            for (int ky = ky0; ky < ky1; ky++)
                for (int kx = 0; kx < c.KW; kx++)
                    buf_printf(b, "                    v += wc[%d] * r%d[ix + %d];\n", ky * c.KW + kx,
                               ky, kx * c.DW);
            put_epilogue_steps(n, b, "                    ", "ch", yi, 0, depthwise_cut(g, n));
            buf_printf(b, "                    yc[%s] = v;\n                }\n", yi);
        }
        /* border columns: taps clipped */
        DwBorder db = { g, n, &c, ky0, ky1, yi };
        put_border_spans(&c, b, dw_border_body, &db);
        buf_puts(b, "            }\n");
        oy = end;
    }
    put_depthwise_tail(g, n, &c, b, false);
    buf_puts(b, "        }\n    }\n");
    put_depthwise_tail(g, n, &c, b, true);
    buf_puts(b, "}\n\n");
}

/* ---- depthwise border columns (float and integer) ---- */

void put_border_spans(const Conv *c, Buf *b, void (*body)(const void *ctx, Buf *b), const void *ctx)
{
    int spans[2][2] = { { 0, c->OXLO }, { c->OXHI, c->WO } };
    if (c->OXHI <= c->OXLO)
        spans[0][1] = c->WO, spans[1][0] = c->WO;
    for (int s = 0; s < 2; s++) {
        if (spans[s][0] >= spans[s][1])
            continue;
        buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", spans[s][0], spans[s][1]);
        put_border_taps(b, "                    ", c->SW, c->PL, c->DW, c->WI, c->KW);
        body(ctx, b);
    }
}

/* ---- row-buffered (tile.rows) ----
 * For output row oy, xd holds, per input channel ic and tap row ky, input row
 * oy*sh - pt + ky*dh padded with zeros to the WP columns the row's outputs read (zeros
 * where the row is outside the input), split into SW phases of WH columns: padded column
 * c at xd[(ic*kh + ky)*SW*WH + (c % SW)*WH + c / SW]. Output column ox, tap kx reads padded
 * column ox*SW + kx*DW: phase (kx*DW) % SW, index ox + (kx*DW) / SW, so a strip of columns
 * reads contiguous floats for every stride. Zeros stand for the padding: the sum adds
 * them, which leaves it unchanged. */
typedef struct {
    int WP, WH, XD;         /* padded row width, phase width, floats in xd */
} Rows;

static Rows rows_init(const Conv *c)
{
    Rows r;
    r.WP = (c->WO - 1) * c->SW + (c->KW - 1) * c->DW + 1;
    r.WH = (r.WP + c->SW - 1) / c->SW;
    r.XD = c->CIG * c->KH * c->SW * r.WH;
    return r;
}

static void rows_body(const Graph *g, const Conv *c, const void *ctx, Buf *b, int R, int W,
                      const char *so)
{
    const Node *n = &g->nodes[c->idx];
    const Rows *rw = ctx;
    put_acc_init(n, c, b, R, W, n->a.tile.vw, "t", so);
    buf_printf(b, "    for (t = 0; t < %d; t++) { /* (ic, ky) */\n", c->CIG * c->KH);
    buf_printf(b, "        const float *xr = xd + (long)t * %d + ox;\n", c->SW * rw->WH);
    buf_printf(b, "        const float *wr = w + (long)t * %d;\n", c->KW * c->RB);
    buf_printf(b, "        for (kx = 0; kx < %d; kx++) {\n", c->KW);
    if (c->SW == 1)
        buf_printf(b, "            const float *xk = xr + kx * %d;\n", c->DW);
    else
        buf_printf(b, "            const float *xk = xr + kx * %d %% %d * %d + kx * %d / %d;\n", c->DW,
                   c->SW, rw->WH, c->DW, c->SW);
    put_tap_fmas(g, c, b, "            ", R, W, 1, so);
    buf_puts(b, "        }\n    }\n");
    put_acc_store(g, c, b, R, W, n->a.tile.vw, so);
}

/* kN_rR (kN_rR_wW): R output channels from oc x W columns from ox of row oy, from xd */
static void emit_rows_block(const Graph *g, const Conv *c, const void *rw, int R, int W, Buf *b)
{
    const Node *n = &g->nodes[c->idx];
    long plane = (long)c->HO * c->WO;
    buf_printf(b, "/* n%d: %d output channels from oc x %d columns from ox of row oy, input rows "
                  "from xd */\n", c->idx, R, W);
    buf_printf(b, "static void k%d_r%d", c->idx, R);
    if (W != c->WB)
        buf_printf(b, "_w%d", W);
    buf_puts(b, "(const float *restrict xd, const float *restrict w_");
    put_operand_params(n, b, true);
    buf_puts(b, ", float *restrict y_, int bt, int gb, int oy, int ox)\n{\n");
    buf_printf(b, "    const int grp = gb / %d, oc = grp * %d + gb %% %d * %d;\n", c->NB, c->COG, c->NB,
               c->RB);
    if (c->full)
        buf_printf(b, "    const int nr = gb %% %d == %d ? %d : %d;\n", c->NB, c->NB - 1, c->LAST, c->RB);
    buf_printf(b, "    const float *w = w_ + (long)gb * %ld;\n", (long)c->CIG * c->KH * c->KW * c->RB);
    buf_printf(b, "    float *y = y_ + (long)bt * %ld;\n", (long)c->CO * plane);
    for (int k = 2; k < (int)arrlen(n->in); k++)
        if (op_prefix(n, k) == 'f')
            buf_printf(b, "    const float *f%d = f%d_ + (long)bt * %ld;\n", k, k, (long)c->CO * plane);
    put_passes(g, c, rw, b, R, W, rows_body);
}

static void emit_rows(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Conv c;
    conv_init(g, idx, true, &c);
    Rows rw = rows_init(&c);
    put_col_loop_macro(g, b);
    /* every column is interior: strips of wb over the row, then the rest */
    int WB = c.WB <= c.WO ? c.WB : c.WO, rest = c.WO % WB;
    int WR = rest ? (c.WR && c.WR >= rest && c.WR < WB ? c.WR : WB) : 0;
    c.WB = WB;
    for (int w = 0; w < 2; w++) {
        int W = w ? WR : WB;
        if (!W || (w && W == WB))
            continue;
        emit_rows_block(g, &c, &rw, c.RB, W, b);
        if (c.LAST != c.RB && !c.full)
            emit_rows_block(g, &c, &rw, c.LAST, W, b);
    }
    c.WW = wide_cols(g, &c, c.WO);
    if (c.WW)
        emit_wide_block(g, &c, &rw, b, emit_rows_block);
    put_header_comment(g, idx, b, "conv2d");
    buf_printf(b, "/* tiling: %d output channels x %d columns in registers; per output row, the "
                  "input rows it reads padded and split into %d column phase(s) of %d in xd (%d "
                  "floats); weights packed [%d][%d][%d][%d][%d][%d] */\n",
               c.RB, WB, c.SW, rw.WH, rw.XD, c.G, c.NB, c.CIG, c.KH, c.KW, c.RB);
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    if ((int64_t)rw.XD * (int64_t)sizeof(float) > n->a.tile.scratch)
        unreachable(); /* fuse.c sized the scratch */
    buf_printf(b, ", float *restrict y, float *restrict xd)\n{\n"
                  "    int bt, grp, gb, oy, ox, ic, ky, i; /* xd: %d floats, the node's scratch */\n",
               rw.XD);
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        for (grp = 0; grp < %d; grp++) {\n", c.G);
    buf_printf(b, "            for (oy = 0; oy < %d; oy++) {\n", c.HO);
    buf_printf(b, "                for (ic = 0; ic < %d; ic++) {\n", c.CIG);
    buf_printf(b, "                    for (ky = 0; ky < %d; ky++) {\n", c.KH);
    buf_printf(b, "                        float *d = xd + (ic * %d + ky) * %d;\n", c.KH, c.SW * rw.WH);
    buf_printf(b, "                        const int iy = oy * %d - %d + ky * %d;\n", c.SH, c.PT, c.DH);
    buf_puts(b, "                        const float *r;\n");
    buf_printf(b, "                        if (iy < 0 || iy >= %d) {\n", c.HI);
    buf_printf(b, "                            for (i = 0; i < %d; i++)\n", c.SW * rw.WH);
    buf_puts(b, "                                d[i] = 0.0f;\n                            continue;\n"
                "                        }\n");
    buf_printf(b, "                        r = x + (((long)bt * %d + grp * %d + ic) * %d + iy) * %d;\n",
               c.CI, c.CIG, c.HI, c.WI);
    /* per phase p: padded columns p, p + SW, ...: input column c - PL */
    for (int p = 0; p < c.SW; p++) {
        /* i in [lo, hi): input column i*SW + p - PL inside the input; zeros around */
        int lo = c.PL - p <= 0 ? 0 : (c.PL - p + c.SW - 1) / c.SW;
        int hi = c.WI - 1 + c.PL - p < 0 ? 0 : (c.WI - 1 + c.PL - p) / c.SW + 1;
        hi = hi > rw.WH ? rw.WH : hi;
        lo = lo > hi ? hi : lo;
        if (lo > 0)
            buf_printf(b, "                        for (i = 0; i < %d; i++)\n"
                          "                            d[%d + i] = 0.0f;\n", lo, p * rw.WH);
        if (hi > lo)
            buf_printf(b, "                        for (i = %d; i < %d; i++)\n"
                          "                            d[%d + i] = r[i * %d + %d];\n", lo, hi, p * rw.WH,
                       c.SW, p - c.PL);
        if (hi < rw.WH)
            buf_printf(b, "                        for (i = %d; i < %d; i++)\n"
                          "                            d[%d + i] = 0.0f;\n", hi, rw.WH, p * rw.WH);
    }
    buf_puts(b, "                    }\n                }\n");
    buf_printf(b, "                for (gb = grp * %d; gb < (grp + 1) * %d; gb++) {\n", c.NB, c.NB);
    ConvCalls cc = { &c, false, true, put_call_args, n };
    if (c.WW) { /* the wide strips first, then those of wb from where they end */
        buf_printf(b, "                    ox = 0;\n#if RC_WIDE\n"
                      "                    for (; ox + %d <= %d; ox += %d)\n", c.WW, c.WO, c.WW);
        put_block_call(&cc, b, "                        ", "ox", c.WW, false);
        buf_printf(b, "#endif\n                    for (; ox + %d <= %d; ox += %d)\n", WB, c.WO, WB);
    } else {
        buf_printf(b, "                    for (ox = 0; ox + %d <= %d; ox += %d)\n", WB, c.WO, WB);
    }
    put_block_call(&cc, b, "                        ", "ox", WB, false);
    if (rest) {
        char ox[32];
        snprintf(ox, sizeof ox, "%d", c.WO - WR);
        buf_puts(b, "                    /* the rest of the row */\n");
        put_block_call(&cc, b, "                    ", ox, WR, false);
    }
    buf_puts(b, "                }\n            }\n        }\n    }\n}\n\n");
}

/* ---- TK_WINO: a 1-D conv as Winograd F(6, 3) along the row ----
 * (compiler/layout.c, wino_layout: the scratch, the packed weights and the transforms.)
 * Per batch and chunk of tiles: the chunk's input columns are copied into xt, 8 input
 * channels a block (so that the transforms run 8 channels a vector); each 8-column window
 * of xt is transformed (BT) into tv, per class of offset (0, or 3 for the odd groups); then
 * for each of the 8 points a product of the transformed weights by tv, summed over the
 * groups and input channels (kN_bw: 16 channels x 5 tiles, as the direct 1-D conv's
 * blocks); then AT turns each tile's 8 products into its 6 outputs, the bias and the
 * epilogue applied as they are stored. */

/* One output of a transform: sum_j c[j] * in_j over the nonzero c[j] (exact in float). */
static void put_lincomb(Buf *b, const double *c, int n, const char *const *in)
{
    bool first = true;
    for (int j = 0; j < n; j++) {
        if (c[j] == 0)
            continue;
        if (!first)
            buf_puts(b, " + ");
        first = false;
        if (c[j] == 1) {
            buf_puts(b, in[j]);
        } else if (c[j] == -1) {
            buf_printf(b, "-%s", in[j]);
        } else {
            put_float_literal(b, (float)c[j]);
            buf_printf(b, " * %s", in[j]);
        }
    }
    if (first)
        buf_puts(b, "0.0f");
}

/* Rows p < q of BT for a point pair +-a: equal on the even inputs, opposite on the odd
 * ones (then out_p = e + o and out_q = e - o share their two sums). */
static bool wino_pair_rows(int p, int q)
{
    bool odd = false;
    for (int j = 0; j < RC_WINO_N; j++) {
        double s = j % 2 ? -1 : 1;
        if (wino_bt[q][j] != s * wino_bt[p][j])
            return false;
        odd |= j % 2 && wino_bt[p][j] != 0;
    }
    return odd;
}

/* The input transform of one tile, 8 channels a vector: vP[l] = BT[P] . (x0 ... x7). */
static void put_wino_bt(Buf *b, const char *ind)
{
    static const char *const xs[RC_WINO_N] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };
    bool done[RC_WINO_N] = { false };
    for (int p = 0; p < RC_WINO_N; p++) {
        if (done[p])
            continue;
        int q = p + 1;
        while (q < RC_WINO_N && (done[q] || !wino_pair_rows(p, q)))
            q++;
        if (q == RC_WINO_N) {
            buf_printf(b, "%sv%d[l] = ", ind, p);
            put_lincomb(b, wino_bt[p], RC_WINO_N, xs);
            buf_puts(b, ";\n");
            continue;
        }
        double ev[RC_WINO_N], od[RC_WINO_N];
        for (int j = 0; j < RC_WINO_N; j++)
            ev[j] = j % 2 ? 0 : wino_bt[p][j], od[j] = j % 2 ? wino_bt[p][j] : 0;
        buf_printf(b, "%s{\n%s    const float e = ", ind, ind);
        put_lincomb(b, ev, RC_WINO_N, xs);
        buf_puts(b, ", o = ");
        put_lincomb(b, od, RC_WINO_N, xs);
        buf_printf(b, ";\n%s    v%d[l] = e + o;\n%s    v%d[l] = e - o;\n%s}\n", ind, p, ind, q, ind);
        done[p] = done[q] = true;
    }
}

/* The output transform of one tile (its first q outputs stored), 8 channels o8 * 8 + l a
 * vector: the products of its points (mP = mt[P * chunk * cop + l]; the columns of AT for a
 * point pair +-a are equal on the even outputs and opposite on the odd ones: their sums sP
 * and differences dP); each output plus the bias through the epilogue into yb[i + k]. */
static void put_wino_at(const Graph *g, const Node *n, const Wino *wl, Buf *b, const char *ind,
                        int q)
{
    char names[RC_WINO_M][RC_WINO_N][8]; /* the operand of AT[k][p] in output k, or "" */
    const char *ins[RC_WINO_N];
    int mate[RC_WINO_N];
    bool used[RC_WINO_N] = { false }, sum[RC_WINO_N] = { false }, dif[RC_WINO_N] = { false };
    for (int p = 0; p < RC_WINO_N; p++) {
        mate[p] = -1;
        for (int k = 0; k < RC_WINO_M; k++)
            snprintf(names[k][p], sizeof names[k][p], "m%d", p);
    }
    for (int p = 0; p < RC_WINO_N; p++) {
        for (int r = p + 1; r < RC_WINO_N && mate[p] < 0; r++) {
            bool ok = mate[r] < 0, odd = false;
            for (int k = 0; k < RC_WINO_M && ok; k++) {
                ok = wino_at[k][r] == (k % 2 ? -1 : 1) * wino_at[k][p];
                odd |= k % 2 && wino_at[k][p] != 0;
            }
            if (!ok || !odd || mate[p] >= 0)
                continue;
            mate[p] = r, mate[r] = p;
            for (int k = 0; k < RC_WINO_M; k++) {
                snprintf(names[k][p], sizeof names[k][p], "%c%d", k % 2 ? 'd' : 's', p);
                names[k][r][0] = 0;
            }
        }
    }
    for (int k = 0; k < q; k++) /* what the q outputs read */
        for (int p = 0; p < RC_WINO_N; p++)
            if (names[k][p][0] && wino_at[k][p] != 0) {
                used[p] = true;
                if (mate[p] >= 0)
                    used[mate[p]] = true, sum[p] |= k % 2 == 0, dif[p] |= k % 2 == 1;
            }
    for (int p = 0; p < RC_WINO_N; p++)
        if (used[p])
            buf_printf(b, "%sconst float m%d = mt[%ld + l];\n", ind, p, (long)p * wl->chunk * wl->cop);
    for (int p = 0; p < RC_WINO_N; p++) {
        if (sum[p])
            buf_printf(b, "%sconst float s%d = m%d + m%d;\n", ind, p, p, mate[p]);
        if (dif[p])
            buf_printf(b, "%sconst float d%d = m%d - m%d;\n", ind, p, p, mate[p]);
    }
    buf_printf(b, "%sfloat v;\n", ind);
    for (int k = 0; k < q; k++) {
        double c[RC_WINO_N];
        int nc = 0;
        for (int p = 0; p < RC_WINO_N; p++)
            if (names[k][p][0])
                ins[nc] = names[k][p], c[nc++] = wino_at[k][p];
        buf_printf(b, "%sv = ", ind);
        put_lincomb(b, c, nc, ins);
        if (n->a.bias)
            buf_printf(b, " + e%d[o8 * 8 + l]", n->a.bias);
        buf_puts(b, ";\n");
        char idx[16];
        snprintf(idx, sizeof idx, k ? "i + %d" : "i", k);
        emit_epilogue(g, n, b, ind, "o8 * 8 + l", idx);
        buf_printf(b, "%syb[%s] = v;\n", ind, idx);
    }
}

/* kN_bw: the products of point p for rb output channels from ob * rb x wb tiles from tb of
 * the chunk: sums over the groups and input channels, each transformed input value
 * broadcast (a loop of one vector per tile, as emit_block_oc's). */
static void emit_wino_block(const Graph *g, int idx, const Wino *wl, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const int RB = n->a.tile.rb, WB = n->a.tile.wb, V = n->a.tile.rb / 2;
    int CI = (int)g->values[n->in[0]].shape.dim[1], NB = wl->cop / RB, last = CI - (wl->nib - 1) * 8;
    int H = RB / V;
    buf_printf(b, "/* n%d: Winograd products of point p: %d output channels from ob * %d x %d tiles "
                  "from tb, summed over %d group(s) of 3 taps and %d input channels */\n",
               idx, RB, RB, WB, wl->groups, CI);
    buf_printf(b, "static void k%d_bw(const float *restrict tv, const float *restrict w, "
                  "float *restrict pm, int p, int ob, int tb)\n{\n", idx);
    buf_puts(b, "    float");
    for (int q = 0; q < WB * H; q++)
        buf_printf(b, "%s a%d[%d]", q ? "," : "", q, V);
    buf_puts(b, ";\n    int r, gr, ib, l;\n");
    buf_printf(b, "    for (r = 0; r < %d; r++) {\n", V);
    for (int q = 0; q < WB * H; q++)
        buf_printf(b, "        a%d[r] = 0.0f;\n", q);
    buf_puts(b, "    }\n");
    buf_printf(b, "    for (gr = 0; gr < %d; gr++) { /* taps 3 gr ...: class gr %% %d, tile tb + gr / 2 */\n",
               wl->groups, wl->cls);
    buf_printf(b, "        const float *vg = tv + ((long)(p * %d + gr %% %d) * %d + tb + gr / 2) * 8;\n",
               wl->cls, wl->cls, wl->nib * wl->vtiles);
    buf_printf(b, "        const float *wg = w + ((long)(p * %d + ob) * %d + gr) * %d;\n", NB, wl->groups,
               CI * RB);
    buf_printf(b, "        for (ib = 0; ib < %d; ib++) {\n", wl->nib);
    buf_printf(b, "            const float *vb = vg + (long)ib * %d;\n", wl->vtiles * 8);
    buf_printf(b, "            const float *wb = wg + (long)ib * %d;\n", 8 * RB);
    if (last == 8) {
        buf_puts(b, "            RC_CLOOP for (l = 0; l < 8; l++) {\n");
    } else { /* (a condition with ?: in it: gcc ignores the loop's pragma, with a warning) */
        buf_printf(b, "            const int nl = ib < %d ? 8 : %d;\n", wl->nib - 1, last);
        buf_puts(b, "            RC_CLOOP for (l = 0; l < nl; l++) {\n");
    }
    buf_printf(b, "                const float *wk = wb + l * %d;\n", RB);
    for (int j = 0; j < WB; j++) {
        buf_printf(b, "                RC_CLOOP for (r = 0; r < %d; r++) {\n", V);
        for (int h = 0; h < H; h++)
            buf_printf(b, "                    a%d[r] += vb[%d + l] * wk[%d + r];\n", j * H + h, j * 8,
                       h * V);
        buf_puts(b, "                }\n");
    }
    buf_puts(b, "            }\n        }\n    }\n");
    /* a loop per array: clang 14 -O3 -march=native ran the multiply-adds scalar when one
     * loop stored them all (conv1d 1354 us; with these loops 151-157, the direct conv 243-249;
     * gcc 12 the same either way) */
    buf_printf(b, "    pm += ((long)p * %d + tb) * %d + ob * %d;\n", wl->chunk, wl->cop, RB);
    for (int j = 0; j < WB; j++)
        for (int h = 0; h < H; h++)
            buf_printf(b, "    for (r = 0; r < %d; r++)\n        pm[%d + r] = a%d[r];\n", V,
                       j * wl->cop + h * V, j * H + h);
    buf_puts(b, "}\n\n");
}

/* The copy of input channels ib * 8 + l (l < lanes; zeros up to 8) of columns [lo, hi)
 * into xt block ib (its column ix - c0), zeros in the chunk's other columns. */
static void put_wino_copy(Buf *b, int WI, int XC, int lanes, const char *ind)
{
    buf_printf(b, "%sfloat *d = xt + (long)ib * %d;\n", ind, XC * 8);
    buf_printf(b, "%sconst float *s = xb + (long)ib * %d;\n", ind, 8 * WI);
    buf_printf(b, "%sfor (c = 0; c < (lo - c0) * 8; c++)\n%s    d[c] = 0.0f;\n", ind, ind);
    buf_printf(b, "%sfor (c = lo; c < hi; c++) {\n", ind);
    for (int l = 0; l < 8; l++) {
        if (l < lanes)
            buf_printf(b, "%s    d[(c - c0) * 8 + %d] = s[%d + c];\n", ind, l, l * WI);
        else
            buf_printf(b, "%s    d[(c - c0) * 8 + %d] = 0.0f;\n", ind, l);
    }
    buf_printf(b, "%s}\n", ind);
    buf_printf(b, "%sfor (c = (hi - c0) * 8; c < %d; c++)\n%s    d[c] = 0.0f;\n", ind, XC * 8, ind);
}

/* The outputs of the chunk's tiles [tf, tt) (q outputs each) for channel blocks o8 in
 * [from, to) of `lanes` channels, at indent ind. */
static void put_wino_out(const Graph *g, const Node *n, const Wino *wl, Buf *b, const char *ind,
                         int from, int to, int lanes, const char *tf, const char *tt, int q, int WO)
{
    char in2[64], in3[64];
    snprintf(in2, sizeof in2, "%s        ", ind);
    snprintf(in3, sizeof in3, "%s            ", ind);
    buf_printf(b, "%sfor (o8 = %d; o8 < %d; o8++)\n", ind, from, to);
    buf_printf(b, "%s    for (t = %s; t < %s; t++) {\n", ind, tf, tt);
    buf_printf(b, "%sconst float *mt = pm + (long)t * %d + o8 * 8;\n", in2, wl->cop);
    buf_printf(b, "%sconst long i0 = (long)o8 * %ld + (long)(t0 + t) * %d;\n", in2, 8L * WO, RC_WINO_M);
    buf_printf(b, "%sfor (l = 0; l < %d; l++) {\n", in2, lanes);
    buf_printf(b, "%sconst long i = i0 + (long)l * %d;\n", in3, WO);
    put_wino_at(g, n, wl, b, in3, q);
    buf_printf(b, "%s}\n%s    }\n", in2, ind);
}

/* put_wino_out for every channel block: those of 8 channels, then a last narrower one */
static void put_wino_outs(const Graph *g, const Node *n, const Wino *wl, Buf *b, const char *ind,
                          const char *tf, const char *tt, int q, const Conv *c)
{
    int NO8 = (c->CO + 7) / 8, LO = c->CO - (NO8 - 1) * 8;
    if (LO == 8 || NO8 > 1)
        put_wino_out(g, n, wl, b, ind, 0, LO == 8 ? NO8 : NO8 - 1, 8, tf, tt, q, c->WO);
    if (LO < 8)
        put_wino_out(g, n, wl, b, ind, NO8 - 1, NO8, LO, tf, tt, q, c->WO);
}

static void emit_wino(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    Wino wl;
    if (wino_layout(g, n, &wl) > n->a.tile.scratch)
        unreachable(); /* pack.c sized the scratch */
    Conv c;
    conv_init(g, idx, false, &c);
    int XC = wl.xcols, full_ib = c.CI / 8;
    int TF = c.WO / RC_WINO_M, QR = c.WO % RC_WINO_M, CH = wl.chunk;
    put_cloop_macro(b);
    emit_wino_block(g, idx, &wl, b);
    put_header_comment(g, idx, b, "conv2d");
    buf_printf(b, "/* Winograd F(6, 3): %d tiles of 6 outputs in %d chunk(s) of %d; %d group(s) of 3 "
                  "taps; blocks of %d output channels x %d tiles a point; weights packed "
                  "[8][%d][%d][%d][%d]; xd: xt %ld, tv %ld, pm %ld floats */\n",
               wl.tiles, wl.chunks, CH, wl.groups, c.RB, c.WB, wl.cop / c.RB, wl.groups, c.CI, c.RB,
               (long)wl.xt, (long)wl.v, (long)wl.m);
    buf_printf(b, "static void k%d_conv2d(const float *restrict x, const float *restrict w", idx);
    put_operand_params(n, b, false);
    buf_puts(b, ", float *restrict y, float *restrict xd)\n{\n");
    buf_printf(b, "    float *xt = xd, *tv = xd + %ld, *pm = xd + %ld;\n", (long)wl.xt,
               (long)(wl.xt + wl.v));
    buf_puts(b, "    int bt, t0, ib, c, k, t, l, p, ob, tb, o8;\n");
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        const float *xb = x + (long)bt * %ld;\n", (long)c.CI * c.WI);
    buf_printf(b, "        float *yb = y + (long)bt * %ld;\n", (long)c.CO * c.WO);
    for (int k = 2; k < (int)arrlen(n->in); k++)
        if (op_prefix(n, k) == 'f')
            buf_printf(b, "        const float *f%d = e%d + (long)bt * %ld;\n", k, k, (long)c.CO * c.WO);
    buf_printf(b, "        for (t0 = 0; t0 < %d; t0 += %d) {\n", wl.chunks * CH, CH);
    buf_printf(b, "            /* xt: input columns [c0, c0 + %d), those in [lo, hi) inside the "
                  "input */\n", XC);
    buf_printf(b, "            const int c0 = t0 * %d - %d;\n", RC_WINO_M, c.PL);
    /* lo and hi within [c0, c0 + XC] also where the chunk is all padding */
    buf_printf(b, "            const int l1 = c0 > 0 ? c0 : 0, h1 = c0 + %d < %d ? c0 + %d : %d;\n", XC,
               c.WI, XC, c.WI);
    buf_printf(b, "            const int lo = l1 < c0 + %d ? l1 : c0 + %d, hi = h1 > lo ? h1 : lo;\n", XC,
               XC);
    if (full_ib) {
        buf_printf(b, "            for (ib = 0; ib < %d; ib++) {\n", full_ib);
        put_wino_copy(b, c.WI, XC, 8, "                ");
        buf_puts(b, "            }\n");
    }
    if (full_ib < wl.nib) {
        buf_printf(b, "            ib = %d;\n            {\n", full_ib);
        put_wino_copy(b, c.WI, XC, c.CI - full_ib * 8, "                ");
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "            /* tv: each tile's 8 columns from 6 t + 3 k transformed (BT) */\n");
    buf_printf(b, "            for (ib = 0; ib < %d; ib++)\n", wl.nib);
    buf_printf(b, "                for (k = 0; k < %d; k++)\n", wl.cls);
    buf_printf(b, "                    for (t = 0; t < %d; t++) {\n", wl.vtiles);
    const char *ind = "                        ";
    buf_printf(b, "%sconst float *d = xt + ((long)ib * %d + t * %d + k * 3) * 8;\n", ind, XC,
               RC_WINO_M);
    for (int p = 0; p < RC_WINO_N; p++)
        buf_printf(b, "%sfloat *v%d = tv + (((long)(%d + k) * %d + ib) * %d + t) * 8;\n", ind, p,
                   p * wl.cls, wl.nib, wl.vtiles);
    buf_printf(b, "%sfor (l = 0; l < 8; l++) {\n", ind);
    buf_printf(b, "%s    const float", ind);
    for (int j = 0; j < RC_WINO_N; j++)
        buf_printf(b, "%s x%d = d[%d + l]", j ? "," : "", j, j * 8);
    buf_puts(b, ";\n");
    put_wino_bt(b, "                            ");
    buf_printf(b, "%s}\n                    }\n", ind);
    buf_puts(b, "            /* pm: per point, the products summed over groups and channels */\n");
    buf_printf(b, "            for (p = 0; p < %d; p++)\n", RC_WINO_N);
    buf_printf(b, "                for (ob = 0; ob < %d; ob++)\n", wl.cop / c.RB);
    buf_printf(b, "                    for (tb = 0; tb < %d; tb += %d)\n", CH, c.WB);
    buf_printf(b, "                        k%d_bw(tv, w, pm, p, ob, tb);\n", idx);
    buf_puts(b, "            /* the outputs (AT) of the chunk's whole tiles, then of a last part tile */\n");
    buf_puts(b, "            {\n");
    buf_printf(b, "                const int nt = t0 + %d <= %d ? %d : %d - t0;\n", CH, TF, CH, TF);
    put_wino_outs(g, n, &wl, b, "                ", "0", "nt", RC_WINO_M, &c);
    buf_puts(b, "            }\n");
    if (QR) {
        char tf[16], tt[16];
        snprintf(tf, sizeof tf, "%d", TF % CH);
        snprintf(tt, sizeof tt, "%d", TF % CH + 1);
        buf_printf(b, "            if (t0 == %d) { /* tile %d: %d output(s) */\n", TF / CH * CH, TF, QR);
        put_wino_outs(g, n, &wl, b, "                ", tf, tt, QR, &c);
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "        }\n    }\n}\n\n");
}

void emit_conv2d_kernel(const Graph *g, int idx, Buf *b)
{
    if (g->nodes[idx].a.tile.kind == TK_WINO) {
        emit_wino(g, idx, b);
        return;
    }
    if (g->nodes[idx].a.tile.kind == TK_CONV && g->nodes[idx].a.tile.rows) {
        emit_rows(g, idx, b);
        return;
    }
    if (g->nodes[idx].a.tile.kind == TK_DEPTHWISE && g->nodes[idx].a.tile.lanes)
        emit_depthwise_lanes(g, idx, b);
    else if (g->nodes[idx].a.tile.kind == TK_DEPTHWISE && g->nodes[idx].a.tile.rows)
        emit_depthwise_plane(g, idx, b);
    else if (g->nodes[idx].a.tile.kind == TK_DEPTHWISE)
        emit_depthwise(g, idx, b);
    else
        emit_direct(g, idx, b);
}
