/*
 * relayc.h: the one internal header of the relayc compiler.
 *
 * The pipeline, one file per stage (read top to bottom):
 *   relay_json.c   save_json text -> table of raw JSON nodes
 *   tensor_io.c    base64, NDArray blobs, params files, .npy
 *   lower.c        Relay Function/Call/Var/Constant/Tuple/Let -> Graph
 *   ops.c op_*.c   the operator table: attrs parsing, shape inference
 *   passes.c       simplify, fold constants, fuse
 *   plan.c         static memory plan (liveness -> workspace offsets)
 *   emit/          the C library: header, kernels, constants
 *   runtime/       reference kernels and the libtcc runner
 * Every section below is headed by the file that implements it.
 */
#ifndef RELAYC_H
#define RELAYC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>

#define RELAYC_VERSION "0.1.0"

/* Limits, enforced before any allocation they would size. */
#define RC_MAX_RANK       8            /* tensor rank */
#define RC_MAX_ELEMENTS   (1LL << 31)  /* elements in one tensor */
#define RC_MAX_FILE_BYTES (4LL << 30)  /* model, params or .npy file */
#define RC_MAX_NODES      10000000     /* JSON nodes in one model */
#define RC_MAX_NAME       4096         /* bytes in one name */

//
// diag.c: errors that unwind to one boundary
//

/* A diagnostic context. Deep code calls diag_fail(), which formats the message and
 * longjmps to the boundary set by DIAG_TRY. Only cmd/ prints and exits. */
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
    DT_COUNT
} DType;

const char *dtype_name(DType t);               /* "float32", ... */
const char *dtype_ctype(DType t);              /* "float", "int8_t", ... */
size_t dtype_size(DType t);                    /* bytes per element */
/* "float32" -> DT_F32; returns false for any other name (float16, bfloat16, ...). */
bool dtype_parse(const char *name, DType *out);

typedef struct {
    int rank;                       /* 0 for a scalar */
    int64_t dim[RC_MAX_RANK];       /* dims; unused entries are 0 */
} Shape;

int64_t shape_numel(const Shape *s);           /* product of dims (1 for rank 0) */
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
 * write_file_atomic writes to a temporary name beside path, then renames. */
bool read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen);
bool write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);


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
#define UNARY(kind, name, expr) EW_##kind,
#define BINARY(kind, name, expr) EW_##kind,
#include "../runtime/elementwise.def"
#undef UNARY
#undef BINARY
    EW_COUNT
} EwKind;

typedef struct {
    const char *name;       /* "relu", "add", ... */
    const char *expr;       /* C expression over x (and y; parameters p0, p1) */
    int arity;              /* 1 or 2 */
} EwDesc;
extern const EwDesc ew_table[EW_COUNT];

/* IR operations: each is one kernel call in the emitted code. */
typedef enum {
    IR_CONV2D,      /* in: x NCHW, w OIHW [, bias]; a.conv */
    IR_MATMUL,      /* in: a, b; a.mm */
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
    IR_COUNT
} IrOp;

extern const char *const ir_op_name[IR_COUNT];

/* Window parameters of conv2d and pooling (NCHW). */
typedef struct {
    int kh, kw;             /* window */
    int sh, sw;             /* strides */
    int dh, dw;             /* dilation */
    int pt, pl, pb, pr;     /* padding: top, left, bottom, right */
    int groups;             /* conv2d groups (1 for pooling) */
} Window;

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

typedef struct {
    IrOp op;
    int *in;                /* stb_ds array of value indices */
    int out;                /* the value it writes */
    Attrs a;
    int json;               /* JSON node it came from (a Call) */
    const char *relay_op;   /* the Relay operator it implements, for comments */
} Node;

typedef struct {
    Value *values;          /* stb_ds */
    Node *nodes;            /* stb_ds, in execution order */
    Tensor *consts;         /* stb_ds; owned */
    int *inputs;            /* stb_ds: runtime input values, parameter order */
    int *outputs;           /* stb_ds: output values, result order */
    const char *function;   /* name of the function compiled */
    char version[32];       /* tvm_version of the file */
} Graph;

int graph_add_value(Graph *g, ValueKind kind, DType dt, const Shape *shape, int json);
int graph_add_const(Graph *g, Tensor t, int json); /* takes ownership of t; returns a value */
/* Adds a node computing a new VAL_TEMP of the given type; returns the value index. */
int graph_add_node(Graph *g, IrOp op, const int *in, int nin, const Attrs *a, DType dt,
                   const Shape *shape, int json, const char *relay_op);
void graph_free(Graph *g);
/* The value whose storage v shares (follows IR_RESHAPE chains). */
int graph_storage_root(const Graph *g, int v);
/* Writes a stable text form of the graph. */
void graph_print(const Graph *g, FILE *f);

//
// load.c: a model file (and params file) -> Graph
//

typedef struct {
    const char *model_path;     /* the save_json file */
    const char *params_path;    /* a save_param_dict file, or NULL */
    const char *function;       /* function of a module to compile; NULL: main */
} LoadOptions;

/* One Relay operator call site, for `relayc info`. */
typedef struct {
    const char *op;
    int json;
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
// ops.c: the Relay operators relayc compiles, each lowered to IR nodes
//

/* A lowered Relay expression: one tensor value, or a tuple of other items. */
typedef struct {
    int value;              /* value index; -1 for a tuple */
    int *fields;            /* tuple: stb_ds array of item indices */
} Item;

/* Lowering state shared by load.c and ops.c. */
typedef struct {
    RelayDoc *doc;
    Graph *g;
    Item *items;            /* stb_ds */
    int *tmp;               /* scratch for one lowering function (freed with the loader) */
    int *call_args;         /* scratch: the argument items of the call being lowered */
} Lower;

/* One Relay call being lowered. */
typedef struct {
    int json;               /* the relay.Call node */
    int attrs;              /* its attrs node (0 = null) */
    const char *op;         /* operator name */
    const int *args;        /* argument items */
    int nargs;
} Call;

typedef struct {
    const char *name;                       /* Relay name, "nn.conv2d" */
    int min_args, max_args;
    int (*lower)(Lower *L, const Call *c);  /* checks, infers, adds nodes; returns an item */
} RelayOp;

/* The operator named name, or NULL when relayc does not support it. */
const RelayOp *relay_op_find(const char *name);
/* A comma-separated list of every supported operator. */
const char *relay_op_list(void);
int item_tensor(Lower *L, int value);
int item_tuple(Lower *L, const int *items, int n);


//
// runtime/reference.c: the reference interpreter
//

/* Evaluates one node: in[k] points to the data of input k, out to the output's. */
void ref_eval(const Graph *g, const Node *n, const void *const *in, void *out);
/* Runs the whole graph; inputs in runtime-input order, outputs in result order. */
void ref_run(const Graph *g, const void *const *inputs, void *const *outputs);

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
} Pass;
extern const Pass passes[];     /* in order; ends with { NULL, NULL } */


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
    int64_t offset;         /* ST_WORKSPACE: byte offset */
    int index;              /* ST_INPUT / ST_OUTPUT: position; ST_CONST: constant index */
} Storage;

/* One workspace buffer: a group of values sharing storage (views, in-place results). */
typedef struct {
    int value;              /* the value that owns it (first written) */
    int64_t offset, size;   /* bytes */
    int first, last;        /* live range: node steps */
} PlanBuf;

typedef struct {
    Storage *st;            /* per value */
    PlanBuf *bufs;          /* stb_ds */
    int *copy_outputs;      /* stb_ds: outputs the run function copies at the end */
    int64_t workspace;      /* bytes */
    int64_t peak;           /* the most intermediate bytes live at one step (lower bound) */
    int peak_step;          /* where the peak is */
} Plan;

#define RC_WORKSPACE_ALIGN 16

void plan_memory(const Graph *g, Plan *p);
void plan_free(Plan *p);


//
// emit/: the C library
//

/* A growing text or byte buffer. */
typedef struct {
    char *data;             /* stb_ds array; not NUL-terminated until buf_cstr() */
} Buf;

void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) RC_PRINTF(2, 3);
void buf_write(Buf *b, const void *p, size_t n);
size_t buf_len(const Buf *b);
const char *buf_cstr(Buf *b);
void buf_free(Buf *b);

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


//
// runtime/jit.c: compiling emitted C in memory with libtcc
//

typedef struct Jit Jit;
/* Compiles one translation unit (emitted with EmitOptions.jit). NULL and a message in
 * err on failure. */
Jit *jit_compile(const char *source, char *err, size_t errlen);
/* The address of a symbol (a data or function address; copy function pointers with memcpy). */
void *jit_symbol(Jit *j, const char *name);
void jit_free(Jit *j);

#endif /* RELAYC_H */
