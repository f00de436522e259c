/*
 * main.c: the relayc command line. The only file that prints results, reads options
 * and calls exit(); everything else reports errors through a Diag.
 *
 *   relayc compile MODEL.json [--params F] [-o DIR] [--name N] [--constants c|bin] ...
 *   relayc run     MODEL.json [--params F] --input NAME=F.npy ... [-o DIR] [--reference | --cc CC]
 *   relayc check   MODEL.json [--params F] --input NAME=F.npy ... --expect F.npy ... [--rtol R] [--atol A]
 *                  [--reference | --cc CC]
 *   relayc info    MODEL.json [--params F] [--json]
 */
#include "../compiler/relayc.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *cmd;
    LoadOptions load;
    const char *outdir;
    const char *name;
    ConstMode constants;
    Target target;              /* --target: what the conv2d / dense kernels are tuned for */
    const char *dump_after;     /* pass name, "lower", or NULL */
    bool json;
    bool reference;
    const char *cc;             /* --cc: the compiler command, or NULL (libtcc) */
    char **inputs;              /* stb_ds: "NAME=FILE" */
    char **expects;             /* stb_ds */
    double rtol, atol;
    int64_t max_workspace, max_constants; /* -1: no limit */
    const char *report, *report_svg, *depfile; /* compile: extra outputs, or NULL */
    char *options;              /* the options, as recorded in the header */
} Options;

RC_NORETURN static void die(const char *fmt, ...) RC_PRINTF(1, 2);
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "relayc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: relayc COMMAND MODEL.json [options]\n"
        "\n"
        "Commands:\n"
        "  compile   write the model as a C library: NAME.h, NAME.c and NAME_constants.c (or NAME.bin)\n"
        "  run       compile (in memory with libtcc, or with --cc CC), run on .npy inputs, write\n"
        "            output_K.npy\n"
        "  check     run and compare each output with an expected .npy (exit 0 match, 1 mismatch)\n"
        "  info      describe the model: inputs, outputs, operators, constants, memory\n"
        "\n"
        "Options:\n"
        "  --params FILE         tensors for the function's parameters (TVM save_param_dict)\n"
        "  --function NAME       the module function to compile (default: main)\n"
        "  -o DIR                output directory (compile, run; default: .)\n"
        "  --name NAME           prefix of the emitted files and symbols (default: the model file's stem)\n"
        "  --constants c|bin     constants as C arrays (default) or a NAME.bin sidecar\n"
        "  --target T            tune conv2d/dense kernels for generic (default), x86-64-avx2,\n"
        "                        x86-64-avx512 or cortex-m; the output is portable C99 for every target\n"
        "  --max-workspace BYTES fail when the workspace needs more\n"
        "  --max-constants BYTES fail when the constants need more\n"
        "  --report FILE.json    (compile) write a size report and print a summary of it\n"
        "  --report-svg FILE.svg (compile) draw the memory plan over time\n"
        "  --depfile FILE        (compile) write a make/ninja depfile for the emitted files\n"
        "  --dump-after PASS     print the IR after PASS (lower, %s) and continue\n"
        "  --dump-ir             the same as --dump-after lower\n"
        "  --input NAME=FILE     a runtime input (run, check), by its Relay name\n"
        "  --expect FILE         the expected output K, in order (check)\n"
        "  --rtol R --atol A     tolerance of check: |got - want| <= atol + rtol*|want| (1e-4, 1e-5)\n"
        "  --reference           run with the reference kernels instead of the compiled code\n"
        "  --cc CC               (run, check) build the code with the C compiler command CC instead\n"
        "                        of libtcc (slower to build, much faster to run): CC's words, split\n"
        "                        at blanks, then -shared -fPIC; -O2 unless CC gives an -O option.\n"
        "                        Examples: --cc gcc, --cc 'clang -O3 -march=native'\n"
        "  --json                info as one JSON object\n"
        "  --version, --help     (relayc COMMAND --help: the options of one command)\n",
        passes[0].name);
}

static void usage_compile(FILE *f)
{
    fprintf(f,
        "usage: relayc compile MODEL.json [--params FILE] [-o DIR] [--name NAME] [options]\n"
        "\n"
        "Writes the model as a self-contained C99 library: DIR/NAME.h (the API), DIR/NAME.c\n"
        "(the kernels and NAME_run) and the constants, DIR/NAME_constants.c or DIR/NAME.bin.\n"
        "Everything exported starts with NAME (macros with NAME in capitals), so several\n"
        "models link into one program. A file whose content would not change is not\n"
        "rewritten (its timestamp is kept). NAME.h records the relayc version and the\n"
        "options used, never a date or a path: --params by its file name; -o, --report,\n"
        "--report-svg and --depfile, which name files only, are not recorded.\n"
        "\n"
        "Options:\n"
        "  --params FILE         tensors for the function's parameters (TVM save_param_dict)\n"
        "  --function NAME       the module function to compile (default: main)\n"
        "  -o DIR                output directory (default: .)\n"
        "  --name NAME           prefix of the files and symbols, a C identifier of up to 64\n"
        "                        characters (default: the model file's stem)\n"
        "  --constants c|bin     c (default): const arrays in NAME_constants.c (define\n"
        "                        NAME_CONST_ATTR, in capitals, to place them); bin: a NAME.bin blob\n"
        "                        the caller loads 16-byte aligned and passes to NAME_run\n"
        "  --target T            block sizes of the conv2d/dense kernels: generic (default,\n"
        "                        small blocks), x86-64-avx2 (gcc/clang -O3 with 256-bit vectors),\n"
        "                        x86-64-avx512 (512-bit vectors, 32 registers) or cortex-m\n"
        "                        (smallest); the output is portable C99 for every target\n"
        "  --max-workspace BYTES fail when the workspace needs more (suffix K or M allowed);\n"
        "                        the error names the tensors live at the peak\n"
        "  --max-constants BYTES fail when the constants need more (suffix K or M allowed)\n"
        "  --report FILE.json    write a report: workspace, constants and I/O bytes, the memory\n"
        "                        plan (each buffer's offset, size, live range and tensors) and\n"
        "                        each kernel's MACs; also print it as a summary on stdout\n"
        "  --report-svg FILE.svg draw the memory plan: buffers as boxes, node steps on x,\n"
        "                        workspace offsets on y, the peak marked\n"
        "  --depfile FILE        write a make/ninja depfile: the emitted files (and reports)\n"
        "                        depend on the model file and the params file\n"
        "  --dump-after PASS     print the IR after PASS (lower, %s) and continue\n"
        "  --dump-ir             the same as --dump-after lower\n"
        "  --help, -h            this text\n"
        "\n"
        "Example: relayc compile lenet.json --constants bin -o gen --depfile gen/lenet.d\n",
        passes[0].name);
}

static int64_t parse_bytes(const char *s, const char *opt)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        die("%s: expected a byte count, got '%s'", opt, s);
    if (*end == 'K' || *end == 'k')
        v *= 1024, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024, end++;
    if (*end)
        die("%s: expected a byte count, got '%s'", opt, s);
    return v;
}

static double parse_double(const char *s, const char *opt)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0))
        die("%s: expected a non-negative number, got '%s'", opt, s);
    return v;
}

static void parse_args(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->outdir = ".";
    o->rtol = 1e-4;
    o->atol = 1e-5;
    o->max_workspace = o->max_constants = -1;
    Buf opts = { 0 };
    if (argc < 2) {
        usage(stderr);
        exit(2);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        exit(0);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("relayc %s\n", RELAYC_VERSION);
        exit(0);
    }
    o->cmd = argv[1];
    if (strcmp(o->cmd, "compile") && strcmp(o->cmd, "run") && strcmp(o->cmd, "check") &&
        strcmp(o->cmd, "info"))
        die("unknown command '%s' (compile, run, check, info; see relayc --help)", o->cmd);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) die("%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (!strcmp(o->cmd, "compile"))
                usage_compile(stdout);
            else
                usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--params")) {
            NEEDV();
            o->load.params_path = v;
            const char *pb = strrchr(v, '/');
            buf_printf(&opts, " --params %s", pb ? pb + 1 : v); /* the file name only: no paths */
        } else if (!strcmp(a, "--function")) {
            NEEDV();
            o->load.function = v;
            buf_printf(&opts, " --function %s", v);
        } else if (!strcmp(a, "-o")) {
            NEEDV();
            o->outdir = v;
        } else if (!strcmp(a, "--name")) {
            NEEDV();
            o->name = v;
            buf_printf(&opts, " --name %s", v);
        } else if (!strcmp(a, "--target")) {
            NEEDV();
            if (!target_parse(v, &o->target))
                die("--target: expected generic, x86-64-avx2, x86-64-avx512 or cortex-m, got '%s'", v);
            buf_printf(&opts, " --target %s", v);
        } else if (!strcmp(a, "--constants")) {
            NEEDV();
            if (!strcmp(v, "c"))
                o->constants = CONST_C;
            else if (!strcmp(v, "bin"))
                o->constants = CONST_BIN;
            else
                die("--constants: expected c or bin, got '%s'", v);
            buf_printf(&opts, " --constants %s", v);
        } else if (!strcmp(a, "--max-workspace")) {
            NEEDV();
            o->max_workspace = parse_bytes(v, a);
            buf_printf(&opts, " --max-workspace %s", v);
        } else if (!strcmp(a, "--max-constants")) {
            NEEDV();
            o->max_constants = parse_bytes(v, a);
            buf_printf(&opts, " --max-constants %s", v);
        } else if (!strcmp(a, "--report")) {
            NEEDV();
            o->report = v;
        } else if (!strcmp(a, "--report-svg")) {
            NEEDV();
            o->report_svg = v;
        } else if (!strcmp(a, "--depfile")) {
            NEEDV();
            o->depfile = v;
        } else if (!strcmp(a, "--dump-after")) {
            NEEDV();
            o->dump_after = v;
        } else if (!strncmp(a, "--dump-after=", 13)) {
            o->dump_after = a + 13;
        } else if (!strcmp(a, "--dump-ir")) {
            o->dump_after = "lower";
        } else if (!strcmp(a, "--input")) {
            NEEDV();
            arrput(o->inputs, argv[i]);
        } else if (!strcmp(a, "--expect")) {
            NEEDV();
            arrput(o->expects, argv[i]);
        } else if (!strcmp(a, "--rtol")) {
            NEEDV();
            o->rtol = parse_double(v, a);
        } else if (!strcmp(a, "--atol")) {
            NEEDV();
            o->atol = parse_double(v, a);
        } else if (!strcmp(a, "--cc")) {
            NEEDV();
            if (!v[strspn(v, " \t")])
                die("--cc: expected a compiler command (gcc, 'clang -O3 -march=native', ...)");
            o->cc = v;
        } else if (!strcmp(a, "--reference")) {
            o->reference = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (a[0] == '-') {
            die("unknown option '%s' (see relayc --help)", a);
        } else if (!o->load.model_path) {
            o->load.model_path = a;
        } else {
            die("unexpected argument '%s' (one model file per call)", a);
        }
#undef NEEDV
    }
    if (!o->load.model_path)
        die("%s: no model file given", o->cmd);
    if (strcmp(o->cmd, "compile") && (o->report || o->report_svg || o->depfile))
        die("%s: --report, --report-svg and --depfile are options of compile", o->cmd);
    if (o->cc && strcmp(o->cmd, "run") && strcmp(o->cmd, "check"))
        die("%s: --cc is an option of run and check", o->cmd);
    if (o->cc && o->reference)
        die("%s: --cc and --reference exclude each other (--reference compiles nothing)", o->cmd);
    if (o->dump_after && strcmp(o->dump_after, "lower")) {
        bool known = false;
        for (int k = 0; passes[k].name; k++)
            known = known || !strcmp(passes[k].name, o->dump_after);
        if (!known)
            die("--dump-after: unknown pass '%s'", o->dump_after);
    }
    o->options = xstrdup(buf_len(&opts) ? buf_cstr(&opts) + 1 : "(defaults)");
    buf_free(&opts);
}

/* The model file's stem as a C identifier: "models/input.1.json" -> "input_1". */
static char *default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *stem = xstrdup(base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = 0;
    char *id = c_identifier(stem);
    free(stem);
    return id;
}

/* A C identifier of up to 64 characters that starts with a letter: no path separators
 * or dots (the files stay in -o DIR), and no leading '_' (reserved identifiers, and
 * header guards such as _STDINT_H that would hide <stdint.h>). */
static bool valid_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* True when NAME.h would be a standard C header's name (compared without case, for
 * case-insensitive file systems): <stdint.h> in the emitted code, or <math.h> in the
 * user's, would find NAME.h through -I DIR. */
static bool is_std_header(const char *s)
{
    static const char *const std[] = {
        "assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646",
        "limits", "locale", "math", "setjmp", "signal", "stdalign", "stdarg", "stdatomic",
        "stdbool", "stddef", "stdint", "stdio", "stdlib", "stdnoreturn", "string", "tgmath",
        "threads", "time", "uchar", "wchar", "wctype", NULL };
    for (int k = 0; std[k]; k++) {
        size_t i = 0;
        while (s[i] && std[k][i] && (s[i] | 0x20) == std[k][i])
            i++;
        if (!s[i] && !std[k][i])
            return true;
    }
    return false;
}

/* Loads, runs the passes, plans memory. Exits on error. */
static void build(Options *o, Graph *g, ModelInfo *info, Plan *plan, bool need_supported)
{
    Diag d;
    memset(&d, 0, sizeof d);
    if (!load_model(&o->load, g, info, &d)) {
        fprintf(stderr, "relayc: error: %s\n", d.msg);
        exit(2);
    }
    if (arrlen(info->unsupported) > 0) {
        if (!need_supported)
            return;
        Buf b = { 0 };
        for (int i = 0; i < (int)arrlen(info->unsupported); i++)
            buf_printf(&b, "%s%s (nodes[%d])", i ? ", " : "", info->unsupported[i].op,
                       info->unsupported[i].json);
        fprintf(stderr, "relayc: error: %s: unsupported operators: %s (supported: %s)\n",
                o->load.model_path, buf_cstr(&b), relay_op_list());
        exit(2);
    }
    if (o->dump_after && !strcmp(o->dump_after, "lower"))
        graph_print(g, stdout);
    ir_verify_after(g, NULL, "lowering");
    g->target = o->target;
    for (int k = 0; passes[k].name; k++) {
        if (o->reference && passes[k].packs)
            continue; /* the reference kernels read plain weights */
        passes[k].run(g);
        ir_verify_after(g, NULL, passes[k].name);
        if (o->dump_after && !strcmp(o->dump_after, passes[k].name))
            graph_print(g, stdout);
    }
    plan_memory(g, plan);
    ir_verify_after(g, plan, "plan");
}

/* Names of the workspace buffers live at the plan's peak, for budget errors. */
static void live_at_peak(const Graph *g, const Plan *p, Buf *b)
{
    int shown = 0;
    for (int k = 0; k < (int)arrlen(p->bufs); k++) {
        const PlanBuf *pb = &p->bufs[k];
        if (pb->first <= p->peak_step && p->peak_step <= pb->last && shown++ < 8) {
            buf_puts(b, shown > 1 ? ", " : "");
            if (pb->node >= 0) {
                buf_printf(b, "the row buffer of nodes[%d] (%lld bytes)", g->nodes[pb->node].json,
                           (long long)pb->size);
                continue;
            }
            const Value *v = &g->values[pb->value];
            char s[128];
            buf_printf(b, "%s %s from nodes[%d] (%lld bytes)", dtype_name(v->dtype),
                       shape_str(&v->shape, s, sizeof s), v->json, (long long)pb->size);
        }
    }
}

/* ---- outputs: all or nothing ----
 * The files of one command are staged: write_output writes each in full under a
 * temporary name beside it (path.tmpXXXXXX), and commit_outputs renames them all into
 * place only once every one is written. A failure before that (an error, a full disk, a
 * signal) removes the temporaries (atexit, signal handlers), so a failed command leaves
 * no partial file and never replaces a good earlier output with part of a new set. */
typedef struct {
    char *path, *tmp;
} Staged;
static Staged *staged;              /* stb_ds; the signal handler reads it */

static void block_signals(bool block)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void remove_staged(void)
{
    for (ptrdiff_t i = 0; i < arrlen(staged); i++)
        if (staged[i].tmp)
            unlink(staged[i].tmp);      /* async-signal-safe */
}

static void on_fatal_signal(int sig)
{
    remove_staged();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cleanup_at_exit(void)
{
    remove_staged();
    for (ptrdiff_t i = 0; i < arrlen(staged); i++) {
        free(staged[i].path);
        free(staged[i].tmp);
    }
    arrfree(staged);
}

/* Stages path, unless it already holds exactly these bytes (then it is left alone,
 * timestamp and all, so build systems see no change). */
static void write_output(const char *path, const void *data, size_t len)
{
    uint8_t *old;
    size_t oldlen;
    char err[512];
    struct stat st;
    for (ptrdiff_t i = 0; i < arrlen(staged); i++)
        if (!strcmp(staged[i].path, path))
            die("%s: two outputs of this command have the same path", path);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len &&
        read_file(path, &old, &oldlen, err, sizeof err)) {
        bool same = oldlen == len && memcmp(old, data, len) == 0;
        free(old);
        if (same)
            return;
    }
    Staged s = { xstrdup(path), NULL };
    block_signals(true);                /* the handler must not see the array move */
    arrput(staged, s);
    block_signals(false);
    /* the temporary's name lands in the array as soon as the file exists (on_fatal_signal) */
    if (!write_file_temp(path, data, len, &staged[arrlen(staged) - 1].tmp, err, sizeof err))
        die("%s: %s", path, err);
}

/* Renames every staged file into place, as one transaction: each file it replaces is
 * first hard-linked to a backup name (the path itself never goes missing), and when a
 * rename fails the files already renamed are put back from their backups (or removed,
 * when there was no earlier file) before the error. Signals wait until it is done. */
static void commit_outputs(void)
{
    ptrdiff_t n = arrlen(staged);
    char **bak = xcalloc((size_t)n + 1, sizeof(char *));
    const char *fail_path = NULL, *fail_what = NULL;
    int fail_errno = 0;
    ptrdiff_t done = 0;
    block_signals(true);
    for (ptrdiff_t i = 0; i < n && !fail_path; i++) {
        struct stat st;
        if (lstat(staged[i].path, &st) != 0)
            continue;                   /* a new file: nothing to keep */
        if (S_ISDIR(st.st_mode)) {
            fail_path = staged[i].path, fail_what = "is a directory", fail_errno = 0;
            break;
        }
        bak[i] = xasprintf("%s.old", staged[i].tmp);   /* tmp's name is unique */
        if (link(staged[i].path, bak[i]) != 0) {
            fail_path = staged[i].path, fail_what = "cannot keep a backup of it";
            fail_errno = errno;
            free(bak[i]);
            bak[i] = NULL;
        }
    }
    for (; done < n && !fail_path; done++)
        if (rename(staged[done].tmp, staged[done].path) != 0) {
            fail_path = staged[done].path, fail_what = "cannot rename the temporary file over it";
            fail_errno = errno;
            break;
        }
    if (fail_path) {
        for (ptrdiff_t i = 0; i < done; i++) {  /* undo: put the earlier files back */
            if (bak[i])
                rename(bak[i], staged[i].path);
            else
                unlink(staged[i].path);
        }
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        if (bak[i])
            unlink(bak[i]);             /* after a rollback only the unused ones remain */
        free(bak[i]);
    }
    free(bak);
    if (fail_path) {
        char *msg = xasprintf("%s: %s%s%s", fail_path, fail_what, fail_errno ? ": " : "",
                              fail_errno ? strerror(fail_errno) : "");
        fprintf(stderr, "relayc: error: %s\n", msg);
        free(msg);
        exit(2);                        /* cleanup_at_exit removes the temporaries left */
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        free(staged[i].tmp);
        staged[i].tmp = NULL;
        free(staged[i].path);
    }
    arrfree(staged);
    block_signals(false);
}

/* A path in a make/ninja depfile: spaces and '#' escaped with a backslash, '$' doubled. */
static void put_dep_path(Buf *b, const char *path, bool first)
{
    if (!first)
        buf_puts(b, " ");
    for (const char *c = path; *c; c++) {
        if (*c == ' ' || *c == '#')
            buf_puts(b, "\\");
        else if (*c == '$')
            buf_puts(b, "$");
        buf_write(b, c, 1);
    }
}

static int cmd_compile(Options *o)
{
    Graph g;
    ModelInfo info;
    Plan plan;
    build(o, &g, &info, &plan, true);
    /* static: still reachable (not a leak to valgrind) when a die() below exits */
    static char *name;
    name = o->name ? xstrdup(o->name) : default_name(o->load.model_path);
    if (!valid_identifier(name))
        die("--name '%s' is not a C identifier (a letter, then letters, digits, _; up to 64)",
            name);
    if (is_std_header(name))
        die("--name '%s': NAME.h would hide the standard header <%s.h> from code compiled with "
            "-I on the output directory; choose another name", name, name);
    if (o->max_workspace >= 0 && plan.workspace > o->max_workspace) {
        Buf b = { 0 };
        live_at_peak(&g, &plan, &b);
        die("%s: the workspace needs %lld bytes, over --max-workspace %lld; live at the peak: %s",
            o->load.model_path, (long long)plan.workspace, (long long)o->max_workspace, buf_cstr(&b));
    }
    const char *base = strrchr(o->load.model_path, '/');
    EmitOptions eo = { name, o->constants, false, base ? base + 1 : o->load.model_path, o->options };
    Emitted em;
    emit_library(&g, &plan, &eo, &em);
    if (o->max_constants >= 0 && em.constants_size > o->max_constants)
        die("%s: the constants need %lld bytes, over --max-constants %lld", o->load.model_path,
            (long long)em.constants_size, (long long)o->max_constants);
    struct stat st;
    if (stat(o->outdir, &st) != 0 || !S_ISDIR(st.st_mode))
        die("-o %s: not a directory", o->outdir);
    char *ph = xasprintf("%s/%s.h", o->outdir, name);
    char *pc = xasprintf("%s/%s.c", o->outdir, name);
    char *pk = o->constants == CONST_BIN ? xasprintf("%s/%s.bin", o->outdir, name)
                                         : xasprintf("%s/%s_constants.c", o->outdir, name);
    write_output(pk, em.constants.data, buf_len(&em.constants));
    write_output(pc, em.source.data, buf_len(&em.source));
    write_output(ph, em.header.data, buf_len(&em.header));
    printf("%s: workspace %lld bytes (peak of live intermediates %lld), constants %lld bytes, "
           "inputs and outputs %lld bytes\n",
           name, (long long)plan.workspace, (long long)plan.peak, (long long)em.constants_size,
           (long long)em.io_bytes);
    if (o->report) {
        Buf r = { 0 };
        report_json(&g, &plan, &eo, &em, &r);
        write_output(o->report, r.data, buf_len(&r));
        buf_free(&r);
        report_text(&g, &plan, &eo, &em, &r);
        fputs(buf_cstr(&r), stdout);
        buf_free(&r);
    }
    if (o->report_svg) {
        Buf r = { 0 };
        report_svg(&g, &plan, &eo, &em, &r);
        write_output(o->report_svg, r.data, buf_len(&r));
        buf_free(&r);
    }
    if (o->depfile) {
        const char *targets[] = { ph, pc, pk, o->report, o->report_svg };
        const char *deps[] = { o->load.model_path, o->load.params_path };
        Buf r = { 0 };
        for (int k = 0; k < 5; k++)
            if (targets[k])
                put_dep_path(&r, targets[k], k == 0);
        buf_puts(&r, ":");
        for (int k = 0; k < 2; k++)
            if (deps[k])
                put_dep_path(&r, deps[k], false);
        buf_puts(&r, "\n");
        for (int k = 0; k < 2; k++) /* as gcc -MP: a deleted input is no error, it rebuilds */
            if (deps[k]) {
                buf_puts(&r, "\n");
                put_dep_path(&r, deps[k], true);
                buf_puts(&r, ":\n");
            }
        write_output(o->depfile, r.data, buf_len(&r));
        buf_free(&r);
    }
    commit_outputs();
    free(ph);
    free(pc);
    free(pk);
    free(name);
    emitted_free(&em);
    plan_free(&plan);
    model_info_free(&info);
    graph_free(&g);
    return 0;
}

/* ---- run and check ---- */

static void *aligned_alloc64(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64))
        die("out of memory");
    memset(p, 0, n ? n : 64);
    return p;
}

/* Reads every --input, matched to the graph's inputs by name. */
static void **read_inputs(Options *o, const Graph *g, Tensor *tensors)
{
    int n = (int)arrlen(g->inputs);
    void **ptrs = xcalloc((size_t)n + 1, sizeof(void *));
    for (int k = 0; k < (int)arrlen(o->inputs); k++) {
        char *spec = o->inputs[k];
        /* NAME=FILE, where NAME may hold '=' and so may FILE: split at the '=' after
         * which the longest input name ends */
        char *eq = NULL;
        int which = -1;
        for (char *q = strchr(spec, '='); q; q = strchr(q + 1, '=')) {
            for (int i = 0; i < n; i++) {
                const char *nm = g->values[g->inputs[i]].name;
                if (nm && strlen(nm) == (size_t)(q - spec) && !strncmp(nm, spec, (size_t)(q - spec))) {
                    eq = q;
                    which = i;
                }
            }
        }
        if (!eq)
            eq = strchr(spec, '=');
        if (!eq)
            die("--input %s: expected NAME=FILE.npy", spec);
        *eq = 0;
        const char *file = eq + 1;
        if (which < 0) {
            Buf b = { 0 };
            for (int i = 0; i < n; i++)
                buf_printf(&b, "%s'%s'", i ? ", " : "", g->values[g->inputs[i]].name);
            die("--input %s: the model has no input named '%s' (inputs: %s)", spec, spec,
                n ? buf_cstr(&b) : "none");
        }
        if (ptrs[which])
            die("--input %s: given twice", spec);
        uint8_t *raw;
        size_t len;
        char err[512];
        if (!read_file(file, &raw, &len, err, sizeof err))
            die("%s: %s", file, err);
        Tensor *t = &tensors[which];
        bool ok = npy_decode(raw, len, t, err, sizeof err);
        free(raw);
        if (!ok)
            die("%s: %s", file, err);
        const Value *v = &g->values[g->inputs[which]];
        char a[128], b[128];
        if (t->dtype != v->dtype || !shape_eq(&t->shape, &v->shape))
            die("%s: input '%s' must be %s %s, but the file holds %s %s", file, spec,
                dtype_name(v->dtype), shape_str(&v->shape, a, sizeof a), dtype_name(t->dtype),
                shape_str(&t->shape, b, sizeof b));
        ptrs[which] = aligned_alloc64(t->nbytes);
        if (t->nbytes)
            memcpy(ptrs[which], t->data, t->nbytes);
    }
    for (int i = 0; i < n; i++)
        if (!ptrs[i])
            die("missing --input %s=FILE.npy (input %d, %s)", g->values[g->inputs[i]].name, i,
                dtype_name(g->values[g->inputs[i]].dtype));
    return ptrs;
}

typedef int (*RunGeneric)(const void *const *, void *const *, void *, const void *);

/* Runs the model on the inputs; fills outs (allocated here) in result order. */
static void execute(Options *o, const Graph *g, const Plan *plan, void **ins, void **outs)
{
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        const Value *v = &g->values[g->outputs[i]];
        outs[i] = aligned_alloc64((size_t)shape_numel(&v->shape) * dtype_size(v->dtype));
    }
    if (o->reference) {
        ref_run(g, (const void *const *)ins, outs);
        return;
    }
    EmitOptions eo = { "model", CONST_BIN, true, "", "" };
    Emitted em;
    emit_library(g, plan, &eo, &em);
    char err[1024];
    Jit *j = jit_compile(buf_cstr(&em.source), o->cc, err, sizeof err);
    if (!j)
        die("%s: %s", o->load.model_path, err);
    void *sym = jit_symbol(j, "model_run_generic");
    if (!sym)
        die("%s: model_run_generic not found in the generated code", o->load.model_path);
    RunGeneric fn;
    memcpy(&fn, &sym, sizeof fn);
    void *ws = aligned_alloc64((size_t)plan->workspace);
    void *cb = aligned_alloc64(buf_len(&em.constants));
    memcpy(cb, em.constants.data, buf_len(&em.constants));
    int rc = fn((const void *const *)ins, outs, ws, cb);
    if (rc != 0)
        die("%s: model_run returned %d", o->load.model_path, rc);
    free(ws);
    free(cb);
    jit_free(j);
    emitted_free(&em);
}

static Tensor output_tensor(const Graph *g, int i, void *data)
{
    const Value *v = &g->values[g->outputs[i]];
    Tensor t = { v->dtype, v->shape, data, (size_t)shape_numel(&v->shape) * dtype_size(v->dtype) };
    return t;
}

static double elem(const Tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_F32: return ((const float *)t->data)[i];
    case DT_F64: return ((const double *)t->data)[i];
    case DT_I8: return ((const int8_t *)t->data)[i];
    case DT_U8:
    case DT_BOOL: return ((const uint8_t *)t->data)[i];
    case DT_I32: return ((const int32_t *)t->data)[i];
    case DT_I16: return ((const int16_t *)t->data)[i];
    case DT_I64: return (double)((const int64_t *)t->data)[i];
    default: return 0;
    }
}

static void index_text(const Shape *s, int64_t flat, char *buf, size_t len)
{
    int64_t idx[RC_MAX_RANK];
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dim[d] ? flat % s->dim[d] : 0;
        flat = s->dim[d] ? flat / s->dim[d] : 0;
    }
    size_t at = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < s->rank && at < len; d++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (at < len)
        snprintf(buf + at, len - at, "]");
}

static int cmd_run_or_check(Options *o, bool check)
{
    Graph g;
    ModelInfo info;
    Plan plan;
    if (check && arrlen(o->expects) == 0)
        die("check: give the expected outputs with --expect FILE.npy (one per output, in order)");
    build(o, &g, &info, &plan, true);
    int nout = (int)arrlen(g.outputs);
    if (check && (int)arrlen(o->expects) != nout)
        die("check: the model has %d outputs but %d --expect files were given", nout,
            (int)arrlen(o->expects));
    Tensor *tin = xcalloc(arrlen(g.inputs) + 1, sizeof(Tensor));
    Tensor *want = xcalloc((size_t)nout + 1, sizeof(Tensor));
    /* read everything before running, so a bad file fails fast */
    for (int k = 0; check && k < nout; k++) {
        uint8_t *raw;
        size_t len;
        char err[512], a[128], b[128];
        if (!read_file(o->expects[k], &raw, &len, err, sizeof err))
            die("%s: %s", o->expects[k], err);
        bool ok = npy_decode(raw, len, &want[k], err, sizeof err);
        free(raw);
        if (!ok)
            die("%s: %s", o->expects[k], err);
        const Value *v = &g.values[g.outputs[k]];
        if (want[k].dtype != v->dtype || !shape_eq(&want[k].shape, &v->shape))
            die("%s: output %d is %s %s, but the file holds %s %s", o->expects[k], k,
                dtype_name(v->dtype), shape_str(&v->shape, a, sizeof a), dtype_name(want[k].dtype),
                shape_str(&want[k].shape, b, sizeof b));
    }
    void **ins = read_inputs(o, &g, tin);
    void **outs = xcalloc((size_t)nout + 1, sizeof(void *));
    execute(o, &g, &plan, ins, outs);
    int status = 0;
    if (!check) {
        struct stat st;
        if (stat(o->outdir, &st) != 0 || !S_ISDIR(st.st_mode))
            die("-o %s: not a directory", o->outdir);
        for (int i = 0; i < nout; i++) {
            Tensor t = output_tensor(&g, i, outs[i]);
            uint8_t *bytes;
            size_t len;
            npy_encode(&t, &bytes, &len);
            char *path = xasprintf("%s/output_%d.npy", o->outdir, i);
            write_output(path, bytes, len);     /* staged; renamed together below */
            printf("%s\n", path);
            free(path);
            free(bytes);
        }
        commit_outputs();
    } else {
        for (int i = 0; i < nout; i++) {
            Tensor t = output_tensor(&g, i, outs[i]);
            int64_t n = shape_numel(&t.shape), worst = -1, bad = 0;
            double max_abs = 0, max_rel = 0, worst_ratio = -1;
            for (int64_t k = 0; k < n; k++) {
                double x = elem(&t, k), y = elem(&want[i], k);
                double diff, ratio;
                bool ok;
                if (isnan(x) || isnan(y)) {
                    ok = isnan(x) && isnan(y);
                    diff = ok ? 0 : INFINITY;
                } else if (isinf(x) || isinf(y)) {
                    ok = x == y;
                    diff = ok ? 0 : INFINITY;
                } else {
                    diff = fabs(x - y);
                    ok = diff <= o->atol + o->rtol * fabs(y);
                }
                ratio = diff / (o->atol + o->rtol * fabs(y) + 1e-300);
                if (!ok)
                    bad++;
                if (diff > max_abs)
                    max_abs = diff;
                if (y != 0 && diff / fabs(y) > max_rel)
                    max_rel = diff / fabs(y);
                if (ratio > worst_ratio) {
                    worst_ratio = ratio;
                    worst = k;
                }
            }
            char idx[160] = "[]";
            if (worst >= 0)
                index_text(&t.shape, worst, idx, sizeof idx);
            printf("output %d: %s: %lld of %lld elements differ; max abs error %.3g, max rel error %.3g",
                   i, bad ? "MISMATCH" : "ok", (long long)bad, (long long)n, max_abs, max_rel);
            if (worst >= 0)
                printf("; worst at %s: got %.9g, expected %.9g", idx, elem(&t, worst),
                       elem(&want[i], worst));
            printf(" (rtol %g, atol %g)\n", o->rtol, o->atol);
            if (bad)
                status = 1;
        }
    }
    for (int i = 0; i < (int)arrlen(g.inputs); i++) {
        tensor_free(&tin[i]);
        free(ins[i]);
    }
    for (int i = 0; i < nout; i++) {
        tensor_free(&want[i]);
        free(outs[i]);
    }
    free(tin);
    free(want);
    free(ins);
    free(outs);
    plan_free(&plan);
    model_info_free(&info);
    graph_free(&g);
    return status;
}

/* ---- info ---- */

static cJSON *shape_json(const Shape *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; d < s->rank; d++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->dim[d]));
    return a;
}

static int cmd_info(Options *o)
{
    Graph g;
    ModelInfo info;
    Plan plan;
    memset(&plan, 0, sizeof plan);
    build(o, &g, &info, &plan, false);
    bool supported = arrlen(info.unsupported) == 0;
    Emitted em;
    memset(&em, 0, sizeof em);
    if (supported) {
        EmitOptions eo = { "model", CONST_BIN, false, "", "" };
        emit_library(&g, &plan, &eo, &em);
    }
    /* op counts, in name order */
    char **names = NULL;
    int *counts = NULL;
    for (int i = 0; i < (int)arrlen(info.calls); i++) {
        int k = 0;
        while (k < (int)arrlen(names) && strcmp(names[k], info.calls[i].op))
            k++;
        if (k == (int)arrlen(names)) {
            arrput(names, (char *)info.calls[i].op);
            arrput(counts, 0);
        }
        counts[k]++;
    }
    for (int a = 0; a < (int)arrlen(names); a++)
        for (int b = a + 1; b < (int)arrlen(names); b++)
            if (strcmp(names[b], names[a]) < 0) {
                char *t = names[a];
                names[a] = names[b], names[b] = t;
                int c = counts[a];
                counts[a] = counts[b], counts[b] = c;
            }
    if (o->json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "tvm_version", info.version);
        cJSON_AddStringToObject(root, "function", info.function ? info.function : "");
        cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
        for (int i = 0; i < (int)arrlen(g.inputs); i++) {
            const Value *v = &g.values[g.inputs[i]];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", v->name ? v->name : "");
            cJSON_AddItemToObject(x, "shape", shape_json(&v->shape));
            cJSON_AddStringToObject(x, "dtype", dtype_name(v->dtype));
            cJSON_AddItemToArray(ins, x);
        }
        cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
        for (int i = 0; i < (int)arrlen(g.outputs); i++) {
            const Value *v = &g.values[g.outputs[i]];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddItemToObject(x, "shape", shape_json(&v->shape));
            cJSON_AddStringToObject(x, "dtype", dtype_name(v->dtype));
            cJSON_AddItemToArray(outs, x);
        }
        cJSON *ops = cJSON_AddObjectToObject(root, "ops");
        for (int k = 0; k < (int)arrlen(names); k++)
            cJSON_AddNumberToObject(ops, names[k], counts[k]);
        cJSON *cs = cJSON_AddObjectToObject(root, "constants");
        cJSON_AddNumberToObject(cs, "count", (double)info.const_count);
        cJSON_AddNumberToObject(cs, "bytes", (double)info.const_bytes);
        cJSON *un = cJSON_AddArrayToObject(root, "unsupported");
        for (int i = 0; i < (int)arrlen(info.unsupported); i++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "op", info.unsupported[i].op);
            cJSON_AddNumberToObject(x, "node", info.unsupported[i].json);
            cJSON_AddItemToArray(un, x);
        }
        if (supported) {
            cJSON *m = cJSON_AddObjectToObject(root, "memory");
            cJSON_AddNumberToObject(m, "workspace", (double)plan.workspace);
            cJSON_AddNumberToObject(m, "peak_live", (double)plan.peak);
            cJSON_AddNumberToObject(m, "constants", (double)em.constants_size);
            cJSON_AddNumberToObject(m, "io", (double)em.io_bytes);
        }
        char *text = cJSON_Print(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        char s[160];
        printf("model:     %s\n", o->load.model_path);
        printf("tvm:       %s\n", info.version[0] ? info.version : "(not recorded)");
        printf("function:  %s\n", info.function ? info.function : "");
        for (int i = 0; i < (int)arrlen(g.inputs); i++) {
            const Value *v = &g.values[g.inputs[i]];
            printf("input %d:   %s %s %s\n", i, v->name ? v->name : "", dtype_name(v->dtype),
                   shape_str(&v->shape, s, sizeof s));
        }
        for (int i = 0; i < (int)arrlen(g.outputs); i++) {
            const Value *v = &g.values[g.outputs[i]];
            printf("output %d:  %s %s\n", i, dtype_name(v->dtype), shape_str(&v->shape, s, sizeof s));
        }
        printf("operators:");
        for (int k = 0; k < (int)arrlen(names); k++)
            printf(" %s x%d%s", names[k], counts[k], k + 1 < (int)arrlen(names) ? "," : "");
        printf("\nconstants: %lld (%lld bytes)\n", (long long)info.const_count,
               (long long)info.const_bytes);
        if (supported)
            printf("memory:    workspace %lld bytes (peak of live intermediates %lld), constants %lld "
                   "bytes, inputs and outputs %lld bytes\n", (long long)plan.workspace,
                   (long long)plan.peak, (long long)em.constants_size, (long long)em.io_bytes);
        for (int i = 0; i < (int)arrlen(info.unsupported); i++)
            printf("unsupported: %s at nodes[%d]\n", info.unsupported[i].op, info.unsupported[i].json);
    }
    arrfree(names);
    arrfree(counts);
    emitted_free(&em);
    plan_free(&plan);
    model_info_free(&info);
    graph_free(&g);
    return supported ? 0 : 1;
}

int main(int argc, char **argv)
{
    Options o;
    atexit(cleanup_at_exit);
    static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
    for (size_t k = 0; k < sizeof fatal / sizeof fatal[0]; k++)
        if (signal(fatal[k], SIG_IGN) != SIG_IGN)   /* keep an ignored signal ignored */
            signal(fatal[k], on_fatal_signal);
    parse_args(argc, argv, &o);
    int rc;
    if (!strcmp(o.cmd, "compile"))
        rc = cmd_compile(&o);
    else if (!strcmp(o.cmd, "info"))
        rc = cmd_info(&o);
    else
        rc = cmd_run_or_check(&o, !strcmp(o.cmd, "check"));
    arrfree(o.inputs);
    arrfree(o.expects);
    free(o.options);
    return rc;
}
