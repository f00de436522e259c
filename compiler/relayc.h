/*
 * relayc.h: the internal header of the relayc compiler, one section per file, in
 * pipeline order (read top to bottom):
 *   diag.c buf.c     errors that unwind to one boundary; growing text buffers
 *   tensor_io.c      dtypes, base64, NDArray blobs, params files, .npy
 *   relay_json.c     save_json text -> a table of raw JSON nodes
 *   graph.c          the IR: values and nodes, by index
 *   ir_ops.c         the IR operator table: one row per IrOp (print, MACs, kernel calls)
 *   load.c           Relay Function/Call/Var/Constant/Tuple/Let -> Graph, through the
 *                    Relay operators of ops.c, ops_tensor.c, ops_qnn.c (compiler/ops.h)
 *   passes.c         the pass list: fold-constants, fuse-qnn (ops_qnn.c), fuse (fuse.c),
 *                    pack (pack.c), pack-qnn (pack_qnn.c); layout.c holds the packed
 *                    layouts the pack passes and the emitters share
 *   plan.c           the static memory plan (liveness -> workspace offsets)
 *   verify.c         the IR verifier, run after every stage in builds without NDEBUG
 *   emit/            the C library: header, calls, constants, tuned kernels (emit/emit.h
 *                    is the emitters' own header), the report
 *   runtime/         reference kernels and their parameter structs (params.def), the
 *                    reference interpreter, the libtcc and --cc runners
 * Errors go through diag_fail(), which longjmps to the boundary the caller set up
 * (Diag.jmp); only cmd/ prints and exits.
 */
#ifndef RELAYC_H
#define RELAYC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#include "../runtime/params.h"

#define RELAYC_VERSION "0.1.0"

/* Limits on what a model may ask for, each enforced before any allocation or work it
 * would size; a violation is the usual one-line error naming the limit and its value.
 * Input files:
 *   RC_MAX_FILE_BYTES  model, params or .npy file (read_file; in-memory models too)
 *   RC_MAX_JSON_VALUES JSON values (objects, arrays, strings, numbers, literals) in the
 *                      model, counted by a scan before cJSON parses it: cJSON spends about
 *                      80 bytes on each, so this bounds the parse to about 1.3 GB (relay_json.c)
 *   RC_MAX_NODES       entries of the save_json "nodes" table (relay_json.c)
 *   RC_MAX_FIELDS      fields in one node's "attrs" object (relay_json.c)
 *   JSON nesting       1000 levels, cJSON's CJSON_NESTING_LIMIT (the parser refuses more)
 *   RC_MAX_NAME        bytes in a name: Relay var and function names, params names
 * Tensors:
 *   RC_MAX_RANK        rank of a tensor (types, blobs, params, .npy, every op result)
 *   RC_MAX_ELEMENTS    elements in one tensor, every op result included; below 2^31 so
 *                      every count and index in the emitted kernels fits a C int
 *   RC_MAX_CONST_BYTES bytes of all constants together: inline blobs, params, constants
 *                      made by lowering, and folded results (folding stops at the limit)
 * Work:
 *   RC_MAX_EXPRS       Relay expressions lowered, counting each inlined function call's
 *                      body again (bounds inlining's blow-up: f calls g twice, g calls h
 *                      twice, ...)
 *   RC_MAX_KERNELS     IR nodes (kernel calls) in the lowered graph
 * Expression depth has no limit: lowering is iterative (load.c), and no later stage
 * recurses. */
#define RC_MAX_FILE_BYTES  (4LL << 30)        /* 4 GiB */
#define RC_MAX_JSON_VALUES (16LL << 20)       /* 16777216; a node takes about 6 */
#define RC_MAX_NODES       4000000
#define RC_MAX_FIELDS      1024
#define RC_MAX_NAME        4096
#define RC_MAX_RANK        8
#define RC_MAX_ELEMENTS    ((1LL << 31) - 1)  /* INT32_MAX */
#define RC_MAX_CONST_BYTES (2LL << 30)        /* 2 GiB */
#define RC_MAX_EXPRS       2000000
#define RC_MAX_KERNELS     250000

//
// diag.c: errors that unwind to one boundary
//

/* A diagnostic context. Deep code calls diag_fail(), which formats the message and
 * longjmps to the boundary its caller set with setjmp (Diag.jmp: load_model is one).
 * Only cmd/ prints and exits. */
typedef struct Diag {
    jmp_buf *jmp;           /* where diag_fail() jumps; NULL: abort (a bug) */
    const char *file;       /* file being read, for the message prefix */
    char msg[1024];         /* "FILE: WHERE: WHAT" once failed */
    int code;               /* 0 ok, 2 error */
} Diag;

#if defined(__GNUC__)
#define RC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define RC_NORETURN __attribute__((noreturn))
#else
#define RC_PRINTF(a, b)
#define RC_NORETURN
#endif

RC_NORETURN void diag_fail(Diag *d, const char *fmt, ...) RC_PRINTF(2, 3);
RC_NORETURN void diag_vfail(Diag *d, const char *fmt, va_list ap);
#define unreachable() diag_internal(__FILE__, __LINE__)
RC_NORETURN void diag_internal(const char *file, int line);

/* Checked allocation: aborts the process on out-of-memory (the only abort). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) RC_PRINTF(1, 2);

//
// buf.c: a growing text or byte buffer (every stage writes text through it)
//

typedef struct {
    char *data;             /* stb_ds array; not NUL-terminated until buf_cstr() */
} Buf;

void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) RC_PRINTF(2, 3);
void buf_write(Buf *b, const void *p, size_t n);
size_t buf_len(const Buf *b);
const char *buf_cstr(Buf *b);
void buf_free(Buf *b);

//
// tensor_io.c: dtypes, tensors, base64, NDArray blobs, params files, .npy
//

typedef enum {
    DT_F32,   /* float32: the compute type */
    DT_F64,   /* float64 */
    DT_I8,    /* int8 */
    DT_U8,    /* uint8 */
    DT_I32,   /* int32 */
    DT_I64,   /* int64 */
    DT_BOOL,  /* bool, one byte per element */
    DT_I16,   /* int16: only constants relayc makes (pack_qnn.c); no file holds one */
    DT_COUNT
} DType;

const char *dtype_name(DType t);               /* "float32", ... */
const char *dtype_ctype(DType t);              /* "float", "int8_t", ... */
size_t dtype_size(DType t);                    /* bytes per element */
/* "float32" -> DT_F32; returns false for any other name (float16, bfloat16, ...). */
bool dtype_parse(const char *name, DType *out);
/* Sets of dtypes, as bit masks: the dtypes an operator takes (compiler/ops.c's table). */
#define DTS(t) (1u << (t))
#define DTS_F32 DTS(DT_F32)
#define DTS_FLOAT (DTS(DT_F32) | DTS(DT_F64))
#define DTS_Q8 (DTS(DT_I8) | DTS(DT_U8))                 /* 8-bit quantized data */
#define DTS_QNN (DTS_Q8 | DTS(DT_I32))                    /* the QNN ops' data */
#define DTS_INT (DTS_QNN | DTS(DT_I64))
#define DTS_NUM (DTS_FLOAT | DTS_INT)
#define DTS_ALL (DTS_NUM | DTS(DT_BOOL))
/* The names of the dtypes of set, in DType order, separated by sep ("float32 float64"). */
const char *dtype_set_str(unsigned set, const char *sep, char *buf, size_t len);
/* The integer kernels' type code: 0 int8, 1 uint8, 2 int32; -1 for another dtype. */
int qnn_type_code(DType dt);
/* The range of an integer dtype (bool: 0..1; float types: int64's). */
void dtype_range(DType dt, int64_t *lo, int64_t *hi);
/* An elementwise parameter (clip bound, pad value) of an integer tensor: truncated toward
 * zero and saturated to dt's range, as a C integer value. */
int64_t qnn_int_param(DType dt, double v);

typedef struct {
    int rank;                       /* 0 for a scalar */
    int64_t dim[RC_MAX_RANK];       /* dims; unused entries are 0 */
} Shape;

int64_t shape_numel(const Shape *s);           /* product of dims (1 for rank 0) */
void shape_strides(const Shape *s, int64_t *st); /* st[d]: elements per step of dim d, row-major */
bool shape_eq(const Shape *a, const Shape *b);
/* "[1, 3, 224, 224]" into buf; returns buf. */
char *shape_str(const Shape *s, char *buf, size_t len);

/* A dense tensor in host memory, C order, little-endian. Owns data. */
typedef struct {
    DType dtype;
    Shape shape;
    void *data;                     /* numel * dtype_size bytes (NULL when 0) */
    size_t nbytes;
} Tensor;

void tensor_free(Tensor *t);

/* Standard base64 with '=' padding. Returns false on a bad character or length.
 * *out is malloc'd. */
bool base64_decode(const char *s, size_t len, uint8_t **out, size_t *outlen);

/* Decodes one DLTensor record (TVM's NDArray::Save layout) at p[0..n).
 * On success fills *t (data copied), sets *used to the bytes consumed, returns true.
 * On failure writes a one-line reason into err (no file/place prefix) and returns false. */
bool blob_decode(const uint8_t *p, size_t n, Tensor *t, size_t *used, char *err, size_t errlen);

/* One tensor of a params file. */
typedef struct {
    char *name;
    Tensor t;
} NamedTensor;

/* Decodes a save_param_dict file. *out is a malloc'd array of *count entries. */
bool params_decode(const uint8_t *p, size_t n, NamedTensor **out, int *count,
                   char *err, size_t errlen);
void params_free(NamedTensor *v, int count);

/* .npy (format 1.0-3.0, C order, little-endian, the dtypes above). */
bool npy_decode(const uint8_t *p, size_t n, Tensor *t, char *err, size_t errlen);
/* Encodes as format 1.0; *out is malloc'd. */
void npy_encode(const Tensor *t, uint8_t **out, size_t *outlen);

/* Whole-file helpers. read_file refuses files over RC_MAX_FILE_BYTES.
 * write_file_atomic writes to a temporary name beside path, then renames.
 * write_file_temp is its first half: it writes the whole file under a temporary name
 * beside path (path.tmpXXXXXX, *tmp malloc'd) and leaves the rename to the caller; on
 * failure nothing is left behind and *tmp is NULL. *tmp is set as soon as the file
 * exists, so a signal handler that unlinks *tmp also removes a file being written. */
bool read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen);
bool write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);
bool write_file_temp(const char *path, const void *data, size_t len, char **tmp, char *err,
                     size_t errlen);


//
// relay_json.c: save_json text -> a table of raw JSON nodes
//

typedef struct cJSON cJSON;

/* One entry of the save_json "nodes" table, before any Relay meaning is given to it. */
typedef struct {
    const char *type_key;   /* "" for null; 0.6 names kept as written ("relay.Op") */
    const char *repr;       /* repr_str, decoded repr_b64, or 0.6 global_key; NULL if none */
    size_t repr_len;        /* bytes in repr (repr_b64 may hold NULs) */
    bool repr_owned;        /* repr was decoded from repr_b64 and is ours to free */
    cJSON *attrs;           /* the node's "attrs" object, or NULL */
    cJSON *keys;            /* the "keys" array of a string-keyed map, or NULL */
    int *data;              /* "data" node indices (stb_ds array), checked in range */
} JNode;

/* A loaded save_json document. */
typedef struct {
    const char *file;       /* for messages */
    cJSON *json;            /* the parsed document (owned) */
    JNode *nodes;           /* stb_ds array; nodes[0] is null */
    int root;               /* index of the root node */
    cJSON *b64;             /* "b64ndarrays" array, or NULL */
    const char **b64s;      /* stb_ds array of the blob strings, by index */
    char version[32];       /* attrs.tvm_version ("0.18.0"), or "" */
    int major, minor;       /* parsed version; 0.0 when unknown */
    Diag *d;
} RelayDoc;

/* Parses text (len bytes) into doc. Fails through d on malformed JSON (with the byte
 * offset), a tvm-ffi (0.22+) document, a bad node table or out-of-range indices. */
void relay_doc_load(RelayDoc *doc, const char *text, size_t len, Diag *d);
void relay_doc_free(RelayDoc *doc);

/* True when the file was written by TVM 0.6 (global_key, inline names). */
bool doc_is_v06(const RelayDoc *doc);
/* Node access; every index is range-checked. */
const JNode *doc_node(const RelayDoc *doc, int idx);
/* "nodes[41] (Call nn.conv2d)": a description of a node for messages. */
const char *doc_where(const RelayDoc *doc, int idx, char *buf, size_t len);
RC_NORETURN void doc_fail(const RelayDoc *doc, int idx, const char *fmt, ...) RC_PRINTF(3, 4);
/* The raw string value of field name in node idx's attrs, or NULL when absent. */
const char *doc_field(const RelayDoc *doc, int idx, const char *name);
/* A field that holds a node index: returns the index (0 = null), or 0 when absent. */
int doc_ref(const RelayDoc *doc, int idx, const char *name);
/* An inline integer / double field, with a default when absent. */
int64_t doc_int(const RelayDoc *doc, int idx, const char *name, int64_t dflt);
double doc_double(const RelayDoc *doc, int idx, const char *name, double dflt);
/* A string field that is inline (0.6/0.7, std::string) or a runtime.String ref;
 * returns dflt when absent or null. */
const char *doc_str(const RelayDoc *doc, int idx, const char *name, const char *dflt);
/* The string a runtime.String (or 0.6 inline) node holds. */
const char *doc_string_node(const RelayDoc *doc, int idx);
/* Elements of an Array node (NULL-terminated count in *n); fails if idx is not an Array. */
const int *doc_array(const RelayDoc *doc, int idx, int *n);
/* The integer an IntImm / runtime.BoxInt / BoxBool node holds. */
int64_t doc_intimm(const RelayDoc *doc, int idx);
/* Looks up key in a string-keyed Map/StrMap node; returns the value index or 0. */
int doc_map_get(const RelayDoc *doc, int idx, const char *key);
/* True when type_key matches either the 0.7+ or the 0.6 ("relay."-prefixed) spelling. */
bool doc_is(const RelayDoc *doc, int idx, const char *type_key);


//
// graph.c: relayc's IR. Values (tensors) and nodes (one kernel each), by index.
//

/* Elementwise operations, from runtime/elementwise.def. */
typedef enum {
#define UNARY(kind, name, relay, dtypes, expr) EW_##kind,
#define BINARY(kind, name, relay, dtypes, expr) EW_##kind,
#include "../runtime/elementwise.def"
#undef UNARY
#undef BINARY
    EW_COUNT
} EwKind;

typedef struct {
    const char *name;       /* "relu", "add", ... */
    const char *relay;      /* the Relay operator lowered to it alone, "nn.relu"; "" none */
    const char *expr;       /* C expression over x (and y; parameters p0, p1) */
    int arity;              /* 1 or 2 */
} EwDesc;
extern const EwDesc ew_table[EW_COUNT];

/* IR operations: each is one kernel call in the emitted code. */
typedef enum {
    IR_CONV2D,      /* in: x NCHW, w OIHW, then a.bias and a.ep operands; a.conv, a.tile */
    IR_MATMUL,      /* in: a, b, then a.bias [n] and a.ep operands; a.mm, a.tile */
    IR_POOL2D,      /* in: x NCHW; a.conv (window), a.is_max, a.count_include_pad */
    IR_ADAPTIVE_AVG_POOL2D, /* in: x NCHW */
    IR_SOFTMAX,     /* in: x; a.axis, a.log */
    IR_REDUCE,      /* in: x; a.reduced, a.reduce_kind */
    IR_COPY,        /* in: x; out[i] = x[a.xoff + sum i_d * a.xstride[d]] (transpose, slice) */
    IR_CONCAT,      /* in: x0..xn; a.axis */
    IR_PAD,         /* in: x; a.pad_lo per axis, a.p0 = pad value */
    IR_UNARY,       /* in: x; a.ew, a.p0, a.p1 (also cast: output dtype differs) */
    IR_BINARY,      /* in: x, y (numpy broadcasting); a.ew */
    IR_RESHAPE,     /* in: x; a view: the output shares x's storage */
    /* Integer (QNN) kernels, compiler/ops_qnn.c and runtime/kernels_int8.c. 8-bit operands
     * are read as bytes: value - zero point = (byte ^ a.q.xflip) - a.q.xoff. */
    IR_QCONV2D,     /* in: x NCHW, w OIHW (8-bit), bias int32 [co] [, mult, shift int32 [co]];
                     * a.conv, a.q: int32 accumulator, or requantized when a.q.requant */
    IR_QMATMUL,     /* in: x [m][k], w [n][k] (8-bit), bias, [mult, shift] as IR_QCONV2D;
                     * a.m, a.n, a.k, a.q */
    IR_REQUANTIZE,  /* in: x, izp int32 [c], then mult, shift int32 [c] (a.q.compute 0) or a
                     * multiplier float32/float64 [c] (compute 1, 2); channel axis a.axis
                     * (c == 1: per tensor); a.q */
    IR_QUANTIZE,    /* in: x float32, scale float32 [c], zp int32 [c]; a.axis */
    IR_DEQUANTIZE,  /* in: x integer, scale float32 [c], zp int32 [c]; a.axis */
    /* Indexing and selection, any dtype (kernels_int8.c) */
    IR_TAKE,        /* in: data [b][m][n][i], indices [b][k] (integer); out [b][m][k][i]; a.mode */
    IR_GATHER,      /* in: data, indices (integer, data's rank); out: indices' shape; a.axis */
    IR_WHERE,       /* in: condition (any dtype), x, y (numpy broadcasting of all three) */
    IR_ARGREDUCE,   /* in: x [outer][len][inner]; out int32 [outer][inner]; a.is_max, a.last */
    IR_CUMSUM,      /* in: x [outer][len][inner]; out the same shape; a.exclusive */
    IR_ADAPTIVE_POOL2D, /* in: x NCHW; a.is_max: float max, integer max or (int32) average */
    IR_RESIZE2D,    /* in: x float32 NCHW or NHWC; a.rs (image.resize2d, nn.upsampling) */
    IR_LAYER_NORM,  /* in: x, gamma [len], beta [len] (each read only when a.ln.scale /
                     * a.ln.center); normalised along a.axis (runtime/kernels.c) */
    IR_COUNT
} IrOp;


/* Window parameters of conv2d and pooling (NCHW). */
typedef struct {
    int kh, kw;             /* window */
    int sh, sw;             /* strides */
    int dh, dw;             /* dilation */
    int pt, pl, pb, pr;     /* padding: top, left, bottom, right */
    int groups;             /* conv2d groups (1 for pooling) */
} Window;

/* How an epilogue operand is indexed (fuse.c). The channel is the output channel of a
 * conv2d (axis 1) or the column of a matmul (last axis). */
typedef enum {
    EPB_NONE,               /* a unary step: no operand */
    EPB_CHANNEL,            /* one value per channel */
    EPB_SCALAR,             /* one value */
    EPB_FULL,               /* one value per output element (a residual) */
} EpBroadcast;

/* One elementwise op fused into the epilogue of a conv2d or matmul: the running value v
 * of an output element becomes ew(v, operand), ew(operand, v) when swapped, or ew(v). */
typedef struct {
    EwKind ew;
    int operand;            /* index in the node's inputs; 0 for a unary step */
    EpBroadcast bcast;
    int swap;               /* the operand is the left-hand side (t - v, t / v) */
    float p0, p1;           /* unary parameters (clip bounds, leaky_relu alpha) */
} EpStep;

#define RC_MAX_EPILOGUE 6
typedef struct {
    int n;                  /* steps, applied in order after the sum (and bias) */
    EpStep step[RC_MAX_EPILOGUE];
} Epilogue;

/* The kernel that computes a conv2d or matmul (chosen by the pack pass, fuse.c; emitted by
 * emit/kernel_conv2d.c and emit/kernel_dense.c). */
typedef enum {
    TK_NONE,                /* the reference kernel, rk_conv2d / rk_matmul */
    TK_CONV,                /* direct conv: rb output channels x wb output columns */
    TK_CONV_OC,             /* the same, vectorised over the rb channels (strided convs) */
    TK_DEPTHWISE,           /* groups == channels: one vectorised loop per output row */
    TK_GEMV,                /* one row: rb dot products at a time over weights [n][k] */
    TK_GEMM,                /* rb rows x wb columns over weights packed [n/wb][k][wb] */
    TK_CONV_ROWS,           /* integer conv2d: input rows gathered as int16, rb channels x wb
                             * pixels of dot products (pack_qnn.c) */
    TK_WINO,                /* a 1-D stride-1 conv (one row) as Winograd F(6, 3) over groups
                             * of 3 taps: rb channels x wb tiles of products per point
                             * (layout.c, wino_layout) */
    TK_CONV_F32,            /* integer conv2d computed in float32, exactly (every partial sum
                             * an integer of at most 2^24): per output row, the input rows
                             * it reads as x - zx in floats, split by column phase; rb
                             * channels x wb columns of sums vectorised over the columns
                             * (pack_qnn.c, x86-64-avx2: short dot products, wide rows) */
} TileKind;

typedef struct {
    TileKind kind;
    int rb, wb;             /* register block: rows x columns of accumulators */
    int vw;                 /* TK_GEMM: each row's accumulators as arrays of vw columns
                             * (wb / vw of them; a compiler keeps an array of one vector in
                             * a register, spills a wider one); 0: one array of wb.
                             * TK_CONV_ROWS, TK_GEMV: 1 when the input is buffered as uint8
                             * against int8 weights; integer TK_DEPTHWISE with rows: 1
                             * when the plane and the sums are floats (pack_qnn.c) */
    int wr;                 /* TK_CONV: width of the block after the last full strip (0: a
                             * strip of wb overlapping the one before); TK_WINO: tiles per
                             * chunk of the row (a multiple of wb); TK_GEMM: width of
                             * the last column block when narrower than wb (0: wb);
                             * TK_GEMV on Cortex-M (wb 2): inputs per run of the DSP sums
                             * (pack_qnn.c, dsp_chunk); on x86, requantized: columns per
                             * chunk of sums requantized in a loop of their own (0: each
                             * sum at the end of its block); TK_CONV_F32: a 1x1 conv's pixels
                             * flattened into rows of wr (0: the output's rows) */
    int chains;             /* TK_CONV(_OC) border pixels: independent sums per channel */
    int rows;               /* TK_CONV: the input rows an output row reads are first copied,
                             * padded and split by column phase (stride), into a buffer;
                             * TK_DEPTHWISE: each channel's input into a zero-padded plane,
                             * and (float) the output rows a block (pack.c, plane_rows);
                             * TK_CONV_OC (x86-64-avx2, rows of a few pixels): the input
                             * with the columns its rows read zero-padded, and a block is a
                             * row (1) or every row (the output's height).
                             * Every column is then interior, with contiguous reads */
    int lanes;              /* TK_DEPTHWISE (x86, outputs of at most RC_DW_LANES_MAX_PIXELS
                             * pixels a channel): blocks of `lanes` channels (also wb) are the
                             * vector lanes, their inputs copied into a zero-padded plane
                             * with the channels innermost (depthwise_lanes) */
    int streams;            /* the packed weights are read as several streams side by side
                             * (pack.c): TK_CONV_OC 1, [groups][blocks][kh][kw][ci/groups]
                             * [rb] (a stream per tap), 2, [groups][blocks][rb/vw][kh][kw]
                             * [ci/groups][vw] (also per array of vw channels); TK_GEMM of
                             * one row, [n/wb][wb/vw][k][vw] (a stream per array of vw
                             * columns) */
    int packed;             /* the weights are re-laid out (the reference interpreter runs
                             * the graph before the pack passes) */
    int64_t scratch;        /* bytes of workspace the kernel works in during its call (row
                             * buffers), placed by plan.c like an intermediate live for the
                             * node's step alone; 0: none */
    int full;               /* TK_CONV: a group's last channel block runs the block of rb
                             * (its packed channels are zeros) and stores its channels;
                             * TK_GEMM: the rows after the last full block of rb run that
                             * block again on the last rb rows (overlapping). No block
                             * narrower than rb, which a compiler may unroll unvectorised */
    int clip;               /* TK_CONV_OC: the border columns go in strips of wb too, the
                             * first at column 0 and the last ending at the last column,
                             * their taps outside the input read as zeros (no border
                             * pixels, no overlapping strip where wb divides the width) */
    int sub;                /* TK_CONV(_ROWS), TK_GEMM, TK_GEMV, --target generic: the block of rb
                             * rows runs as one where the emitted C's RC_SIMD is 1 (a core
                             * with vector registers), else in passes of `sub` rows (scalar
                             * cores, where the accumulators are arrays on the stack); 0:
                             * always as one */
} Tile;

/* Operation attributes; which members are meaningful depends on the IrOp (see above). */
typedef struct {
    Window conv;            /* IR_CONV2D, IR_POOL2D */
    int is_max;             /* IR_POOL2D: max (1) or average (0) */
    int count_include_pad;  /* IR_POOL2D average */
    int ta, tb;             /* IR_MATMUL: a stored [k][m], b stored [n][k] */
    int batch, m, n, k;     /* IR_MATMUL sizes */
    int64_t sa, sb;         /* IR_MATMUL batch strides in elements (0 = broadcast) */
    int axis;               /* IR_SOFTMAX, IR_CONCAT */
    int log;                /* IR_SOFTMAX: log_softmax */
    int reduced[RC_MAX_RANK]; /* IR_REDUCE: axes reduced (1) or kept (0) */
    int reduce_kind;        /* IR_REDUCE: 0 sum, 1 mean, 2 max, 3 min */
    int64_t xstride[RC_MAX_RANK]; /* IR_COPY: input stride per output axis */
    int64_t xoff;           /* IR_COPY: input offset */
    int64_t pad_lo[RC_MAX_RANK];  /* IR_PAD: padding before each axis */
    EwKind ew;              /* IR_UNARY, IR_BINARY */
    float p0, p1;           /* IR_UNARY parameters (clip bounds, alpha); IR_PAD value */
    struct {                /* the QNN kernels (see IR_QCONV2D ...) */
        int xflip, xoff;    /* 8-bit data: 0x80 and 128 + zp (int8), or 0 and zp (uint8) */
        int wflip, woff;    /* 8-bit weights, the same */
        int requant;        /* IR_QCONV2D / IR_QMATMUL: requantize epilogue (mult, shift) */
        int rounding;       /* 0 UPWARD, 1 TONEAREST */
        int compute;        /* IR_REQUANTIZE: 0 int64 fixed point, 1 float32, 2 float64 */
        int32_t yzp;        /* output zero point */
        int32_t ylo, yhi;   /* requant epilogue, 8-bit output: the clip bounds (the type's
                             * range, or narrower with a following clip folded in) */
        int ztab;           /* a specialised kernel's zero-point table: its index in the node's
                             * inputs, or 0 (pack_qnn.c) */
    } q;
    int bias;               /* IR_CONV2D, IR_MATMUL: index in the node's inputs of a bias per
                             * channel, where the sum starts (conv2d) or added first; 0: none */
    Epilogue ep;            /* IR_CONV2D, IR_MATMUL: elementwise ops fused after the sum */
    Tile tile;              /* IR_CONV2D, IR_MATMUL: the tuned kernel, or TK_NONE */
    int phase;              /* IR_CONV2D: one output phase of a strided conv2d_transpose
                             * (ops_tensor.c), for the pack pass's choice of kernel */
    int mode;               /* IR_TAKE, IR_GATHER: out-of-range indices (GatherParams.mode) */
    int last;               /* IR_ARGREDUCE: select_last_index */
    int exclusive;          /* IR_CUMSUM: exclusive scan */
    struct {                /* IR_RESIZE2D: as Resize2dParams (runtime/params.def) */
        int method, coord, rounding, exclude, nhwc, intdiv;
        float alpha;
    } rs;
    struct {                /* IR_LAYER_NORM */
        int scale, center;  /* multiply by gamma, add beta */
        float eps;
    } ln;
} Attrs;

typedef enum {
    VAL_TEMP,               /* computed by a node */
    VAL_INPUT,              /* a runtime input of the model */
    VAL_CONST,              /* a constant (Graph.consts) */
} ValueKind;

typedef struct {
    ValueKind kind;
    DType dtype;
    Shape shape;
    int producer;           /* VAL_TEMP: the node that writes it; else -1 */
    int input;              /* VAL_INPUT: position among the runtime inputs; else -1 */
    int constant;           /* VAL_CONST: index into Graph.consts; else -1 */
    const char *name;       /* Relay name (inputs, bound params), or NULL */
    int json;               /* JSON node it came from, for messages */
} Value;

/* A Relay call an IR node computes (its provenance). */
typedef struct {
    int json;               /* the relay.Call's index in the JSON nodes table */
    const char *op;         /* its operator, "nn.bias_add" (NULL: none) */
} Source;

typedef struct {
    IrOp op;
    int *in;                /* stb_ds array of value indices */
    int out;                /* the value it writes */
    Attrs a;
    int json;               /* JSON node it came from (a Call) */
    const char *relay_op;   /* the Relay operator it implements, for comments */
    Source *src;            /* stb_ds: every Relay call it computes, its own first; a pass
                             * that fuses one node into another appends the sources */
} Node;

typedef struct {
    Value *values;          /* stb_ds */
    Node *nodes;            /* stb_ds, in execution order */
    Tensor *consts;         /* stb_ds; owned */
    int *inputs;            /* stb_ds: runtime input values, parameter order */
    int *outputs;           /* stb_ds: output values, result order */
    const char *function;   /* name of the function compiled */
    char version[32];       /* tvm_version of the file */
    int64_t const_bytes;    /* bytes of every constant added so far (RC_MAX_CONST_BYTES) */
    int target;             /* the Target the pack pass tunes kernels for (relayc --target) */
} Graph;

int graph_add_value(Graph *g, ValueKind kind, DType dt, const Shape *shape, int json);
int graph_add_const(Graph *g, Tensor t, int json); /* takes ownership of t; returns a value */
/* The same for a constant made from value from (packed, folded weights): it keeps from's
 * JSON node and parameter name. */
int graph_add_const_from(Graph *g, Tensor t, int from);
/* A constant of type dt and shape s with a copy of data, from value from (-1: none; else
 * json is from's). */
int graph_add_const_copy(Graph *g, DType dt, const Shape *s, const void *data, int json, int from);
/* True when `more` bytes of constants still fit under RC_MAX_CONST_BYTES. Callers check
 * before they allocate a constant. */
bool graph_const_fits(const Graph *g, int64_t more);
/* Adds a node computing a new VAL_TEMP of the given type; returns the value index. */
int graph_add_node(Graph *g, IrOp op, const int *in, int nin, const Attrs *a, DType dt,
                   const Shape *shape, int json, const char *relay_op);
void graph_free(Graph *g);
/* Node into now also computes what node from did: from's sources are appended. */
void graph_merge_sources(Node *into, const Node *from);
/* Frees what a node owns (its inputs and sources), when a pass drops it. */
void graph_node_free(Node *n);
/* "nodes[133] nn.conv2d + nodes[131] nn.bias_add": a node's sources. */
void graph_sources_text(const Node *n, Buf *b);
/* The value whose storage v shares (follows IR_RESHAPE chains). */
int graph_storage_root(const Graph *g, int v);
/* Writes a stable text form of the graph. */
void graph_print(const Graph *g, FILE *f);
/* "%t12:float32[1, 6, 14, 14]": one value as the dump shows it. */
void graph_print_value(const Graph *g, int v, FILE *f);

//
// ir_ops.c: the IR operator table, one row per IrOp
//

/* Who writes the code of a kernel call. */
typedef enum {
    KG_LIBRARY,             /* a section of runtime/kernels.c or kernels_int8.c */
    KG_ELEMENTWISE,         /* a loop nest for this node, from elementwise.def (emit.c) */
    KG_CONV2D,              /* tuned kernels for this node (Attrs.tile): emit/kernel_conv2d.c */
    KG_DENSE,               /* emit/kernel_dense.c */
    KG_QCONV2D,             /* emit/kernel_qconv.c */
    KG_QDENSE,              /* emit/kernel_qconv.c */
    KG_POOL2D,              /* float pooling on x86 targets: emit/kernel_pool.c */
} KernelKind;

/* Every kernel parameter struct (runtime/params.def), a member named as its type. */
typedef union {
#define PARAMS(T) T T;
#define FIELD(T, type, name)
#define ARRAY(T, type, name)
#define END(T)
#include "../runtime/params.def"
#undef PARAMS
#undef FIELD
#undef ARRAY
#undef END
} KParams;

#define RC_MAX_KARGS 6
/* One kernel call of a node. A tuned node (KG_CONV2D ...) still names its library kernel
 * and fills its parameters: the reference interpreter runs that one. */
typedef struct {
    KernelKind kind;
    const char *kernel;     /* the library kernel, "rk_pool2d" (its section's name) */
    const char *params;     /* its parameter struct type, "Pool2dParams" */
    KParams p;
    int arg[RC_MAX_KARGS];  /* the inputs it takes, positions in the node's inputs (-1:
                             * NULL); the output is the node's, passed last */
    int narg;               /* -1: every input of the node (generated kernels) */
    bool bytes;             /* an integer kernel: pointers are passed as void pointers */
} KCall;

typedef struct {
    const char *name;       /* "pool2d" */
    /* the attrs, printed after the operands in a dump (NULL: none) */
    void (*print)(const Graph *g, const Node *n, FILE *f);
    /* multiply-accumulates of the node (NULL: 0) */
    int64_t (*macs)(const Graph *g, const Node *n);
    /* appends the kernel calls that compute the node to *out (stb_ds), in order */
    void (*calls)(const Graph *g, const Node *n, KCall **out);
    bool view;              /* no code: the output shares the input's storage */
} IrOpDesc;

extern const IrOpDesc ir_ops[IR_COUNT];
/* Aborts when an IrOp has no complete row (a build mistake, caught at start-up). */
void ir_ops_check(void);
int64_t ir_macs(const Graph *g, const Node *n);
/* The calls of node n (stb_ds array; arrfree it). */
KCall *ir_calls(const Graph *g, const Node *n);
/* "pool2d", "unary.relu": the op of a node, for reports. */
const char *ir_node_name(const Node *n, char *buf, size_t len);

//
// load.c: a model file (and params file) -> Graph
//

typedef struct {
    const char *model_path;     /* the save_json file (also the name in messages) */
    const char *params_path;    /* a save_param_dict file, or NULL */
    const char *function;       /* function of a module to compile; NULL: main */
    /* In-memory contents (fuzzers, embedders): when model_data / params_data is not NULL
     * it is read instead of the file, and the path only names it in messages. */
    const uint8_t *model_data, *params_data;
    size_t model_len, params_len;
} LoadOptions;

/* One Relay operator call site, for `relayc info`. */
typedef struct {
    const char *op;             /* its name; in unsupported: "OP on DTYPE" for a dtype OP lacks */
    int json;
    unsigned takes;             /* unsupported "OP on DTYPE": the dtypes OP takes (DTS_*) */
} OpUse;

/* What `relayc info` reports besides the graph. */
typedef struct {
    char version[32];
    const char *function;       /* "main", a global symbol, or "(function)" */
    OpUse *calls;               /* stb_ds: every reachable op call */
    OpUse *unsupported;         /* stb_ds: the calls relayc cannot compile */
    int64_t const_count, const_bytes;
} ModelInfo;

/* Reads and lowers a model. Returns false (message in d->msg) on error. When the model
 * uses unsupported operators, info->unsupported lists them all and the graph is empty. */
bool load_model(const LoadOptions *o, Graph *g, ModelInfo *info, Diag *d);
void model_info_free(ModelInfo *info);


//
// ops.c: the Relay operators relayc compiles (the lowering's own types and helpers are in
// compiler/ops.h, which load.c and the ops*.c files share)
//

/* A comma-separated list of every supported Relay operator. */
const char *relay_op_list(void);
/* Operator i of the table (i from 0): its Relay name and the dtypes it takes (DTS_*);
 * false past the last. */
bool relay_op_at(int i, const char **name, unsigned *dtypes);

//
// runtime/reference.c: the reference interpreter
//

/* Evaluates one node: in[k] points to the data of input k, out to the output's. */
void ref_eval(const Graph *g, const Node *n, const void *const *in, void *out);
/* Runs the whole graph; inputs in runtime-input order, outputs in result order. */
void ref_run(const Graph *g, const void *const *inputs, void *const *outputs);
/* Strides of an input of shape s broadcast to rank r (0 on broadcast axes). */
void ref_bcast_strides(const Shape *s, int r, int64_t *st);
/* runtime/reference_qnn.c: an elementwise node whose operands are all int8, uint8 or
 * int32, evaluated exactly; false when n is not one. */
bool ref_int_elementwise(const Graph *g, const Node *n, const void *const *in, void *out);

//
// passes.c: graph passes
//

/* Evaluates nodes whose inputs are all constants (weight layout transforms, batch_norm
 * scale and shift, reshapes of constants). */
void fold_constants(Graph *g);
/* Removes nodes and constants no output depends on. */
void remove_dead(Graph *g);

typedef struct {
    const char *name;
    void (*run)(Graph *g);
    bool packs;             /* it re-lays out weights for the tuned kernels: `--reference`
                             * runs the graph before it, on plain weights */
} Pass;
extern const Pass passes[];     /* in order; ends with { NULL, NULL } */
/* compiler/ops_qnn.c: folds bias_add and requantize into the integer conv2d / dense that
 * feeds them (the int32 accumulator is then never stored), and an nn.pad of the input zero
 * point into the integer conv2d that reads it (its padding). */
void fuse_qnn(Graph *g);

//
// fuse.c: fusion into conv2d / matmul; pack.c: kernel choice and weight packing
//

/* What the tuned kernels are tuned for; every target's output is portable C99. */
typedef enum {
    TARGET_GENERIC,         /* any C99 compiler: small register blocks */
    TARGET_X86_64_AVX2,     /* gcc/clang -O3 with 256-bit vectors and 16-32 registers */
    TARGET_CORTEX_M,        /* microcontrollers: the smallest blocks and code */
    TARGET_X86_64_AVX512,   /* gcc/clang -O3 with 512-bit vectors and 32 registers */
    TARGET_COUNT
} Target;
extern const char *const target_name[TARGET_COUNT];  /* "generic", "x86-64-avx2", ... */
bool target_parse(const char *name, Target *out);

/* Folds per-channel constant multiply/add (batch_norm, bias_add) into the weights and bias
 * of a conv2d or matmul with constant weights, then fuses the elementwise ops that follow
 * (relu, clip, add of a residual, multiply by a constant, ...) into its epilogue. */
void fuse(Graph *g);
/* pack.c: chooses each conv2d / matmul kernel for g->target and re-lays out its weights. */
void pack(Graph *g);
/* True when node n (conv2d or matmul) can take a tuned kernel, so may be fused. */
bool tunable(const Graph *g, const Node *n);
/* A matmul whose second operand is computed at run time: its tuned kernel reads it in
 * place (TK_GEMM, not packed). */
bool tunable_runtime_b(const Graph *g, const Node *n);

//
// layout.c: the layouts of packed weights and row buffers (pack passes and emitters)
//

/* Channels of a conv2d's output (axis 1) or a matmul's columns: the rows of its packed
 * weights. */
int64_t tile_channels(const Graph *g, const Node *n);
/* A depthwise conv's zero-padded input plane (TK_DEPTHWISE with tile.rows): the *hp rows
 * and *wp columns its ho x wo outputs read, counted from the first padding row and
 * column; returns hp * wp (INT64_MAX when that would not fit an int). */
int64_t depthwise_plane(const Window *w, int64_t ho, int64_t wo, int *hp, int *wp);
/* TK_DEPTHWISE with tile.lanes (x86, float or integer, outputs of at most
 * RC_DW_LANES_MAX_PIXELS pixels a channel): the channels a block (the vector lanes), a
 * divisor of co of 16 to 64 (or co itself, 8 to 64); 0 when there is none. */
#define RC_DW_LANES_MAX_PIXELS 16
int64_t depthwise_lanes(int64_t co);
/* The integer one (TK_DEPTHWISE with tile.rows 1): depthwise_plane's, or with a stride
 * sw > 1 along the rows and float sums, one plane of *hp rows of *pw columns per column
 * phase (the columns c with c % sw == p at c / sw, so that every tap reads contiguous
 * columns; phase p at p * hp * pw). Returns the elements of the larger. */
int64_t qdepthwise_plane(const Window *w, int64_t ho, int64_t wo, int *hp, int *wp, int *pw);
/* An integer one with 8-bit outputs: whether they go through an int32 plane of ho * wo
 * of their own after it (narrowed in a loop of their own) rather than stored straight. */
bool qdepthwise_wide_store(const Window *w, int64_t wo);
int64_t depthwise_plane_f32(Target t, const Window *w, int64_t ho, int64_t wo, int *hp, int *wp);
/* The largest row buffer (bytes, workspace scratch: Tile.scratch) of a TK_CONV_ROWS or
 * widened TK_GEMV kernel (x86 targets and generic). */
#define RC_QROWS_MAX_BYTES 32768
/* The columns of a chunk of a requantized TK_GEMV's sums on x86 (Tile.wr; a multiple of
 * its rb): J x 256 int32 sums stay in L1 until their requantize. */
#define RC_QDENSE_CHUNK 256
/* The largest zero-padded input plane (bytes, workspace scratch) of an integer TK_DEPTHWISE
 * kernel with tile.rows (x86 targets only). */
#define RC_QPLANE_MAX_BYTES 65536
/* TK_CONV_F32: the floats of the row buffer (ci * kh rows, each sw column phases of *pw
 * columns) of a conv2d whose rows are wo outputs wide. */
int64_t qf32_row_floats(const Window *w, int64_t ci, int64_t wo, int *pw);
/* Its largest row buffer (bytes, workspace scratch), and the dot products it takes: those
 * shorter than RC_QF32_MAX_ROW (ci * kh * kw), and longer ones whose row buffer stays
 * within RC_QF32_LONG_BYTES (a part of L1). The others run faster as the int16 dot
 * products of TK_CONV_ROWS (bench/run: the 3x3 convs of 32 and 64 channels at 56, row
 * buffers of 22 and 44 KB, 62 and 79 GOP/s against 47 and 50 in float32), while the 1x1
 * conv of 144 -> 24 channels on 16 x 16 pixels in the quantized MobileNetV2 (9 KB) took 31
 * us in float32 against 101; the 1x1 of 64 at 28, 48 GOP/s in float32 against 46. */
#define RC_QF32_MAX_BYTES 65536
#define RC_QF32_MAX_ROW 128
#define RC_QF32_LONG_BYTES 16384
/* TK_CONV_ROWS: output columns per strip; *segw: the input columns a strip reads. */
int qrows_strip(const Window *w, int64_t ci, int64_t wo, int p, int64_t *segw);
/* TK_CONV_ROWS: where the int32 sums of a strip (co x strip columns) start in its scratch,
 * after rows_bytes of buffered input. */
int64_t qrows_sums_at(int64_t rows_bytes);
/* TK_CONV_ROWS: the bytes of its ring of transposed input rows after the buffer (0: none). */
int64_t qrows_ring_bytes(const Window *w, int64_t ci, int64_t wo, int64_t strip, int64_t segw, int u8);
/* The zero points of a QCONV2D / QMATMUL's input and weights. */
int32_t qpack_zx(const Node *n);
int32_t qpack_zw(const Node *n);
/* Kernels on uint8 input (Tile.vw 1): the byte the zero point zx of an input of type xt is
 * buffered as (x + 128 for int8, x for uint8), -1 when it is not a byte. */
int qrows_u8_pad(DType xt, int32_t zx);
/* The targets of the integer kernels that compilers vectorise (x86, generic; layout.c). */
bool qnn_int_simd(int target);
/* TK_GEMV (x86): rows of x per pass, each buffered k * bytes. */
int qdense_xrows(int target, int64_t m, int64_t k, int bytes);

/* TK_WINO: a conv2d of one row (kh 1, stride and dilation 1, groups 1) as Winograd
 * F(6, 3): the kw taps in groups of 3 (the last zero-padded), each group's 6 outputs of a
 * tile from 8 transformed inputs, y = AT ((G g) . (BT d)). Group g reads the input from
 * column 3g of a tile, which is tile g / 2 further at offset 3 (g % 2) into it: the input
 * is transformed once per offset (class) and shared. The row is computed in chunks of
 * Tile.wr tiles, in the node's scratch (floats):
 *   xt  [nib][xcols][8]: the chunk's input columns, 8 input channels a block (zeros around)
 *   v   [8][cls][nib][vtiles][8]: the transformed input, per point, class and tile
 *   m   [8][chunk][cop]: per point, the products summed over the groups and channels
 * and the weights packed [8][cop / rb][groups][ci][rb] (G g, per point). */
#define RC_WINO_M 6
#define RC_WINO_N 8
typedef struct {
    int groups;             /* ceil(kw / 3) */
    int cls;                /* input offsets in a tile: 1 (one group) or 2 (0 and 3) */
    int tiles;              /* ceil(wo / 6) output tiles */
    int chunk, chunks;      /* tiles per chunk (Tile.wr) and chunks (the last may pad) */
    int vtiles;             /* transformed tiles per chunk and class: chunk + (groups - 1) / 2 */
    int xcols;              /* input columns per chunk in xt */
    int nib;                /* blocks of 8 input channels */
    int cop;                /* output channels padded to Tile.rb */
    int64_t xt, v, m;       /* floats of each part of the scratch */
} Wino;
extern const double wino_bt[RC_WINO_N][RC_WINO_N], wino_g[RC_WINO_N][3], wino_at[RC_WINO_M][RC_WINO_N];
/* The layout of node n's TK_WINO kernel (its tile rb, wb and wr chosen); returns the bytes
 * of scratch it needs. */
int64_t wino_layout(const Graph *g, const Node *n, Wino *w);

//
// pack_qnn.c: kernel choice and weight packing of the integer conv2d / dense
//

/* Picks a specialised kernel (Attrs.tile) for each IR_QCONV2D / IR_QMATMUL whose weights are
 * constant and whose sums provably fit int32, packs the weights and adds the zero-point
 * table; the others keep rq_conv2d / rq_matmul. */
void pack_qnn(Graph *g);


//
// plan.c: the static memory plan
//

typedef enum {
    ST_NONE,                /* not stored (dead) */
    ST_INPUT,               /* the caller's input pointer */
    ST_CONST,               /* a constant */
    ST_WORKSPACE,           /* the caller's workspace at an offset */
    ST_OUTPUT,              /* the caller's output pointer */
} StorageKind;

typedef struct {
    StorageKind kind;
    int64_t offset;         /* ST_WORKSPACE: byte offset in the workspace; ST_INPUT,
                             * ST_OUTPUT: byte offset in that buffer (a slice, see alias) */
    int index;              /* ST_INPUT / ST_OUTPUT: position; ST_CONST: constant index */
    int alias;              /* the value whose storage this one lies inside, deliberately:
                             * a view (reshape, a contiguous slice such as a split) of its
                             * input, or a concatenate operand its producer writes straight
                             * into its place in the result (the value named here); -1:
                             * storage of its own */
} Storage;

/* One workspace buffer: a group of values sharing storage (views, in-place results), or
 * a kernel's scratch (Tile.scratch). */
typedef struct {
    int value;              /* the value that owns it (first written); -1: scratch */
    int node;               /* scratch: the node whose kernel uses it; -1: values */
    int64_t offset, size;   /* bytes */
    int first, last;        /* live range: node steps */
} PlanBuf;

typedef struct {
    Storage *st;            /* per value */
    PlanBuf *bufs;          /* stb_ds */
    int *copy_outputs;      /* stb_ds: outputs the run function copies at the end */
    int64_t *scratch;       /* per node: byte offset of its kernel's scratch (Tile.scratch) */
    int64_t workspace;      /* bytes */
    int64_t peak;           /* the most intermediate bytes live at one step (lower bound) */
    int peak_step;          /* where the peak is */
} Plan;

#define RC_WORKSPACE_ALIGN 16

void plan_memory(const Graph *g, Plan *p);
void plan_free(Plan *p);
/* True when kernel call c of node `node` copies data onto itself under plan p (a slice the
 * plan made a view of its input, a concatenate operand written in place): no code. */
bool plan_self_copy(const Graph *g, const Plan *p, int node, const KCall *c);
/* True when every kernel call of node `node` is such a copy (or it is a view). */
bool plan_elided(const Graph *g, const Plan *p, int node);

//
// verify.c: the IR verifier
//

/* Checks g's invariants (value ids, one producer per value, execution order, the result
 * types kernels assume) and, when p is not NULL, that no two workspace buffers overlap
 * while live and that every value stored inside another on purpose (Storage.alias) lies at
 * its place, in a buffer live as long as it is. False and a one-line reason in err when one does not hold. */
bool ir_verify(const Graph *g, const Plan *p, char *err, size_t len);
/* ir_verify for builds without NDEBUG: an internal error naming the stage when it fails. */
void ir_verify_after(const Graph *g, const Plan *p, const char *stage);


//
// emit/: the C library
//

typedef enum { CONST_C, CONST_BIN } ConstMode;

typedef struct {
    const char *name;       /* C identifier prefix of everything exported */
    ConstMode constants;
    bool jit;               /* one translation unit for libtcc: no #include of NAME.h */
    const char *model_file; /* recorded in the header comment (file name only) */
    const char *options;    /* the options used, recorded in the header */
} EmitOptions;

/* The files of a compiled model, in memory. */
typedef struct {
    Buf header;             /* NAME.h */
    Buf source;             /* NAME.c */
    Buf constants;          /* NAME_constants.c or NAME.bin */
    int64_t constants_size; /* bytes of constant data */
    int64_t io_bytes;       /* bytes of inputs and outputs */
} Emitted;

#define RC_BIN_MAGIC "RELAYCW1"     /* 8 bytes at the start of NAME.bin */
#define RC_BIN_VERSION 1
#define RC_BIN_HEADER 64            /* header bytes; the offset table follows */
#define RC_BIN_ALIGN 64             /* tensors in NAME.bin start at multiples of this */

/* Status codes of NAME_run. */
#define RC_ERR_NULL 1
#define RC_ERR_ALIGN 2
#define RC_ERR_CONSTANTS 3
#define RC_ERR_CHECKSUM 4
#define RC_ERR_BYTE_ORDER 5

void emit_library(const Graph *g, const Plan *p, const EmitOptions *o, Emitted *out);
void emitted_free(Emitted *e);
/* Makes s a valid C identifier (for default names): "input.1" -> "input_1". */
char *c_identifier(const char *s);
/* The checksum NAME.bin carries (over its bytes after the header). */
uint32_t rc_checksum(const uint8_t *p, size_t n);

/* emit/report.c: relayc compile --report (JSON and a text summary) and --report-svg
 * (the memory plan over time). */
void report_json(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out);
void report_text(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out);
void report_svg(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out);


//
// runtime/jit.c: compiling emitted C in memory with libtcc (or, through cc.c, with an
// external C compiler)
//

typedef struct Jit Jit;
/* Compiles one translation unit (emitted with EmitOptions.jit): in memory with libtcc
 * when cc is NULL, else with the compiler command cc (cc_load). NULL and a one-line
 * message in err ("the generated code did not compile with ...: WHY") on failure. */
Jit *jit_compile(const char *source, const char *cc, char *err, size_t errlen);
/* The address of a symbol (a data or function address; copy function pointers with memcpy). */
void *jit_symbol(Jit *j, const char *name);
void jit_free(Jit *j);

//
// runtime/cc.c: the same translation unit built by an external C compiler (--cc)
//

/* Builds source with the compiler command cc: its words split at blanks, "-O2" unless a
 * word starts with -O, then "-shared -fPIC -o LIB SRC -lm". Works in a private directory
 * under $TMPDIR (or /tmp), removed before returning in every case; a SIGINT, SIGTERM or
 * SIGHUP meanwhile kills the compiler, removes the directory and is raised again.
 * Returns the dlopen handle, or NULL and a one-line message in err (the compiler not
 * found, its first error line, dlopen's error). */
void *cc_load(const char *source, const char *cc, char *err, size_t errlen);
/* The best --target for what the compiler command cc compiles for, from its predefined
 * macros (its words, then -dM -E on an empty file, run as cc_load runs it):
 * x86-64-avx512 with __AVX512F__, x86-64-avx2 with __AVX2__ and __FMA__, else generic
 * (also when cc does not run: cc_load then says why). */
Target cc_target(const char *cc);

#endif /* RELAYC_H */
