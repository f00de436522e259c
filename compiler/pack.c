/*
 * pack.c: the pass that picks each tunable conv2d / matmul's kernel and lays out its
 * weights for it (the layouts are in layout.c, which the emitters read too).
 *
 * pack: picks each tunable node's kernel (Attrs.tile) for g->target and re-lays out its
 *   constant weights into the order that kernel reads (a new constant):
 *     TK_CONV(_OC)  [groups][ceil(cog/rb)][ci/groups][kh][kw][rb], zero-padded channels
 *     TK_DEPTHWISE  OIHW as it is; with tile.lanes [co/lanes][kh][kw][lanes]
 *     TK_GEMV       [n][k] (a [k][n] weight is transposed)
 *     TK_GEMM       [ceil(n/wb)][k][wb], zero-padded columns (the last block [k][wr]
 *                   when tile.wr is set); a b computed at run time (nn.batch_matmul of
 *                   two computed operands, b stored [k][n]) is read in place, unpacked,
 *                   its last wr = n % wb columns a block of their own
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

const char *const target_name[TARGET_COUNT] = {
    [TARGET_GENERIC] = "generic",
    [TARGET_X86_64_AVX2] = "x86-64-avx2",
    [TARGET_CORTEX_M] = "cortex-m",
    [TARGET_X86_64_AVX512] = "x86-64-avx512",
};

bool target_parse(const char *name, Target *out)
{
    for (int t = 0; t < TARGET_COUNT; t++)
        if (!strcmp(name, target_name[t])) {
            *out = (Target)t;
            return true;
        }
    return false;
}

static const Value *val(const Graph *g, int v) { return &g->values[v]; }

/* Register blocks per target. A block keeps rb x wb accumulators (rb arrays of wb floats,
 * or wb arrays of rb for TK_CONV_OC) and, per reduction step, loads rb broadcast values
 * and wb / vl vectors. gcc 12 -O3 keeps the arrays in vector registers when the innermost
 * loop becomes exactly one vector (wb == vl; measured: wider arrays are spilled around
 * every step inside the conv and matmul loop nests) and is not completely peeled before
 * vectorisation, which gcc does to loops of at most 16 trips with a small body: hence
 * `peel_rule` (rb * wb >= 72 while wb <= 16). A one-row matmul (rb == 1, no enclosing
 * loops) stays in registers up to 64 columns.
 * Generic: any SIMD width, and small frames on scalar cores, where the accumulator
 * arrays live on the stack (the firmware tests build the default target's C for a
 * Cortex-M4 at -Os and require frames under 256 bytes, inlined kernels included): blocks
 * of at most 24 floats (max_floats), as one row of 24 columns (vl 8: three AVX vectors,
 * six SSE or NEON ones). A loop of more than 16 trips is not completely peeled, so gcc
 * vectorises it at any width whatever its body (the peel rule's blocks of 72 floats
 * would need 288 bytes); no block narrower than rb rows (Tile.full). Measured with gcc
 * -O3 -march=native on Zen 3, these run at about half the speed of x86-64-avx2's 11 x 8
 * blocks (3 accumulator vectors do not cover the FMA latency). So convs with enough
 * channels and matmuls with enough rows get blocks of up to 12 accumulator vectors
 * (simd_block), and streamed one-row matmuls (TK_GEMV) 4 rows at a time, which one
 * emitted file runs whole where its RC_SIMD is 1 (a core with vector registers: as fast
 * as x86-64-avx2) and in passes of Tile.sub rows of at most 24 floats elsewhere.
 * Cortex-M blocks stay at or under 16 floats (64 bytes of stack where a compiler keeps
 * them in memory: Cortex-M frames stay well under 256 bytes). */
typedef struct {
    int vl;                 /* floats per vector register */
    int max_acc;            /* accumulator vectors in a block: rb * wb / vl at most */
    int max_wb;             /* widest block (when rows allow a block that follows the rules) */
    bool peel_rule;         /* see above */
    int gemv_rows;          /* TK_GEMV rows at a time; 0: one-row TK_GEMM instead */
    int gemv_lanes;         /* TK_GEMV partial sums per row */
    int64_t gemv_bytes;     /* one-row matmuls with more weight bytes than this are TK_GEMV
                             * (0: all of them) */
    int min_acc;            /* accumulator vectors that hide the FMA latency */
    int chains;             /* independent sums per channel in a conv's border pixels */
    bool rest_block;        /* a conv row's rest: a narrower block (vl / 2 steps) */
    int oc_wb;              /* > 0: convs (not 1x1) with a vector of channels or more are
                             * vectorised over channels, up to oc_wb columns a block */
    bool row_buffer;        /* strided / narrow convs read row buffers, depthwise convs a
                             * padded plane (Tile.rows) */
    int gemm_wb;            /* widest TK_GEMM block of 8 rows or more; wider than max_wb:
                             * the accumulators of a row are arrays of vl (Tile.vw) */
    int gemm_rb;            /* > 0: those blocks have at least gemm_rb rows; 0: they are
                             * exactly gemm_wb wide, with the rows max_acc leaves (also for a
                             * b computed at run time) */
    bool full_last;         /* Tile.full: no block narrower than rb rows */
    int max_floats;         /* > 0: accumulators in a block at most (they are arrays on the
                             * stack where a compiler does not keep them in registers) */
    int regs;               /* > 0: conv blocks multiply-add one broadcast at a time (see
                             * bcast_regs) and keep accumulators, operand vectors and the
                             * broadcast within this many vector registers */
    int conv_acc;           /* with regs: accumulator vectors that hide the FMA latency in a
                             * conv block (measured) */
    bool streams;           /* weights read from memory once a call come as several streams
                             * side by side (Tile.streams) */
    int rows_regs;          /* > 0: convs of a few columns a row (or mostly border pixels)
                             * read the input zero-padded (Tile.rows), in TK_CONV_OC blocks
                             * that keep their accumulators, operand vectors and a broadcast
                             * within this many vector registers (bcast_fits) */
    bool clip;              /* TK_CONV_OC without Tuning.regs: border columns in clipped
                             * strips (Tile.clip). Not x86-64-avx2's broadcast loops: 3x3
                             * 32 -> 32 at 56x56 (-march=x86-64-v3, Emerald Rapids) ran 682 us
                             * as 9 strips of 6 and 2 border pixels, 723 us clipped */
    int rows_wb;            /* > max_wb: TK_CONV blocks vectorised over the columns (row-
                             * buffered, or a 1x1 conv's pixels) this many columns wide, as
                             * arrays of vl (Tile.vw; rows_block) */
} Tuning;

/* One-row matmuls on x86: weights that fit the core's L2 (up to 2 MiB on current cores)
 * run fastest as TK_GEMM column blocks (784 -> 128: 82 GFLOP/s, against 71 as row dots,
 * whose per-row lane sums cost on short rows); weights streamed from L3 or DRAM as 4-row
 * dots (1024 -> 1000: 14.9 against 14.5, at the core's ~30 GB/s from L3). */
#define X86_GEMV_BYTES ((int64_t)2 << 20)

/* AVX2_GEMM: several rows on AVX2 (16 registers), gcc 12 -O3 on Zen 3, the transformer
 * encoder's matmuls (32 rows x 128 -> 384, 128 -> 256, 256 -> 128; 4 x 32 x 32 -> 32
 * attention products): 3 rows x 4 vectors (12 accumulators, 7 loads per step) ran at
 * 38 GMAC/s, 2 x 4 the same, 2 x 6 and 4 x 3 5-15% slower; 11 rows x 1 vector (11
 * broadcasts held across the step: gcc spilled them) and 6 x 2 or 5 x 2 at 20 GMAC/s or
 * less, 8 x 1 and 4 x 2 at 3-4 (not vectorised). */

/* Several rows on AVX-512: 8 rows x 2 vectors (16 accumulators, 10 loads per step) reach
 * 171 GFLOP/s on 32 x 1024 -> 1000, against 136-168 for 16 rows x 1 vector (17 loads per
 * step; 136 when K = 1024 puts the 16 rows of x in one L1 set) and 143 for 4 x 2. */

static const Tuning tunings[TARGET_COUNT] = {
    /* any SIMD width, small frames (see above) */
    [TARGET_GENERIC] = { 8, 3, 24, true, 1, 24, 0, 8, 4, true, 0, true, 8, 8, true, 24 },
    /* 12 accumulators + operands fit AVX2's 16 vector registers; 8 cover 2 FMA ports x 4
     * cycles of latency (GEMM); conv blocks up to 4 vectors wide, their accumulators and
     * operands in 15 registers, 10 accumulators or more. Matmuls of 8 rows or more: 3 rows
     * x 4 vectors (AVX2_GEMM) */
    [TARGET_X86_64_AVX2] = { 8, 12, 8, true, 4, 16, X86_GEMV_BYTES, 8, 4, true, 12, true, 32, 0, false, 0,
                             15, 10, true, 15 },
    /* Cortex-M: blocks of up to 16 named float sums (of the 32 float registers); GEMV 4
     * rows, k unrolled by 8, one named sum per row (kernel_conv2d.c, kernel_dense.c) */
    [TARGET_CORTEX_M] = { 4, 4, 8, false, 4, 8, 0, 1, 1, false, 0, false, 8, 8, false, 0 },
    /* 32 vector registers of 16 floats; 8 accumulators cover 2 FMA ports x 4 cycles */
    [TARGET_X86_64_AVX512] = { 16, 24, 16, true, 4, 16, X86_GEMV_BYTES, 8, 4, true, 14, true, 32, 8, false, 0,
                               0, 8, false, 32, true, 32 },
};

/* Outputs kept / outputs computed when n are covered by blocks of b (the last block
 * padded, or overlapping its neighbour); 0 when n < b and the block cannot overlap. */
static double use(int64_t n, int b, bool overlap)
{
    if (n <= 0)
        return 0;
    if (overlap && n < b)
        return 0;
    int64_t blocks = (n + b - 1) / b;
    return (double)n / (double)(blocks * b);
}

/* The fraction of FMA peak a block reaches: `fmas` vector FMAs (each its own accumulator)
 * and `loads` loads per step, two of each per cycle, min_acc accumulators to cover the
 * latency. */
static double eff(const Tuning *t, double fmas, double loads)
{
    double lat = fmas >= t->min_acc ? 1.0 : fmas / t->min_acc;
    return lat * fmas / (fmas > loads ? fmas : loads);
}

/* Conv blocks on a target with Tuning.regs (emit/kernel_conv2d.c: x86-64-avx2): each
 * broadcast operand gets its own loop of one vector, multiplied by the block's `vecs`
 * operand vectors into their accumulators, so gcc builds one broadcast at a time; the
 * vector registers a block holds are its accumulators, those operand vectors and one
 * broadcast. Measured on Zen 3 (GFLOP/s, gcc 12 -O3): conv1x1 64 -> 128 in blocks of
 * 6 rows x 2 vectors 93, 5 x 2 91, 12 x 1 82, 8 x 1 79, 4 x 3 65 (16 registers), 3 x 4 70
 * (17), 4 x 2 62 (8 accumulators); conv3x3 32 -> 32 vectorised over 2 vectors of channels
 * x 6 columns 93, 1 x 11 78, 4 x 3 68. The row-buffered strided conv 3 -> 32 (3 taps per
 * row, unrolled) ran 5 x 2 at 77 and 6 x 2 at 53: its taps' operand vectors stay live
 * into the next tap, one register more. */
static bool bcast_fits(const Tuning *t, int acc, int vecs, int extra)
{
    return acc <= t->max_acc && acc + vecs + 1 + extra <= t->regs;
}

static double bcast_eff(const Tuning *t, double fmas, double loads)
{
    double lat = fmas >= t->conv_acc ? 1.0 : fmas / t->conv_acc;
    return lat * fmas / (fmas > loads ? fmas : loads);
}

/* The best (rb, wb) for rows x cols outputs, rows in blocks of rb (broadcast operands)
 * and cols in blocks of wb (vector operands, wb <= widest); cols_overlap: a short last
 * strip of columns overlaps the one before (conv) instead of being padded (packed matmul
 * columns). extra >= 0: a conv block on a target with Tuning.regs (bcast_fits; extra
 * registers it needs). */
static void pick_block(const Tuning *t, int64_t rows, int64_t cols, bool cols_overlap,
                       int min_rb, int widest, int extra, int *rb_out, int *wb_out)
{
    double best = -1;
    *rb_out = 1, *wb_out = t->vl;
    if (extra >= 0 && t->regs) {
        for (int wb = t->vl; wb <= 4 * t->vl; wb += t->vl)
            for (int rb = 1; rb <= 16; rb++) {
                int acc = rb * wb / t->vl;
                if (!bcast_fits(t, acc, wb / t->vl, extra))
                    continue;
                double s = bcast_eff(t, acc, rb + (double)wb / t->vl) * use(rows, rb, false) *
                           use(cols, wb, cols_overlap);
                if (s > best + 1e-9) {
                    best = s;
                    *rb_out = rb, *wb_out = wb;
                }
            }
        if (best > 0)
            return;
    }
    /* too few rows for a block within max_wb: wider ones (spilled, still much faster than
     * a loop the compiler does not vectorise) */
    int max_wb = t->peel_rule && rows * t->max_wb < 72 ? 8 * t->max_wb : widest;
    for (int wb = t->vl; wb <= max_wb; wb += t->vl)
        for (int rb = 1; rb <= 16; rb++) {
            if (rb * wb / t->vl > t->max_acc || (t->peel_rule && wb <= 16 && rb * wb < 72) ||
                rb < min_rb || (t->max_floats && rb * wb > t->max_floats))
                continue;
            double s = eff(t, (double)rb * wb / t->vl, rb + (double)wb / t->vl) *
                       use(rows, rb, false) * use(cols, wb, cols_overlap);
            if (s > best + 1e-9) {
                best = s;
                *rb_out = rb, *wb_out = wb;
            }
        }
    if (best <= 0) { /* too narrow for any strip: the smallest block (border path) */
        int most = t->max_floats ? t->max_floats / t->vl / 2 : t->vl;
        *rb_out = rows < 1 ? 1 : rows < most ? (int)rows : most;
        *wb_out = t->vl;
    }
}

/* --target generic on cores with vector registers: blocks of up to this many accumulator
 * vectors (x86-64-avx2's: they and their operands fit 16 AVX registers). */
#define GENERIC_SIMD_ACC 12
/* and TK_GEMV blocks of 4 rows of 16 lanes there (x86-64-avx2's: 8 accumulator vectors),
 * one row of 16 a pass elsewhere */
#define GENERIC_SIMD_GEMV_ROWS 4
#define GENERIC_SIMD_GEMV_LANES 16

/* --target generic: the block of pick_block's rows x cols for a core with vector
 * registers, which the emitted C runs as one where RC_SIMD is 1 and elsewhere in passes of
 * Tile.sub rows of at most max_floats accumulators (frames stay small on scalar cores).
 * Kept when its rows are padded by at most 1/16 (the packed weights stay compact: small
 * layers keep the compact block) and it is wider than the compact one and has a strip to
 * run. Measured with gcc -O3 -march=native on Zen 3: the compact blocks of one row of 24
 * columns ran at about half the speed of x86-64-avx2's 11 x 8. */
static void simd_block(const Tuning *t, int64_t rows, int64_t cols, bool cols_overlap, Tile *tl)
{
    if (!t->max_floats)
        return;
    Tuning s = *t;
    s.max_acc = GENERIC_SIMD_ACC, s.max_wb = t->vl, s.max_floats = 0;
    int rb, wb;
    pick_block(&s, rows, cols, cols_overlap, 1, s.max_wb, -1, &rb, &wb);
    int64_t pad = (rows + rb - 1) / rb * rb - rows;
    if (rb * wb <= t->max_floats || wb > t->max_floats || cols < wb || pad * 16 > rows)
        return;
    int sub = t->max_floats / wb;
    while (rb % sub)
        sub--;
    tl->rb = rb, tl->wb = wb, tl->sub = sub;
}

/* The width of a block for the n % wb columns after the full blocks of wb (rb rows), in
 * steps of `step`; 0 (a block of wb) when the target has no such blocks or it would not
 * be narrower, or would break the peel rule (rb 0: a one-row matmul, which it spares). */
static int rest_width(const Tuning *t, int64_t n, int rb, int wb, int step)
{
    int64_t rest = n >= wb ? n % wb : 0;
    int wr = (int)((rest + step - 1) / step * step);
    if (!t->rest_block || !rest || wr >= wb || (t->peel_rule && rb && rb * wr < 72))
        return 0;
    return wr;
}

/* Tuning.rows_wb: the rows of a row-buffered conv, and of a TK_CONV vectorised over its
 * columns (a 1x1 conv's pixels flattened into one row), in blocks of rows_wb columns,
 * their accumulators arrays of one vector (Tile.vw), and the rest of a row a block of its
 * own width (Tile.wr); of rb channels with the fewest padded ones, the most that keep the
 * accumulators between min_acc and 2 * min_acc (more ran slower). Measured on Zen 5
 * (gcc 12 -O3 -march=native), conv3x3 3 -> 32 stride 2 from 224x224, us: blocks of 16
 * channels x 16 columns 116-119 (17 loads for 16 multiply-adds a step), 8 x 32 and the
 * rest of 16 columns in 8 x 16 104-108, 8 x 48 109-111, 4 x 64 168 and wider spilled;
 * 8 x 32 overlapping their last strip instead of a rest block 115. conv1x1 64 -> 128 at
 * 28x28: 55-59 -> 50-51 us. */
static bool rows_block(const Tuning *t, int64_t cog, int64_t cols, Tile *tl)
{
    int vecs = t->rows_wb / t->vl, best_rb = 0;
    double best = -1;
    if (t->rows_wb <= t->max_wb || cols < t->rows_wb)
        return false;
    for (int rb = 2 * t->min_acc / vecs; rb >= 1 && rb * vecs >= t->min_acc; rb--) {
        double sc = use(cog, rb, false) * eff(t, rb * vecs, rb + vecs);
        if (sc > best + 1e-9)
            best = sc, best_rb = rb;
    }
    if (!best_rb)
        return false;
    tl->rb = best_rb, tl->wb = t->rows_wb, tl->vw = t->vl;
    tl->wr = rest_width(t, cols, tl->rb, tl->wb, t->vl / 2);
    return true;
}

/* Vector registers per target, for the register-fitted blocks of 1-D convs and of the
 * phases of transposed convs (oc_register_block) and the Winograd blocks (wino_tile); 0:
 * the target keeps its 2-D rules for them. x86-64-avx512 takes AVX2's 16 (of its 32): the
 * deconv model (bench/run) 86-87 us against 88-92 with its 2-D rules. */
static const int oc_block_vregs[TARGET_COUNT] = {
    [TARGET_X86_64_AVX2] = 16, [TARGET_X86_64_AVX512] = 16,
};

/* A 1-D conv (nn.conv1d: a conv2d of one row, stride 1), or one output phase of a strided
 * transposed conv (small kernels, 2x2 for a 4x4 at stride 2), with cog >= vl channels, as
 * a TK_CONV_OC block: rb channels (vl or 2 vl) x wb columns, every accumulator, the wb
 * broadcast inputs and one weight vector in registers at once (wb as wide as that allows):
 * gcc then keeps the accumulators in registers. With one more, it spilled two of them, and
 * their sums went through memory at every step (a store-to-load chain per multiply-add).
 * The peel rule holds too (8 x 7 ran scalar: 1042 us for 32 -> 24 channels, 9 taps).
 * Measured on Zen 3, gcc 12 -O3, nn.Conv1d(32, 64, 9) on 512 samples: 16 x 5 blocks 209 us;
 * 16 x 6 450, 32 x 3 352, 8 x 12 537 (spilled); the 2-D rules' 11 x 8 TK_CONV blocks 443.
 * nn.ConvTranspose2d(64, 32, 4, stride 2) on 16x16 (four 2x2 phase convs): 16 x 5 blocks
 * 216 us for the layer; 11 x 8 TK_CONV blocks 536. */
static bool oc_register_block(const Tuning *t, int target, int64_t cog, int64_t cols, Tile *tl)
{
    int regs = target >= 0 && target < TARGET_COUNT ? oc_block_vregs[target] : 0;
    double best = -1;
    if (!regs || cog < t->vl)
        return false;
    for (int rb = t->vl; rb <= 2 * t->vl; rb += t->vl) {
        int wb = (regs - 1) / (rb / t->vl + 1);
        double acc = (double)rb / t->vl * wb;
        double sc = eff(t, acc, (double)rb / t->vl + wb) * use(cog, rb, false) *
                    use(cols, wb, true);
        if (wb >= 1 && !(t->peel_rule && rb * wb < 72) && sc > best + 1e-9) {
            best = sc;
            tl->rb = rb, tl->wb = wb;
        }
    }
    if (best <= 0)
        return false;
    tl->kind = TK_CONV_OC;
    tl->chains = t->chains;
    return true;
}

/* Targets whose 1-D convs (one row, kh 1, stride and dilation 1, groups 1) with 16 or more
 * channels each side and 48 or more columns run as Winograd F(6, 3) along the row
 * (TK_WINO): x86-64-avx2, where the direct conv already runs near the FMA peak
 * (nn.Conv1d(32, 64, 9) on 512 samples: 16 x 5 blocks at 89 GFLOP/s, oc_register_block), so
 * only fewer multiply-adds make it faster: F(6, 3) does 8 / 6 per output and group of 3
 * taps where the direct conv does 3 (kw 9: 4 against 9; kw 3: 4 / 3 against 3; kw 5 and 7
 * zero-pad their last group: 8 / 3 against 5, 4 against 7). Its products are blocks of the
 * same shape: 16 channels x 5 tiles, one point at a time.
 * Measured on Zen 3, gcc 12 -O3 -march=native: `bench/run --models-only --filter conv1d
 * --target x86-64-avx2`, the direct conv 199-210 us, Winograd 110-117 (PyTorch 284-288:
 * 1.35-1.45x -> 2.43-2.62x); the largest error relative to the largest output 1.6e-6 (direct
 * 7.4e-7). One kernel (`relayc run --cc 'gcc -O3 -march=native' --profile --repeat 200`,
 * bias and relu, padding kw / 2, load average 3), (ci, co, kw, width) direct -> Winograd
 * in us: (16, 16, 3, 48) 1.8 -> 1.6, (32, 32, 3, 256) 23.1 -> 16.9, (24, 16, 9, 96) 12.8 ->
 * 9.7, (16, 16, 9, 48) 6.9 -> 4.3, (128, 128, 3, 256) 271 -> 161, (64, 64, 3, 1200) 345 ->
 * 209. Under clang 14: 151-157 us against 243-249 (bench/README.md, "The conv1d and deconv
 * rows"). x86-64-avx512 too, with the same blocks (channels from 32 each side there: 2
 * vectors), Zen 5 (the model alone, a driver calling conv1d_run, best of 500): 89-96 us
 * direct (blocks of 16 channels x 14 columns) -> 49-51. The other targets keep the direct
 * conv (not measured). */
static const bool wino_targets[TARGET_COUNT] = {
    [TARGET_X86_64_AVX2] = true, [TARGET_X86_64_AVX512] = true,
};

/* The most scratch a TK_WINO kernel takes: the row in chunks of tiles when it would need more
 * (the input, transformed input and products of a chunk stay in a core's L2). conv1d's 441
 * KB in one chunk: 112 us; capped at 256 KiB (2 chunks) 115, at 128 KiB (4 chunks) 126. */
#define WINO_MAX_SCRATCH ((int64_t)512 << 10)

static bool wino_tile(const Tuning *t, const Graph *g, const Node *n, Tile *tl)
{
    const Window *w = &n->a.conv;
    const Shape *x = &val(g, n->in[0])->shape, *y = &val(g, n->out)->shape;
    int target = g->target;
    if (target < 0 || target >= TARGET_COUNT || !wino_targets[target] || !oc_block_vregs[target] ||
        w->groups != 1 || w->kh != 1 || x->dim[2] != 1 || y->dim[2] != 1 || w->sw != 1 ||
        w->dw != 1 || w->kw < 3 || w->kw > 18 || x->dim[1] < 2 * t->vl ||
        y->dim[1] < 2 * t->vl || y->dim[3] < 8 * RC_WINO_M)
        return false;
    /* the transformed weights (8 / 3 times the plain ones for kw a multiple of 3, 4 times for
     * kw 4) must fit under RC_MAX_CONST_BYTES beside the plain ones, counted until the end */
    int64_t cop = (y->dim[1] + 2 * t->vl - 1) / (2 * t->vl) * (2 * t->vl);
    if (!graph_const_fits(g, RC_WINO_N * cop * ((w->kw + 2) / 3) * x->dim[1] * (int64_t)sizeof(float)))
        return false;
    /* oc_register_block's blocks: 2 vectors of channels x 5 tiles in 16 registers */
    tl->kind = TK_WINO;
    tl->rb = 2 * t->vl;
    tl->wb = (oc_block_vregs[target] - 1) / 3;
    tl->packed = 1;
    Wino wl;
    int blocks = (int)((y->dim[3] + RC_WINO_M - 1) / RC_WINO_M + tl->wb - 1) / tl->wb;
    for (int nch = 1;; nch++) {
        tl->wr = (blocks + nch - 1) / nch * tl->wb;
        tl->scratch = wino_layout(g, n, &wl);
        if (tl->scratch <= WINO_MAX_SCRATCH || tl->wr == tl->wb)
            return true;
    }
}

/* The weights of a TK_WINO node, transformed (G g per group of 3 taps, in double, rounded
 * once) and packed [8][cop / rb][groups][ci][rb] (zero channels up to cop). */
static void pack_wino(Graph *g, Node *n)
{
    Wino wl;
    wino_layout(g, n, &wl);
    int64_t co = tile_channels(g, n), ci = val(g, n->in[0])->shape.dim[1], kw = n->a.conv.kw;
    int64_t rb = n->a.tile.rb, nb = wl.cop / rb;
    int64_t size = RC_WINO_N * wl.cop * wl.groups * ci;
    float *p = xcalloc((size_t)size, sizeof(float));
    const float *w = g->consts[val(g, n->in[1])->constant].data; /* [co][ci][1][kw] */
    for (int pt = 0; pt < RC_WINO_N; pt++)
        for (int64_t o = 0; o < co; o++)
            for (int gr = 0; gr < wl.groups; gr++)
                for (int64_t i = 0; i < ci; i++) {
                    double s = 0;
                    for (int k = 0; k < 3 && 3 * gr + k < kw; k++)
                        s += wino_g[pt][k] * w[(o * ci + i) * kw + 3 * gr + k];
                    p[(((pt * nb + o / rb) * wl.groups + gr) * ci + i) * rb + o % rb] = (float)s;
                }
    Shape s = { 1, { size } };
    n->in[1] = graph_add_const_copy(g, DT_F32, &s, p, val(g, n->in[1])->json, n->in[1]);
    free(p);
}

/* Weights of a row of n's plain layout times its channels: conv OIHW, matmul [n][k]. */
static int64_t pack_plain_count(const Graph *g, const Node *n)
{
    if (n->op == IR_CONV2D)
        return tile_channels(g, n) * (val(g, n->in[0])->shape.dim[1] / n->a.conv.groups) *
               n->a.conv.kh * n->a.conv.kw;
    return (int64_t)n->a.n * n->a.k;
}

/* Index of plain element (o, t) (o: output channel / column, t: position in its row of
 * cig*kh*kw or k) in the packed layout of n. */
static int64_t packed_index(const Graph *g, const Node *n, int64_t o, int64_t t)
{
    const Tile *tl = &n->a.tile;
    if (n->op == IR_CONV2D) { /* TK_CONV, TK_CONV_OC: [groups][blocks][cig][kh][kw][rb] */
        if (tl->kind == TK_DEPTHWISE && tl->lanes) /* [co / lanes][kh][kw][lanes] */
            return (o / tl->lanes * n->a.conv.kh * n->a.conv.kw + t) * tl->lanes + o % tl->lanes;
        if (tl->kind == TK_DEPTHWISE)
            return o * (n->a.conv.kh * n->a.conv.kw) + t;
        int64_t cog = tile_channels(g, n) / n->a.conv.groups;
        int64_t nb = (cog + tl->rb - 1) / tl->rb;
        int64_t row = val(g, n->in[0])->shape.dim[1] / n->a.conv.groups * n->a.conv.kh * n->a.conv.kw;
        int64_t grp = o / cog, oc = o % cog;
        if (tl->streams) { /* t = (ic, tap): [..][rb / vs][tap][ic][vs] */
            int64_t taps = n->a.conv.kh * n->a.conv.kw, cig = row / taps, r = oc % tl->rb;
            int64_t vs = tl->streams > 1 ? tl->vw : tl->rb;
            return ((grp * nb + oc / tl->rb) * tl->rb + r / vs * vs) * row +
                   (t % taps * cig + t / taps) * vs + r % vs;
        }
        return ((grp * nb + oc / tl->rb) * row + t) * tl->rb + oc % tl->rb;
    }
    if (tl->kind == TK_GEMM) {
        int64_t blk = o / tl->wb, last = (n->a.n - 1) / tl->wb;
        int64_t width = blk == last && tl->wr ? tl->wr : tl->wb;
        if (tl->streams) /* [blk][column / vw][k][column % vw] */
            return blk * n->a.k * tl->wb + (o % tl->wb / tl->vw * n->a.k + t) * tl->vw +
                   o % tl->vw;
        return blk * n->a.k * tl->wb + t * width + o % tl->wb;
    }
    return o * n->a.k + t;
}

/* Targets whose matmul blocks of several rows are exactly gemm_wb wide (gemm_rb 0): such a
 * block for n (8 rows or more, gemm_wb columns or more), true; else false. */
static bool gemm_wide(const Tuning *t, const Node *n, Tile *tl)
{
    if (t->gemm_rb || t->gemm_wb <= t->max_wb || n->a.m < 8 || n->a.n < t->gemm_wb)
        return false;
    tl->wb = t->gemm_wb;
    tl->rb = t->max_acc * t->vl / t->gemm_wb;
    tl->vw = t->vl;
    return true;
}

/* Whether a row of wo columns, interior [lo, hi) (every tap inside the input), goes in
 * strips of wb with the border ones clipped (Tile.clip): a strip at column 0 when lo > 0
 * and one ending at column wo when hi < wo, the only strips that reach the border, and
 * interior strips between them (or none, the two covering the row). */
static bool clip_strips(int64_t lo, int64_t hi, int64_t wo, int wb)
{
    if (wb > wo || lo > wb || wo - hi > wb || (lo == 0 && hi == wo))
        return false;
    bool covered = wo == wb || (lo > 0 && hi < wo && wo <= 2 * wb);
    return covered || hi - lo >= wb;
}

/* TK_DEPTHWISE over a padded plane: output rows a block (emit/kernel_conv2d.c,
 * put_plane_rows), which read each plane row once; ho rows as evenly split blocks of at
 * most plane_rows_max. gcc 12 -O3, Emerald Rapids, us (old: 2 rows, every tap a load; rows
 * of 7 in the border loop):
 *   x86-64-avx512 (-march=native)  2 rows  4 rows  8 rows  old
 *     3x3 128 @28                   24.3    23.5    22.2   31.3
 *     3x3 96 @56                       -    97.1    93.1  109.1
 *     5x5 72 @28                       -    36.2    33.1   44.9
 *   x86-64-avx2 (-march=x86-64-v3)
 *     3x3 96 @56                   120.0   114.4   113.8  120.1
 *     5x5 672 @7                    86.9    78.1    71.6  168.2
 *   generic (-march=native; -march=x86-64: 4 rows as the old 2, 242 us on 3x3 96 @56)
 *     3x3 96 @56                   123.9   110.5   105.4  125.2
 * generic stays at 2: it is also what a scalar core runs (a Cortex-M4 build without
 * --target: 4 rows took mobilenet's block a 280-byte frame at -O2, over the firmware's
 * 256), and on x86 without FMA (-march=x86-64) 4 rows gain nothing. */
static const int plane_rows_max[TARGET_COUNT] = {
    [TARGET_GENERIC] = 2, [TARGET_X86_64_AVX2] = 8, [TARGET_X86_64_AVX512] = 8,
};

static int plane_rows(Target t, int64_t ho)
{
    int m = t >= 0 && t < TARGET_COUNT && plane_rows_max[t] ? plane_rows_max[t] : 1;
    int64_t blocks = (ho + m - 1) / m;
    return ho < 1 ? 1 : (int)((ho + blocks - 1) / blocks);
}

static void choose_tile(const Graph *g, Node *n)
{
    const Tuning *t = &tunings[g->target >= 0 && g->target < TARGET_COUNT ? g->target : 0];
    Tile *tl = &n->a.tile;
    memset(tl, 0, sizeof *tl);
    const Shape *y = &val(g, n->out)->shape;
    if (n->op == IR_CONV2D) {
        const Window *w = &n->a.conv;
        const Shape *x = &val(g, n->in[0])->shape;
        int64_t ci = x->dim[1], co = y->dim[1], cog = co / w->groups;
        if (w->groups == ci && co == ci) {
            tl->kind = TK_DEPTHWISE;
            tl->rb = 1;
            tl->wb = t->vl;
            tl->chains = t->chains > 1; /* x86: rows in overlapping strips of one vector */
            /* rows of 4 columns or more: each channel's input is first copied into a
             * zero-padded plane (up to 64 KiB, workspace; split by column phase where the
             * stride along the rows is more than 1), so every column is interior, read
             * contiguously, and a block of output rows shares its input rows' loads. Rows
             * narrower than a vector go in strips of half or a quarter of one (gcc
             * vectorises them with the narrower registers), which on x86-64-avx512 beat
             * the border loop they took before: 5x5 240 @14 150 -> 51 us, 5x5 672 @7 163
             * -> 73, 3x3 256 @8 15.0 -> 9.0 */
            int hp, wp;
            /* x86, outputs of at most RC_DW_LANES_MAX_PIXELS pixels a channel: blocks of
             * channels as the vector lanes (emit/kernel_conv2d.c, emit_depthwise_lanes),
             * weights packed [co / lanes][kh][kw][lanes], instead of a channel at a time,
             * which cost about as much a channel on such planes as on 8 x 8 (relayc run
             * --profile, gcc 12 -O3 -march=native, x86-64-avx512, Emerald Rapids, us:
             * EfficientNet-B0 at 64x64, 5x5 672 @4x4 41.6 -> 10.6, 480 @4x4 31.7 -> 7.9,
             * 672 @2x2 18.8 -> 4.4, 1152 @2x2 7.3 -> 4.8, but 240 stride 2 from 8x8 to 4x4
             * 7.8 -> 8.9; MobileNetV3-small, 5x5 240 @4x4 13.6 -> 2.3; the models (bench/run)
             * 1884 -> 1745 and 556 -> 514) */
            int64_t pix = y->dim[2] * y->dim[3], cb = depthwise_lanes(co);
            int64_t in = x->dim[2] * x->dim[3], taps = (int64_t)w->kh * w->kw;
            if ((g->target == TARGET_X86_64_AVX2 || g->target == TARGET_X86_64_AVX512) &&
                pix <= RC_DW_LANES_MAX_PIXELS && cb && taps <= 25 &&
                (in + pix) * cb * (int64_t)sizeof(float) <= 65536) {
                tl->lanes = (int)cb;
                tl->wb = (int)cb;
                tl->packed = 1; /* [co / lanes][kh][kw][lanes] */
                tl->scratch = (in + pix) * cb * (int64_t)sizeof(float);
                return;
            }
            int64_t plane = depthwise_plane_f32(g->target, w, y->dim[2], y->dim[3], &hp, &wp);
            int sv = t->vl;
            while (sv > 4 && sv > y->dim[3])
                sv /= 2;
            if (t->row_buffer && y->dim[3] >= sv && plane <= 16384) {
                tl->wb = sv;
                tl->rows = plane_rows(g->target, y->dim[2]);
                tl->scratch = plane * (int64_t)sizeof(float);
            }
            return;
        }
        tl->packed = 1;
        /* interior columns (every kx tap inside the input), as emit/kernel_conv2d.c */
        int64_t lo = (w->pl + w->sw - 1) / w->sw;
        int64_t top = x->dim[3] - 1 - (int64_t)(w->kw - 1) * w->dw + w->pl;
        int64_t hi = top < 0 ? 0 : top / w->sw + 1;
        hi = hi > y->dim[3] ? y->dim[3] : hi;
        int64_t cols = hi > lo ? hi - lo : 0;
        bool flat = w->kh == 1 && w->kw == 1 && w->sh == 1 && w->sw == 1 && w->pt == 0 &&
                    w->pl == 0 && y->dim[2] == x->dim[2] && y->dim[3] == x->dim[3];
        if (flat)
            cols = y->dim[2] * y->dim[3]; /* flattened into one row */
        int64_t wp = (y->dim[3] - 1) * w->sw + (int64_t)(w->kw - 1) * w->dw + 1;
        /* x86, rows that a block of 2 vectors of channels covers (6 columns on AVX2), or
         * half or more of them border pixels
         * (ResNet-18's 4x4 and 2x2 outputs): the input is first copied into the workspace
         * with the columns its rows read zero-padded (Tile.rows), so every pixel is
         * interior (the tap rows still clipped per output row), and blocks of channels x
         * the whole row replace the border function's pixel at a time. Measured (us, gcc
         * 12 -O3, Zen 3), 3x3 convs before -> after: 128 -> 256 stride 2 to 4x4 227 -> 143,
         * 64 -> 64 stride 2 to 6x6 120 -> 28, 64 -> 64 at 6x6 38 -> 25, 96 -> 96 at 5x5
         * 68 -> 37; slower at 7 and 8 columns: 64 -> 64 at 7x7 42 -> 60, 32 -> 128 at 7x7
         * 35 -> 61 (7 columns: no block of 2 vectors), 128 -> 128 at 8x8 218 -> 277, 32 -> 64
         * stride 2 to 8x8 30 -> 40. x86-64-avx512 (Zen 5, ResNet-18 at 64x64, relayc run
         * --profile, us), where every pixel of these went through the border function
         * before: 128 -> 128 at 8x8 148 -> 126, 128 -> 256 stride 2 to 4x4 264 -> 84,
         * 256 -> 256 at 4x4 325 -> 208, 256 -> 512 stride 2 to 2x2 751 -> 138, 512 -> 512
         * at 2x2 510-637 -> 252-254 */
        int64_t xc = x->dim[0] * ci * x->dim[2] * wp;
        /* the blocks' registers: Tuning.rows_regs (x86-64-avx512 too, whose other conv
         * blocks do not follow bcast_fits) */
        Tuning rt = *t;
        rt.regs = t->rows_regs;
        const Tuning *r = &rt;
        if (r->regs && !flat && cog >= 2 * r->vl && cols < y->dim[3] &&
            (2 * cols <= y->dim[3] || bcast_fits(r, (int)(2 * y->dim[3]), 2, 0)) && xc <= 16384) {
            double best = -1;
            for (int rb = r->vl; rb <= 4 * r->vl; rb += r->vl)
                for (int wb = 1; wb <= y->dim[3] && wb <= 16; wb++) {
                    int acc = rb / r->vl * wb;
                    if (!bcast_fits(r, acc, rb / r->vl, 0))
                        continue;
                    double sc = use(cog, rb, false) * use(y->dim[3], wb, true) *
                                bcast_eff(r, acc, (double)rb / r->vl + wb);
                    if (sc > best + 1e-9) {
                        best = sc;
                        tl->rb = rb, tl->wb = wb;
                    }
                }
            tl->kind = TK_CONV_OC;
            tl->vw = r->vl;
            tl->chains = r->chains;
            tl->rows = 1;
            /* with Tuning.streams, weights [blocks][kh][kw][ci][rb]: a block reads kh * kw
             * streams side by side (the core's prefetchers run several; one sequential
             * stream reads 12.9 GB/s here, eight 22.4), the sums still in (ic, ky, kx)
             * order. ResNet-18 64x64 (relayc run --profile, Zen 3): 512 -> 512 at 2x2
             * 842-944 -> 507-526 us, 256 -> 256 at 4x4 408-416 -> 337-350, the model
             * 7661 -> 6156 */
            tl->streams = r->streams;
            tl->scratch = xc * (int64_t)sizeof(float);
            /* the whole image in 2 vectors of channels or more: a block of every row, so
             * each weight is read once a call (from memory: ResNet-18's 512 -> 512 at 2x2
             * streams 9.4 MB of weights that stay in no cache between calls) */
            int64_t px = y->dim[2] * y->dim[3];
            if (y->dim[2] > 1 && bcast_fits(r, (int)(2 * px), 2, 0)) {
                tl->rb = 2 * r->vl, tl->wb = (int)y->dim[3];
                tl->rows = (int)y->dim[2];
            }
            return;
        }
        bool row1 = x->dim[2] == 1 && y->dim[2] == 1 && w->kh == 1;
        if (row1 && wino_tile(t, g, n, tl))
            return;
        if ((row1 || n->a.phase) && w->sw == 1 && !flat &&
            oc_register_block(t, g->target, cog, cols, tl))
            return;
        /* row-buffered: strided convs, and convs with fewer channels than a vector, when
         * the buffer (floats: cig * kh * padded row, in the workspace) stays within 64 KiB,
         * close to the core */
        int64_t xd = ci / w->groups * w->kh * ((wp + w->sw - 1) / w->sw * w->sw);
        if (t->row_buffer && !flat && (w->sw > 1 || cog < t->vl) && xd <= 16384) {
            tl->kind = TK_CONV;
            tl->rows = 1;
            tl->full = t->full_last;
            tl->scratch = xd * (int64_t)sizeof(float);
            if (rows_block(t, cog, y->dim[3], tl))
                return;
            pick_block(t, cog, y->dim[3], true, 1, t->max_wb, w->sw > 1, &tl->rb, &tl->wb);
            tl->vw = t->regs ? t->vl : 0;
            simd_block(t, cog, y->dim[3], true, tl);
            tl->wr = rest_width(t, y->dim[3], tl->rb, tl->wb, t->vl / 2);
            return;
        }
        /* vectorised over channels: stride 1 where the target says so (any wb fits a
         * row, as the vector is along the channels: the interior is covered with little
         * overlap; measured on AVX-512, 14 accumulators are the most gcc keeps in
         * registers), and strided convs */
        bool any = t->oc_wb && !flat;
        /* an interior narrower than a vector: no strip of columns fits it (every pixel
         * would take the border path), so the vector is along the channels; its blocks
         * are too small for the peel rule. On targets with Tuning.regs also a 1x1 conv
         * over fewer pixels than a vector (flattened), whose blocks then read each weight
         * once a call instead of once a pixel, with Tuning.streams each vector of a block's
         * channels a stream of its own ([blocks][rb / vl][ci][vl]): EfficientNet-B0 64x64
         * (relayc run --profile, Zen 3) 320 -> 1280 at 2x2 239 -> 159 us, 1152 -> 320
         * 226 -> 134, the model 4100-4300 -> 3240-3470. Also on targets that vectorise
         * convs over channels (Tuning.oc_wb: x86-64-avx512), where such blocks keep the
         * peel rule (a block of 32 channels x 1 pixel stayed scalar: MobileNetV3's 1x1
         * convs on one pixel 0.6-3.2 -> 4-40 us; a block of 16 columns instead, 15 of
         * them unused, ran them before and still does). Zen 5, 64x64 inputs (relayc run
         * --profile): SqueezeNet's 512 -> 1000 at 3x3 211 -> 41 us, 512 -> 64 at 3x3 18 ->
         * 2.6; the models (gcc -O3 -march=native) SqueezeNet 440 -> 226 us, ShuffleNetV2
         * 133 -> 92, EfficientNet-B0 840-910 -> 681-689, MobileNetV3-small 165 -> 151 */
        bool narrow = (!flat || t->regs || t->oc_wb) && cols < t->vl;
        if ((any || narrow || w->sw > 1) && cog >= t->vl) {
            double best = -1;
            int max_rb = t->regs ? 4 * t->vl : any || narrow || !t->peel_rule ? 2 * t->vl : t->vl;
            for (int rb = t->vl; rb <= max_rb; rb += t->vl)
                for (int wb = 1; wb <= 16; wb++) {
                    double acc = (double)rb / t->vl * wb, loads = (double)rb / t->vl + wb, sc;
                    if (t->regs) { /* a broadcast input value a loop (bcast_fits) */
                        if (!bcast_fits(t, (int)acc, rb / t->vl, 0))
                            continue;
                        sc = use(cog, rb, false) * use(cols, wb, true) * bcast_eff(t, acc, loads);
                        if (sc > best + 1e-9) {
                            best = sc;
                            tl->rb = rb, tl->wb = wb;
                        }
                        continue;
                    }
                    if (any && acc > t->oc_wb)
                        continue;
                    if (!any && (acc > t->max_acc || (t->peel_rule && (!narrow || flat) && rb * wb < 72)))
                        continue;
                    /* Tuning.clip: strips of wb cover the whole row, the first and last
                     * clipped (Tile.clip), where only those two reach the border and the
                     * columns between them are interior strips. 3x3 32 -> 32 at 56x56
                     * (gcc 12 -O3, Emerald Rapids): 385 -> 364 us, as 4 strips of 14 replace
                     * 3 strips, one overlapping, and 2 border pixels a row */
                    bool clip = any && t->clip && clip_strips(lo, hi, y->dim[3], wb);
                    sc = use(cog, rb, false) * use(clip ? y->dim[3] : cols, wb, true) *
                         (any ? acc / (acc + 2.0) * (1.0 + 0.01 * acc / loads) : eff(t, acc, loads));
                    /* measured on AVX-512 (3x3 32 -> 32 and 64 -> 64 @56x56): 16 channels x
                     * 14 columns run 3-4% faster than 32 x 6, though they load more operands
                     * per multiply-add and overlap their last strip */
                    if (any && rb > t->vl)
                        sc *= 0.95;
                    if (sc > best + 1e-9) {
                        best = sc;
                        tl->rb = rb, tl->wb = wb;
                        tl->clip = clip;
                    }
                }
            if (best > 0) {
                tl->kind = TK_CONV_OC;
                tl->vw = t->regs ? t->vl : 0; /* the arrays of a column (emit_block_oc) */
                tl->chains = t->chains;
                tl->streams = narrow && flat && t->streams ? 2 : 0;
                return;
            }
        }
        tl->kind = TK_CONV;
        tl->chains = t->chains;
        tl->full = t->full_last;
        if (rows_block(t, cog, cols, tl))
            return;
        pick_block(t, cog, cols, true, 1, t->max_wb, 0, &tl->rb, &tl->wb);
        tl->vw = t->regs ? t->vl : 0;
        simd_block(t, cog, cols, true, tl);
        tl->wr = rest_width(t, cols, tl->rb, tl->wb, t->vl / 2);
        return;
    }
    if (tunable_runtime_b(g, n)) {
        /* b read in place, rows of n: the last columns are a block of their exact width */
        tl->kind = TK_GEMM;
        tl->full = t->full_last;
        if (!gemm_wide(t, n, tl))
            pick_block(t, n->a.m, n->a.n, false, n->a.m >= 4 && t->peel_rule ? 4 : 1, t->max_wb,
                       -1, &tl->rb, &tl->wb);
        tl->wr = n->a.n % tl->wb;
        return;
    }
    if (n->a.m == 1 && t->gemv_rows && (int64_t)n->a.n * n->a.k * 4 > t->gemv_bytes) {
        tl->kind = TK_GEMV;
        tl->rb = t->gemv_rows;
        tl->wb = t->gemv_lanes;
        tl->packed = !n->a.tb;
        if (t->max_floats) { /* generic: rows of SIMD lanes, or one at a time (Tile.sub) */
            tl->rb = GENERIC_SIMD_GEMV_ROWS, tl->wb = GENERIC_SIMD_GEMV_LANES, tl->sub = 1;
        }
        return;
    }
    /* GEMM; with one row, weights stream once in packed order, wb columns at a time */
    tl->kind = TK_GEMM;
    tl->packed = 1;
    tl->full = t->full_last;
    if (n->a.m == 1) {
        double best = -1;
        for (int wb = t->vl; wb <= 8 * t->vl && (!t->max_floats || wb <= t->max_floats);
             wb += t->vl) {
            double acc = (double)wb / t->vl;
            double sc = use(n->a.n, wb, false) * (acc >= t->min_acc ? 1 : acc / t->min_acc);
            if (sc > best) {
                best = sc;
                tl->rb = 1, tl->wb = wb;
            }
        }
        /* with Tuning.streams, a block's columns in arrays of a vector, each array's
         * weights a stream of its own ([n/wb][wb/vl][k][vl]): ResNet-18's 512 -> 1000 (2 MB
         * from memory) 184 -> 107 us (relayc run --profile); 784 -> 128 from L2 unchanged */
        if (t->streams && tl->wb > t->vl)
            tl->vw = t->vl, tl->streams = 1;
    } else {
        /* packed weight panels outgrow L1: each vector of them should feed 4 rows or more
         * (8 with arrays of vl) */
        bool split = t->gemm_wb > t->max_wb && n->a.m >= 8;
        int min_rb = split ? t->gemm_rb : n->a.m >= 4 && t->peel_rule && t->max_acc >= 8 ? 4 : 1;
        if (!gemm_wide(t, n, tl)) {
            pick_block(t, n->a.m, n->a.n, false, min_rb, split ? t->gemm_wb : t->max_wb, -1,
                       &tl->rb, &tl->wb);
            tl->vw = split && tl->wb > t->vl ? t->vl : 0;
            if (!tl->vw) /* (never more rows than m: it pads them by at most 1/16) */
                simd_block(t, n->a.m, n->a.n, false, tl);
        }
    }
    /* a narrower last block instead of zero columns (batch 1 streams every weight it packs) */
    tl->wr = rest_width(t, n->a.n, n->a.m == 1 ? 0 : tl->rb, tl->wb, t->vl);
}

void pack(Graph *g)
{
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        Node *n = &g->nodes[i];
        if ((n->op != IR_CONV2D && n->op != IR_MATMUL) || !tunable(g, n) || n->a.tile.kind)
            continue;
        choose_tile(g, n);
        if (n->a.tile.kind == TK_WINO) {
            pack_wino(g, n);
            continue;
        }
        if (!n->a.tile.packed)
            continue;
        /* the packed tensor: blocks padded with zeros */
        int64_t C = tile_channels(g, n), row = pack_plain_count(g, n) / (C ? C : 1), size;
        if (n->a.tile.kind == TK_CONV || n->a.tile.kind == TK_CONV_OC) {
            int64_t cog = C / n->a.conv.groups, rb = n->a.tile.rb;
            size = n->a.conv.groups * ((cog + rb - 1) / rb) * rb * row;
        } else if (n->a.tile.kind == TK_GEMM) {
            int64_t wb = n->a.tile.wb, nblk = (C + wb - 1) / wb;
            size = ((nblk - 1) * wb + (n->a.tile.wr ? n->a.tile.wr : wb)) * row;
        } else {
            size = C * row;
        }
        /* (no RC_MAX_CONST_BYTES check: the plain weights it replaces are dropped) */
        float *p = xcalloc((size_t)(size ? size : 1), sizeof(float));
        const float *w = g->consts[val(g, n->in[1])->constant].data;
        for (int64_t o = 0; o < C; o++)
            for (int64_t k = 0; k < row; k++) {
                /* plain element (o, k): conv OIHW; matmul [n][k] (tb) or [k][n] */
                float v = n->op == IR_MATMUL && !n->a.tb ? w[k * C + o] : w[o * row + k];
                p[packed_index(g, n, o, k)] = v;
            }
        Shape s = { 1, { size } };
        n->in[1] = graph_add_const_copy(g, DT_F32, &s, p, val(g, n->in[1])->json, n->in[1]);
        free(p);
    }
    remove_dead(g);
}
