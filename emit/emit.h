/*
 * emit.h: what the emitters share and nothing else reads: the tuned kernel writers
 * (kernel_conv2d.c, kernel_dense.c, kernel_qconv.c) that emit.c calls, and the conv
 * geometry and helpers they share. The emitters' public API (emit_library, the report)
 * is in compiler/relayc.h.
 */
#ifndef RELAYC_EMIT_H
#define RELAYC_EMIT_H

#include "../compiler/relayc.h"

/* "IND static const TYPE NAME[] = { v0, v1, ... };" (one 0 when n is 0) */
void emit_int_array(Buf *b, const char *ind, const char *type, const char *name, const int64_t *v,
                    int n);

/* emit/kernel_conv2d.c and emit/kernel_dense.c: the tuned kernels. Each writes the static
 * function "static void kIDX_conv2d(const float *x, const float *w, ...inputs, float *y)"
 * (kIDX_dense for a matmul) for node idx, taking the node's inputs in order. */
void emit_conv2d_kernel(const Graph *g, int idx, Buf *b);
void emit_dense_kernel(const Graph *g, int idx, Buf *b);
/* emit/kernel_qconv.c: the specialised integer kernels (pack_qnn.c): the static function
 * "kIDX_qconv2d" / "kIDX_qdense" taking the node's inputs in order, then the output. */
void emit_qconv_kernel(const Graph *g, int idx, Buf *b);
void emit_qdense_kernel(const Graph *g, int idx, Buf *b);
/* emit/kernel_pool.c: float pooling on x86 targets, "kIDX_pool2d(const float *x, float *y)". */
void emit_pool2d_kernel(const Graph *g, int idx, Buf *b);
/* The requantize helper such a kernel calls: 0 none, 1 rq_fpm, 2 rq_fpm_h. */
int emit_qkernel_fpm(const Graph *g, int idx);
/* The epilogue of node n on the float variable v (statements at indent ind): chan is the C
 * expression of the channel, at the flat output index idx. Operand k is named eK. */
void emit_epilogue(const Graph *g, const Node *n, Buf *b, const char *ind, const char *chan,
                   const char *idx);
/* Whether steps [s0, s1) of n's epilogue read operand k per output element (as fK). */
bool epilogue_reads_full(const Node *n, int k, int s0, int s1);
/* An exact C literal of a float ("0x1.8p+2f", "INFINITY", "NAN"). */
void put_float_literal(Buf *b, float f);
/* The macro RC_FMA(s, w, x): s + w * x, as fmaf where the core has a fused multiply-add
 * (__ARM_FEATURE_FMA; the Cortex-M kernels' sums), defined once per file. */
void put_fma_macro(Buf *b);
/* The macro RC_VLOOP, written before a --target generic block's loop over its columns (or
 * rows of weights): under clang for other cores than x86, a pragma that keeps it a loop,
 * which clang then vectorises (AArch64: unrolled first, it ran scalar); else nothing.
 * vloop(g) is "RC_VLOOP " for --target generic, else "". */
void put_vloop_macro(Buf *b);
const char *vloop(const Graph *g);
/* The macro RC_SIMD (1 on cores with vector registers, 0 elsewhere; defined before the
 * file to choose) that --target generic's blocks of Tile.sub read: the prelude of a file
 * with any such block (emit.c), true when node idx has one. */
void put_simd_macro(Buf *b);
bool simd_passes(const Graph *g, int idx);
/* Whether node idx is a float depthwise plane kernel whose strips are twice as wide where
 * RC_WIDE (defined with RC_SIMD) is 1 (--target generic). */
bool plane_wide(const Graph *g, int idx);
/* Whether node idx is an integer depthwise plane kernel whose loops differ where RC_SIMD is
 * 0 (--target generic, kernel_qconv.c). */
bool qdepthwise_split(const Graph *g, int idx);
/* A block of Tile.sub: `whole` (its statements) where RC_SIMD is 1, else the loop
 * "for (s = 0; s < END; s += S)" around `pass` (the same for S rows from row s). */
void put_simd_split(Buf *b, const char *whole, const char *pass, const char *end, int S);
/* A conv2d call site as the conv emitters see it (kernel_conv2d.c, kernel_qconv.c). */
typedef struct {
    int idx;                /* the node */
    int N, CI, HI, WI, CO, HO, WO, KH, KW, SH, SW, DH, DW, PT, PL, G, CIG, COG;
    int RB, WB, NB, LAST;   /* blocks per group; output channels in a group's last block */
    int WR;                 /* the block after the last full strip: WR columns (0: none) */
    int CH;                 /* independent sums per channel in a border pixel */
    int OXLO, OXHI;         /* interior columns: every kx tap inside the input */
    bool strips;            /* the interior is at least wb wide (Tile.clip: the row is) */
    bool clip;              /* Tile.clip (TK_CONV_OC): the border columns in strips of wb,
                             * their taps outside the input read as zeros; no border pixels */
    bool flat;              /* a 1x1 conv over whole rows, as one row: HI = HO = 1 and
                             * WI = WO = the pixels (when conv_init's flatten allows) */
    int U;                  /* integer 1x1 convs: input channels a step (kernel_qconv.c) */
    bool full;              /* Tile.full and LAST < RB: the last block of a group runs the
                             * block of RB over zero-padded channels and stores nr of them */
    int RY;                 /* > 1: a block is every row of the image (TK_CONV_OC with
                             * Tile.rows > 1, kernel_conv2d.c); 0: a row */
    int S;                  /* Tile.sub: rows a pass where RC_SIMD is 0 (0: one pass) */
    int WW;                 /* > 0: where RC_WIDE is 1, strips of WW columns (kN_bR_wWW) run
                             * before those of WB (--target generic, kernel_conv2d.c) */
    long IS, TS, HS;        /* packed weights: floats from one input channel to the next,
                             * from one tap to the next, from one array of a TK_CONV_OC
                             * block's channels to the next (Tile.streams: [h][tap][ic][vw]) */
} Conv;
/* The macros RC_PLOOP (before the loops of a depthwise plane kernel's rows, float and
 * integer: kept loops under clang) and RC_PKEEP (kernel_conv2d.c). */
void put_plane_macros(Buf *b);
/* The definition of RC_CLOOP, which keeps the loop after it a loop under gcc (a block's
 * loop over its columns, which -O3 would unroll completely and may then leave scalar). */
void put_cloop_macro(Buf *b);
/* A depthwise lanes kernel's taps of output pixel (oy, ox) that are inside the input, in the
 * order ky, kx: "IND ACC += wf[tap * cb + c] * SRC[(iy * wi + ix) * cb + c];" each. */
void put_lane_taps(Buf *b, const Conv *c, int oy, int ox, int cb, const char *ind,
                   const char *acc, const char *src);
/* Around the register blocks of --target x86-64-avx2 (push) and after them (pop): no
 * memset / memcpy for the loops that zero or store accumulator arrays (gcc). */
/* The Conv of node idx from its shapes, attributes and tile. */
void conv_init(const Graph *g, int idx, bool flatten, Conv *c);
/* How a direct conv's driver calls its block functions kN_bR (kN_bo: vectorised over the
 * channels, one for every channel block; kN_rR: row-buffered) and border kN_e: args
 * prints the arguments before (blk, oy, ox) ((bt, gb, oy, ox) for kN_rR). */
typedef struct {
    const Conv *c;
    bool oc;
    bool rows;
    void (*args)(const void *ctx, Buf *b, bool rows);
    const void *ctx;
} ConvCalls;
/* The body of a direct conv's driver (from its locals to its loops' end): per row of
 * output, the interior strips and the border pixels; a flattened 1x1, strips outside. */
void put_conv_driver(const ConvCalls *cc, Buf *b);
/* Output rows from oy on whose kh-tap windows read the same rows [*ky0, *ky1) of the
 * input (the rest fall in the padding); returns where that run of rows ends. */
int conv_row_group(int oy, int ho, int hi, int kh, int sh, int dh, int pt, int *ky0, int *ky1);
/* The first lines of a direct conv's block function (blk, oy, ox given): its batch, group
 * and channel block, first output channel oc, channels nr in the block (need_nr), first
 * input row iy0 (kernel_conv2d.c, kernel_qconv.c). */
void put_block_locals(const Conv *c, Buf *b, bool need_nr);
/* A border pixel's function's locals: its first input column ix0 and the taps [kx0, kx1)
 * inside the input, and the loop counters (kernel_conv2d.c, kernel_qconv.c). */
void put_border_locals(const Conv *c, Buf *b);
/* The depthwise border columns, the spans outside [OXLO, OXHI): for each, the loop
 * "for (ox = A; ox < B; ox++) {" and its clipped taps (put_border_taps); body writes the
 * rest of the loop's body, its closing brace included (kernel_conv2d.c, kernel_qconv.c). */
void put_border_spans(const Conv *c, Buf *b, void (*body)(const void *ctx, Buf *b), const void *ctx);
/* Emits, for border column ox, its first input column ix and the taps [kx0, kx1) of a
 * kw-tap window (stride sw, dilation dw, left padding pl) inside a wi-column input. */
void put_border_taps(Buf *b, const char *ind, int sw, int pl, int dw, int wi, int kw);

#endif /* RELAYC_EMIT_H */
