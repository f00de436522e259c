/*
 * main.c: the relayc command line. The only file that prints results, reads options
 * and calls exit(); everything else reports errors through a Diag.
 *
 *   relayc compile MODEL.json|DIR [--params F] [-o DIR] [--name N] [--constants c|bin] ...
 *   relayc run     MODEL.json|DIR [--params F] --input NAME=F.npy ... [-o DIR] [--reference | --cc CC]
 *   relayc check   MODEL.json|DIR [--params F] --input NAME=F.npy ... --expect F.npy ... [--json F]
 *   relayc info    MODEL.json|DIR [--params F] [--json]
 *   relayc ops     [--json]
 *   relayc help    [COMMAND]
 *
 * The options are one table (optspecs): which commands take each, its value and its
 * help, so parsing, "does not take" errors and every command's --help agree.
 */
#include "../compiler/relayc.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Exit codes, the same for every command. */
enum {
    EXIT_OK = 0,
    EXIT_MISMATCH = 1,          /* check: an output differs; info: unsupported operators */
    EXIT_ERROR = 2,             /* bad input, bad option, any error */
    EXIT_BUDGET = 3,            /* --max-workspace or --max-constants exceeded */
};

/* ---- the commands and their options ----
 * One table of options: each says which commands take it, so the parser, the error for
 * an option a command does not take, and every command's --help come from it. */
enum { CMD_COMPILE, CMD_RUN, CMD_CHECK, CMD_INFO, CMD_OPS, NCMDS };
#define CB(c) (1u << (c))
#define C_EXEC (CB(CMD_RUN) | CB(CMD_CHECK))
#define C_MODEL (CB(CMD_COMPILE) | C_EXEC | CB(CMD_INFO))
#define C_BUDGET (CB(CMD_COMPILE) | CB(CMD_INFO))

typedef struct {
    const char *name;           /* "compile" */
    const char *brief;          /* one line for relayc --help */
    const char *synopsis;       /* after "relayc NAME " */
    const char *about;          /* what it does, lines of at most 88 columns */
    const char *exits;          /* its exit codes */
} CmdSpec;

static const CmdSpec cmds[NCMDS] = {
    [CMD_COMPILE] = { "compile",
        "write the model as a C library: NAME.h, NAME.c, NAME_constants.c (or NAME.bin)",
        "MODEL.json|DIR [--params FILE] [-o DIR] [--name NAME] [options]",
        "Writes the model as a self-contained C99 library: DIR/NAME.h (the API), DIR/NAME.c\n"
        "(the kernels and NAME_run) and the constants, DIR/NAME_constants.c or DIR/NAME.bin.\n"
        "Everything exported starts with NAME (macros with NAME in capitals), so several\n"
        "models link into one program. A file whose content would not change is not\n"
        "rewritten (its timestamp is kept). NAME.h records the relayc version and the\n"
        "options used, never a date or a path: --params by its file name; -o, --report,\n"
        "--report-svg and --depfile, which name files only, are not recorded. Build a\n"
        "program with it: cc -I DIR app.c DIR/NAME.c DIR/NAME_constants.c -lm\n"
        "Example: relayc compile lenet.json --constants bin -o gen --depfile gen/lenet.d\n",
        "0 written, 2 bad input or any error (nothing written), 3 a budget exceeded\n"
        "(--max-workspace, --max-constants; nothing written)\n" },
    [CMD_RUN] = { "run", "compile in memory, run on .npy/.npz inputs, write output_K.npy",
        "MODEL.json|DIR [--params FILE] --input NAME=FILE ... [-o DIR] [options]",
        "Compiles the model in memory (libtcc, or the compiler --cc names), runs it on the\n"
        "inputs and writes DIR/output_K.npy for each output K, printing each path.\n",
        "0 done, 2 bad input or any error (nothing written)\n" },
    [CMD_CHECK] = { "check", "run and compare each output with an expected .npy (0 match, 1 mismatch)",
        "MODEL.json|DIR [--params FILE] --input NAME=FILE ... --expect FILE ... [options]",
        "Runs the model as run does and compares output K with the K-th --expect file:\n"
        "an element matches when |got - want| <= atol + rtol*|want|; NaN matches only NaN,\n"
        "an infinity only the same infinity. Prints one line per output naming the worst\n"
        "element (a mismatch before any match; NaN and infinity mismatches first).\n"
        "Given a directory DIR (the fixtures' layout), it reads DIR/model.json,\n"
        "DIR/model.params when present, DIR/input_NAME.npy for each input not given with\n"
        "--input, and DIR/expected_K.npy for each output when no --expect is given.\n"
        "'relayc verify' is the same command.\n",
        "0 every output matches, 1 an output differs, 2 bad input or any error (no --json or\n"
        "--junit report written)\n" },
    [CMD_INFO] = { "info", "describe the model: inputs, outputs, operators, constants, memory",
        "MODEL.json|DIR [--params FILE] [--json] [options]",
        "Describes the model: the TVM version, the function, each input (name, dtype, shape;\n"
        "an input that looks like an unbound weight is marked), each output, the operators\n"
        "and their counts, the constants (as stored in the file, and after constant folding),\n"
        "the memory plan's sizes, and every unsupported operator with its JSON node index.\n"
        "The budgets apply as in compile.\n",
        "0 the model is supported, 1 it uses unsupported operators, 2 bad input or any error,\n"
        "3 a budget exceeded (--max-workspace, --max-constants)\n" },
    [CMD_OPS] = { "ops", "list the Relay operators relayc compiles", "[--json]",
        "Lists every Relay operator relayc compiles, one per line: its name, then the dtypes\n"
        "of the data it takes (its first argument; where: x and y; qnn.quantize: out_dtype),\n"
        "in columns: 'nn.conv2d  float32'. The QNN operators list the quantized dtypes\n"
        "(int8, uint8, int32) of their data; scales are float32, zero points int32. A call\n"
        "on another dtype is refused, naming its JSON node, the operator and the dtype.\n"
        "--json prints an array of {\"name\": ..., \"dtypes\": [...]}.\n",
        "0\n" },
};

typedef enum {
    O_HELP, O_PARAMS, O_STRICT, O_FUNCTION, O_OUTDIR, O_NAME, O_CONSTANTS, O_TARGET, O_MAX_WS,
    O_MAX_CONST, O_REPORT, O_REPORT_SVG, O_DEPFILE, O_DUMP_AFTER, O_DUMP_IR, O_INPUT, O_EXPECT,
    O_RTOL, O_ATOL, O_REFERENCE, O_CC, O_PROFILE, O_REPEAT, O_JSON, O_JSON_OUT, O_JUNIT, O_QUIET,
} OptId;

typedef struct {
    OptId id;
    const char *name;           /* "--params" */
    const char *alias;          /* "-q", or NULL */
    const char *metavar;        /* the value's name; NULL for a flag */
    unsigned cmds;              /* CB() of the commands that take it */
    const char *help;           /* lines joined by '\n' */
} OptSpec;

/* In the order --help lists them. An option may have one row per group of commands,
 * when its meaning differs (--json, -o). */
static const OptSpec optspecs[] = {
    { O_PARAMS, "--params", NULL, "FILE", C_MODEL,
      "tensors for the function's parameters (TVM save_param_dict)" },
    { O_STRICT, "--strict", NULL, NULL, C_MODEL,
      "fail (exit 2) when inputs look like unbound weights (named like\n"
      "weights, or found in a .params file beside the model) instead of\n"
      "warning" },
    { O_FUNCTION, "--function", NULL, "NAME", C_MODEL,
      "the module function to compile (default: main)" },
    { O_OUTDIR, "-o", NULL, "DIR", CB(CMD_COMPILE) | CB(CMD_RUN),
      "output directory, created with its parents (default: .)" },
    { O_OUTDIR, "-o", NULL, "DIR", CB(CMD_CHECK),
      "also write the actual outputs there as output_K.npy (created with\n"
      "its parents)" },
    { O_NAME, "--name", NULL, "NAME", CB(CMD_COMPILE),
      "prefix of the files and symbols, a C identifier of up to 64\n"
      "characters (default: the model file's stem)" },
    { O_CONSTANTS, "--constants", NULL, "c|bin", CB(CMD_COMPILE),
      "c (default): const arrays in NAME_constants.c (define\n"
      "NAME_CONST_ATTR, in capitals, to place them); bin: a NAME.bin blob\n"
      "the caller loads 16-byte aligned and passes to NAME_run" },
    { O_TARGET, "--target", NULL, "T", C_MODEL,
      "block sizes of the conv2d/dense kernels: generic (default;\n"
      "blocks that compilers vectorise at any SIMD width: SSE, AVX,\n"
      "NEON), x86-64-avx2 (gcc/clang -O3 with 256-bit vectors),\n"
      "x86-64-avx512 (512-bit vectors, 32 registers) or cortex-m\n"
      "(smallest); the output is portable C99 for every target. run\n"
      "and check with --cc default to what CC compiles for (its\n"
      "predefined macros: x86-64-avx512 with __AVX512F__, x86-64-avx2\n"
      "with __AVX2__ and __FMA__, else generic) and print it; with\n"
      "libtcc, generic" },
    { O_MAX_WS, "--max-workspace", NULL, "BYTES", C_BUDGET,
      "exit 3 when the workspace needs more (suffixes K, M, G or KiB,\n"
      "MiB, GiB: powers of 1024); the error names the tensors live at the\n"
      "peak" },
    { O_MAX_CONST, "--max-constants", NULL, "BYTES", C_BUDGET,
      "exit 3 when the constants need more (suffixes as above)" },
    { O_REPORT, "--report", NULL, "FILE.json", CB(CMD_COMPILE),
      "write a report: workspace, constants and I/O bytes, the memory\n"
      "plan (each buffer's offset, size, live range and tensors) and\n"
      "each kernel's MACs, and print a summary of a few lines; '-'\n"
      "writes the report to stdout instead (and no summary)" },
    { O_REPORT_SVG, "--report-svg", NULL, "FILE.svg", CB(CMD_COMPILE),
      "draw the memory plan: buffers as labelled boxes, node steps on x,\n"
      "workspace offsets on y, the peak marked" },
    { O_DEPFILE, "--depfile", NULL, "FILE", CB(CMD_COMPILE),
      "write a make/ninja depfile: the emitted files (and reports)\n"
      "depend on the model file and the params file" },
    { O_DUMP_AFTER, "--dump-after", NULL, "PASS", C_MODEL,
      "print the IR after PASS and continue; PASS is one of" },  /* the passes follow */
    { O_DUMP_IR, "--dump-ir", NULL, NULL, C_MODEL, "the same as --dump-after lower" },
    { O_INPUT, "--input", NULL, "NAME=FILE", C_EXEC,
      "input NAME, by its Relay name, from FILE.npy, or from the array\n"
      "NAME of FILE.npz (np.savez; or its only array, arr_0); --input\n"
      "FILE.npz alone takes every array, each named like an input" },
    { O_EXPECT, "--expect", NULL, "FILE", CB(CMD_CHECK),
      "the expected output K (.npy), in order, one per output" },
    { O_RTOL, "--rtol", NULL, "R", CB(CMD_CHECK), "relative tolerance (default 1e-4)" },
    { O_ATOL, "--atol", NULL, "A", CB(CMD_CHECK), "absolute tolerance (default 1e-5)" },
    { O_JSON_OUT, "--json", NULL, "FILE", CB(CMD_CHECK),
      "write the results as JSON to FILE ('-': stdout, instead of the\n"
      "text): per output its shape, dtype, tolerance, elements,\n"
      "mismatches, max errors and the worst elements" },
    { O_JUNIT, "--junit", NULL, "FILE", CB(CMD_CHECK),
      "write the results as JUnit XML, one testcase per output" },
    { O_REFERENCE, "--reference", NULL, NULL, C_EXEC,
      "run the reference kernels instead of the compiled code" },
    { O_CC, "--cc", NULL, "CC", C_EXEC,
      "build the code with the C compiler command CC instead of libtcc\n"
      "(slower to build, much faster to run): CC's words, split at\n"
      "blanks, then -shared -fPIC; -O2 unless CC gives an -O option.\n"
      "Without --target, the kernels are tuned for what CC compiles\n"
      "for (see --target), printed as 'target: T' once it is built.\n"
      "Examples: --cc gcc, --cc 'clang -O3 -march=native'" },
    { O_PROFILE, "--profile", NULL, NULL, C_EXEC,
      "time each kernel call (the emitted library's NAME_PROFILE hook)\n"
      "and print a table after the results: per call its kernel,\n"
      "output, Relay calls and time (median over --repeat runs), its\n"
      "share of the total, then the totals by Relay operator; check\n"
      "--json adds it to the report as \"profile\"" },
    { O_REPEAT, "--repeat", NULL, "N", C_EXEC,
      "with --profile: run N times after one untimed run and take\n"
      "each call's median (default 1: one timed run)" },
    { O_JSON, "--json", NULL, NULL, CB(CMD_INFO) | CB(CMD_OPS), "print one JSON object" },
    { O_QUIET, "--quiet", "-q", NULL, CB(CMD_COMPILE) | C_EXEC,
      "print nothing on stdout but what an option asks for (errors and\n"
      "warnings still go to stderr; the exit status tells the result)" },
    { O_HELP, "--help", "-h", NULL, C_MODEL | CB(CMD_OPS), "this text" },
};
#define NOPTS ((int)(sizeof optspecs / sizeof optspecs[0]))

typedef struct {
    int cmd;                    /* CMD_* */
    const char *cmd_name;       /* as typed ("verify" for check) */
    LoadOptions load;
    const char *dir;            /* MODEL given as a directory, or NULL */
    const char *outdir;         /* -o, or NULL */
    const char *name;
    ConstMode constants;
    Target target;              /* --target: what the conv2d / dense kernels are tuned for */
    bool target_set;            /* --target given (else run / check --cc ask the compiler) */
    bool target_asked;          /* target is what --cc's compiler compiles for */
    const char *dump_after;     /* pass name, "lower", or NULL */
    bool json, strict, quiet;
    bool reference;
    bool profile;               /* --profile: time each kernel call */
    int repeat;                 /* --repeat: timed runs with --profile */
    const char *cc;             /* --cc: the compiler command, or NULL (libtcc) */
    char **inputs;              /* stb_ds: "NAME=FILE" or "FILE.npz" */
    char **expects;             /* stb_ds */
    double rtol, atol;
    int64_t max_workspace, max_constants; /* -1: no limit */
    const char *report, *report_svg, *depfile; /* compile: extra outputs, or NULL */
    const char *json_out, *junit;              /* check: reports, or NULL */
    bool *suspect;              /* per input: looks like an unbound weight (flag_unbound) */
    bool progress;              /* stderr is a terminal and the model is large */
    char **owned;               /* stb_ds: strings made here (DIR's paths), freed at the end */
    char *options;              /* the options, as recorded in the header */
} Options;

RC_NORETURN static void die_with(int status, const char *fmt, ...) RC_PRINTF(2, 3);
static bool progress_shown;     /* a progress line is on the terminal (progress()) */

static void die_with(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (progress_shown)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "relayc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(status);
}
#define die(...) die_with(EXIT_ERROR, __VA_ARGS__)

static void put_lines(FILE *f, const char *text, int indent, bool first_too)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (p != text || first_too)
            fprintf(f, "%*s", indent, "");
        fprintf(f, "%.*s\n", (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: relayc COMMAND [MODEL.json|DIR] [options]\n\nCommands:\n");
    for (int c = 0; c < NCMDS; c++)
        fprintf(f, "  %-9s %s\n", cmds[c].name, cmds[c].brief);
    fprintf(f, "  %-9s the same as check\n", "verify");
    fprintf(f, "  %-9s this text; help COMMAND: that command's options and exit codes\n", "help");
    fprintf(f, "\nOptions, and the commands that take them:\n");
    for (int k = 0; k < NOPTS; k++) {
        const OptSpec *s = &optspecs[k];
        unsigned taken = 0;
        bool first = true;
        for (int j = 0; j < NOPTS; j++)
            if (!strcmp(optspecs[j].name, s->name)) {
                first = first && j >= k;
                taken |= optspecs[j].cmds;
            }
        if (!first)
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", s->alias ? s->alias : "", s->alias ? ", " : "", s->name);
        fprintf(f, "  %-17s", left);
        for (int c = 0; c < NCMDS; c++)
            if (taken & CB(c))
                fprintf(f, " %s", cmds[c].name);
        fprintf(f, "\n");
    }
    fprintf(f, "\n"
        "relayc COMMAND --help (or relayc help COMMAND) lists a command's options and exit codes.\n"
        "Options with a value take it as the next word or after '=' (--params=FILE).\n"
        "\n"
        "Exit codes: 0 success, 1 check: an output differs / info: unsupported operators,\n"
        "2 bad input or any error, 3 a budget exceeded (--max-workspace, --max-constants).\n"
        "\n"
        "--version prints the version.\n");
}

static void usage_cmd(FILE *f, int c)
{
    fprintf(f, "usage: relayc %s %s\n\n", cmds[c].name, cmds[c].synopsis);
    put_lines(f, cmds[c].about, 0, true);
    fprintf(f, "\nOptions:\n");
    for (int k = 0; k < NOPTS; k++) {
        const OptSpec *s = &optspecs[k];
        if (!(s->cmds & CB(c)))
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", s->alias ? s->alias : "", s->alias ? ", " : "",
                 s->name, s->metavar ? " " : "", s->metavar ? s->metavar : "");
        fprintf(f, "  %-21s ", left);
        if (strlen(left) > 21)
            fprintf(f, "\n%24s", "");
        if (s->id == O_DUMP_AFTER) {
            fprintf(f, "%s\n%24slower", s->help, "");
            for (int p = 0; passes[p].name; p++)
                fprintf(f, ", %s", passes[p].name);
            fprintf(f, "\n");
        } else {
            put_lines(f, s->help, 24, false);
        }
    }
    fprintf(f, "\nExit status: ");
    put_lines(f, cmds[c].exits, 13, false);
}

/* A byte count: digits, then nothing, B, K, M, G (powers of 1024) or KiB, MiB, GiB. */
static int64_t parse_bytes(const char *s, const char *opt)
{
    static const struct { const char *suffix; int shift; } sfx[] = {
        { "", 0 }, { "B", 0 }, { "K", 10 }, { "KiB", 10 }, { "M", 20 }, { "MiB", 20 },
        { "G", 30 }, { "GiB", 30 },
    };
    char *end;
    errno = 0;
    long long v = s[0] >= '0' && s[0] <= '9' ? strtoll(s, &end, 10) : -1;
    for (size_t k = 0; v >= 0 && !errno && k < sizeof sfx / sizeof sfx[0]; k++)
        if (!strcasecmp(end, sfx[k].suffix)) {
            if (v > (INT64_MAX >> sfx[k].shift))
                die("%s: the byte count '%s' is too large", opt, s);
            return (int64_t)v << sfx[k].shift;
        }
    die("%s: expected a byte count such as 65536, 64K, 64KiB, 2M or 1G, got '%s'", opt, s);
}

static double parse_double(const char *s, const char *opt)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0))
        die("%s: expected a non-negative number, got '%s'", opt, s);
    return v;
}

static int find_cmd(const char *name)
{
    for (int c = 0; c < NCMDS; c++)
        if (!strcmp(name, cmds[c].name))
            return c;
    return !strcmp(name, "verify") ? CMD_CHECK : -1;
}

/* The row of option name (or alias) for command cmd; NULL when cmd does not take it.
 * *known tells whether any command takes it. */
static const OptSpec *find_opt(const char *name, size_t len, int cmd, bool *known)
{
    *known = false;
    for (int k = 0; k < NOPTS; k++) {
        const OptSpec *s = &optspecs[k];
        if ((strlen(s->name) == len && !strncmp(s->name, name, len)) ||
            (s->alias && strlen(s->alias) == len && !strncmp(s->alias, name, len))) {
            *known = true;
            if (s->cmds & CB(cmd))
                return s;
        }
    }
    return NULL;
}

RC_NORETURN static void not_an_option_of(const char *opt, size_t len, int cmd);
static void not_an_option_of(const char *opt, size_t len, int cmd)
{
    Buf b = { 0 };
    unsigned seen = 0;
    for (int k = 0; k < NOPTS; k++) {
        const OptSpec *s = &optspecs[k];
        if ((strlen(s->name) == len && !strncmp(s->name, opt, len)) ||
            (s->alias && strlen(s->alias) == len && !strncmp(s->alias, opt, len)))
            seen |= s->cmds;
    }
    for (int c = 0; c < NCMDS; c++)
        if (seen & CB(c))
            buf_printf(&b, "%s%s", buf_len(&b) ? ", " : "", cmds[c].name);
    die("%s does not take %.*s (an option of %s; see relayc %s --help)", cmds[cmd].name, (int)len,
        opt, buf_cstr(&b), cmds[cmd].name);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void parse_args(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = 1e-4;
    o->atol = 1e-5;
    o->max_workspace = o->max_constants = -1;
    Buf opts = { 0 };
    if (argc < 2) {
        usage(stderr);
        exit(EXIT_ERROR);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        exit(EXIT_OK);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("relayc %s\n", RELAYC_VERSION);
        exit(EXIT_OK);
    }
    if (!strcmp(argv[1], "help")) {
        if (argc > 3)
            die("help: give at most one command");
        if (argc == 2) {
            usage(stdout);
            exit(EXIT_OK);
        }
        int c = find_cmd(argv[2]);
        if (c < 0)
            die("help: unknown command '%s' (compile, run, check, verify, info, ops)", argv[2]);
        usage_cmd(stdout, c);
        exit(EXIT_OK);
    }
    o->cmd_name = argv[1];
    o->cmd = find_cmd(argv[1]);
    if (o->cmd < 0)
        die("unknown command '%s' (compile, run, check, verify, info, ops, help; see relayc --help)",
            argv[1]);
    const char *cn = cmds[o->cmd].name;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !a[1]) {
            if (o->cmd == CMD_OPS)
                die("ops: unexpected argument '%s' (ops takes no model)", a);
            if (o->load.model_path)
                die("%s: unexpected argument '%s' (one model file per call)", cn, a);
            o->load.model_path = a;
            continue;
        }
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        bool known;
        const OptSpec *s = find_opt(a, len, o->cmd, &known);
        if (!s && !known)
            die("%s: unknown option '%.*s' (see relayc %s --help)", cn, (int)len, a, cn);
        if (!s)
            not_an_option_of(a, len, o->cmd);
        const char *v = NULL;
        if (s->metavar) {
            if (eq)
                v = eq + 1;
            else if (i + 1 < argc)
                v = argv[++i];
            else
                die("%s: %s needs a value (%s %s)", cn, s->name, s->name, s->metavar);
        } else if (eq) {
            die("%s: %s takes no value, got '%s'", cn, s->name, a);
        }
        switch (s->id) {
        case O_HELP:
            usage_cmd(stdout, o->cmd);
            exit(EXIT_OK);
        case O_PARAMS: {
            o->load.params_path = v;
            const char *pb = strrchr(v, '/');
            buf_printf(&opts, " --params %s", pb ? pb + 1 : v); /* the file name only: no paths */
            break;
        }
        case O_STRICT: o->strict = true; break;
        case O_FUNCTION:
            o->load.function = v;
            buf_printf(&opts, " --function %s", v);
            break;
        case O_OUTDIR:
            if (!*v)
                die("%s: -o needs a directory, got ''", cn);
            o->outdir = v;
            break;
        case O_NAME:
            o->name = v;
            buf_printf(&opts, " --name %s", v);
            break;
        case O_TARGET:
            if (!target_parse(v, &o->target))
                die("--target: expected generic, x86-64-avx2, x86-64-avx512 or cortex-m, got '%s'", v);
            o->target_set = true;
            buf_printf(&opts, " --target %s", v);
            break;
        case O_CONSTANTS:
            if (!strcmp(v, "c"))
                o->constants = CONST_C;
            else if (!strcmp(v, "bin"))
                o->constants = CONST_BIN;
            else
                die("--constants: expected c or bin, got '%s'", v);
            buf_printf(&opts, " --constants %s", v);
            break;
        case O_MAX_WS:
            o->max_workspace = parse_bytes(v, s->name);
            buf_printf(&opts, " --max-workspace %s", v);
            break;
        case O_MAX_CONST:
            o->max_constants = parse_bytes(v, s->name);
            buf_printf(&opts, " --max-constants %s", v);
            break;
        case O_REPORT: o->report = v; break;
        case O_REPORT_SVG: o->report_svg = v; break;
        case O_DEPFILE: o->depfile = v; break;
        case O_DUMP_AFTER: o->dump_after = v; break;
        case O_DUMP_IR: o->dump_after = "lower"; break;
        case O_INPUT: arrput(o->inputs, (char *)v); break;
        case O_EXPECT: arrput(o->expects, (char *)v); break;
        case O_RTOL: o->rtol = parse_double(v, s->name); break;
        case O_ATOL: o->atol = parse_double(v, s->name); break;
        case O_CC:
            if (!v[strspn(v, " \t")])
                die("--cc: expected a compiler command (gcc, 'clang -O3 -march=native', ...)");
            o->cc = v;
            break;
        case O_REFERENCE: o->reference = true; break;
        case O_PROFILE: o->profile = true; break;
        case O_REPEAT: {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (end == v || *end || errno || n < 1 || n > 1000000)
                die("--repeat: expected a number of runs from 1 to 1000000, got '%s'", v);
            o->repeat = (int)n;
            break;
        }
        case O_JSON: o->json = true; break;
        case O_JSON_OUT: o->json_out = v; break;
        case O_JUNIT: o->junit = v; break;
        case O_QUIET: o->quiet = true; break;
        }
    }
    if (o->cmd != CMD_OPS && !o->load.model_path)
        die("%s: no model file given", cn);
    if (o->cc && o->reference)
        die("%s: --cc and --reference exclude each other (--reference compiles nothing)", cn);
    if (o->profile && o->reference)
        die("%s: --profile times the compiled code; --reference runs none", cn);
    if (o->repeat && !o->profile)
        die("%s: --repeat N needs --profile (it sets the number of timed runs)", cn);
    if (o->report && o->report_svg && !strcmp(o->report, "-") && !strcmp(o->report_svg, "-"))
        die("compile: --report - and --report-svg - would both write to stdout");
    if (o->dump_after && strcmp(o->dump_after, "lower")) {
        bool known = false;
        Buf b = { 0 };
        for (int k = 0; passes[k].name; k++) {
            known = known || !strcmp(passes[k].name, o->dump_after);
            buf_printf(&b, ", %s", passes[k].name);
        }
        if (!known)
            die("--dump-after: unknown pass '%s' (passes: lower%s)", o->dump_after, buf_cstr(&b));
        buf_free(&b);
    }
    /* MODEL given as a directory: DIR/model.json, and DIR/model.params when present */
    if (o->load.model_path && is_dir(o->load.model_path)) {
        o->dir = o->load.model_path;
        char *mp = xasprintf("%s/model.json", o->dir);
        o->load.model_path = mp;
        arrput(o->owned, mp);
        char *pp = xasprintf("%s/model.params", o->dir);
        if (!o->load.params_path && is_file(pp)) {
            o->load.params_path = pp;
            arrput(o->owned, pp);
            buf_printf(&opts, " --params model.params");
        } else {
            free(pp);
        }
    }
    o->options = xstrdup(buf_len(&opts) ? buf_cstr(&opts) + 1 : "(defaults)");
    buf_free(&opts);
}

/* mkdir -p: creates dir and its missing parents. */
static void make_dirs(const char *dir)
{
    char *p = xstrdup(dir);
    for (char *q = p + 1; ; q++) {
        if (*q != '/' && *q)
            continue;
        char c = *q;
        *q = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            die("-o %s: cannot create %s: %s", dir, p, strerror(errno));
        *q = c;
        if (!c)
            break;
    }
    free(p);
    if (!is_dir(dir))
        die("-o %s: not a directory", dir);
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

/* An input named like a weight: ends, after '.' or '_' (or whole), in one of the names
 * front ends give parameters. */
static bool weight_like(const char *name)
{
    static const char *const tails[] = { "weight", "bias", "gamma", "beta", "running_mean",
        "running_var", "moving_mean", "moving_var", NULL };
    size_t n = strlen(name);
    for (int k = 0; tails[k]; k++) {
        size_t t = strlen(tails[k]);
        if (n >= t && !strcmp(name + n - t, tails[k]) &&
            (n == t || name[n - t - 1] == '.' || name[n - t - 1] == '_'))
            return true;
    }
    return false;
}

/* Marks (o->suspect) the inputs that look like parameters left unbound: named like
 * weights, or held by a params file beside the model when --params was not given
 * (model.json -> model.params); warns once on stderr, or fails with --strict. */
static void flag_unbound(Options *o, const Graph *g)
{
    int n = (int)arrlen(g->inputs);
    o->suspect = xcalloc((size_t)n + 1, sizeof(bool));
    NamedTensor *pv = NULL;
    int pc = 0;
    char *sib = NULL;
    if (!o->load.params_path) {
        const char *base = strrchr(o->load.model_path, '/');
        base = base ? base + 1 : o->load.model_path;
        const char *dot = strrchr(base, '.');
        size_t stem = dot && dot != base ? (size_t)(dot - o->load.model_path) : strlen(o->load.model_path);
        sib = xasprintf("%.*s.params", (int)stem, o->load.model_path);
        uint8_t *raw;
        size_t len;
        char err[512];
        if (is_file(sib) && read_file(sib, &raw, &len, err, sizeof err)) {
            if (!params_decode(raw, len, &pv, &pc, err, sizeof err))
                pv = NULL, pc = 0;
            free(raw);
        }
    }
    Buf names = { 0 };
    int count = 0;
    bool in_file = false;
    for (int i = 0; i < n; i++) {
        const char *nm = g->values[g->inputs[i]].name ? g->values[g->inputs[i]].name : "";
        bool s = weight_like(nm);
        for (int k = 0; k < pc; k++)
            if (!strcmp(pv[k].name, nm))
                s = in_file = true;
        if (!s)
            continue;
        o->suspect[i] = true;
        if (count++ < 4)
            buf_printf(&names, "%s'%s'", count > 1 ? ", " : "", nm);
    }
    if (count) {
        char *msg = xasprintf("%s: %d input%s look%s like unbound weights (%s%s, of %d inputs); %s%s",
            o->load.model_path, count, count > 1 ? "s" : "", count > 1 ? "" : "s", buf_cstr(&names),
            count > 4 ? ", ..." : "", n, in_file ? "bind them with --params " : o->load.params_path ?
            "the params file does not bind them" : "bind them with --params FILE",
            in_file ? sib : "");
        if (o->strict)
            die("%s (--strict)", msg);
        fprintf(stderr, "relayc: warning: %s (--strict makes this an error)\n", msg);
        free(msg);
    }
    buf_free(&names);
    params_free(pv, pc);
    free(sib);
}

/* The module's functions (its global_var_map_), quoted and comma-separated, for an error
 * about --function; nothing when the file is not a module that reads. */
static void module_functions(const Options *o, Buf *b)
{
    uint8_t *raw = NULL;
    size_t len;
    char err[512];
    if (!read_file(o->load.model_path, &raw, &len, err, sizeof err))
        return;
    jmp_buf jb;
    Diag d;
    memset(&d, 0, sizeof d);
    d.jmp = &jb;
    d.file = o->load.model_path;
    static RelayDoc doc;        /* static: unchanged across the longjmp */
    memset(&doc, 0, sizeof doc);
    if (!setjmp(jb)) {
        relay_doc_load(&doc, (const char *)raw, len, &d);
        int gvmap = doc_is(&doc, doc.root, "IRModule") ? doc_ref(&doc, doc.root, "global_var_map_") : 0;
        const JNode *n = gvmap ? doc_node(&doc, gvmap) : NULL;
        const cJSON *k;
        if (n && n->keys)
            cJSON_ArrayForEach(k, n->keys)
                if (cJSON_IsString(k))
                    buf_printf(b, "%s'%s'", buf_len(b) ? ", " : "", k->valuestring);
    }
    relay_doc_free(&doc);
    free(raw);
}

/* Progress on a terminal (o->progress: stderr is one, and the model is large): one line,
 * rewritten in place; NULL clears it. */
enum { PROGRESS_NODES = 2000, PROGRESS_SOURCE = 4 << 20 };

static void progress(const Options *o, const char *fmt, ...) RC_PRINTF(2, 3);
static void progress(const Options *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    fprintf(stderr, "\r\033[K");
    progress_shown = fmt != NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "relayc: %s: ", o->load.model_path);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " ...");
        va_end(ap);
    }
    fflush(stderr);
}

static int n_passes(void)
{
    int n = 0;
    while (passes[n].name)
        n++;
    return n;
}

/* "sigmoid takes float32, float64" for an unsupported call "OP on DTYPE" (u->takes set). */
static const char *op_takes(const OpUse *u, char *buf, size_t len)
{
    char dts[128];
    snprintf(buf, len, "%.*s takes %s", (int)strcspn(u->op, " "), u->op,
             dtype_set_str(u->takes, ", ", dts, sizeof dts));
    return buf;
}

/* Loads, runs the passes, plans memory. Exits on error. */
static void build(Options *o, Graph *g, ModelInfo *info, Plan *plan, bool need_supported)
{
    Diag d;
    memset(&d, 0, sizeof d);
    o->progress = isatty(2) && o->load.model_path && is_file(o->load.model_path);
    if (o->progress) {
        struct stat st;
        o->progress = stat(o->load.model_path, &st) == 0 && st.st_size > 2 << 20;
        progress(o, "reading and lowering the model");
    }
    bool loaded = load_model(&o->load, g, info, &d);
    progress(o, NULL);
    if (!loaded) {
        Buf fns = { 0 };
        if (o->load.function && strstr(d.msg, "has no function"))
            module_functions(o, &fns);
        fprintf(stderr, "relayc: error: %s%s%s%s\n", d.msg, buf_len(&fns) ? " (functions: " : "",
                buf_len(&fns) ? buf_cstr(&fns) : "", buf_len(&fns) ? ")" : "");
        exit(EXIT_ERROR);
    }
    flag_unbound(o, g);
    if (arrlen(info->unsupported) > 0) {
        if (!need_supported)
            return;
        Buf b = { 0 };
        bool unknown = false;
        for (int i = 0; i < (int)arrlen(info->unsupported); i++) {
            const OpUse *u = &info->unsupported[i];
            buf_printf(&b, "%s%s (nodes[%d]", i ? ", " : "", u->op, u->json);
            char takes[192];
            unknown |= !u->takes;
            if (u->takes)
                buf_printf(&b, "; %s", op_takes(u, takes, sizeof takes));
            buf_puts(&b, ")");
        }
        fprintf(stderr, "relayc: error: %s: unsupported operators: %s%s%s%s\n", o->load.model_path,
                buf_cstr(&b), unknown ? " (supported: " : "", unknown ? relay_op_list() : "",
                unknown ? ")" : "");
        exit(2);
    }
    if (o->dump_after && !strcmp(o->dump_after, "lower"))
        graph_print(g, stdout);
    ir_verify_after(g, NULL, "lowering");
    if (o->cc && !o->target_set) {
        /* run / check --cc: the best target for what the compiler compiles for */
        o->target = cc_target(o->cc);
        o->target_asked = true;
    }
    g->target = o->target;
    o->progress = isatty(2) && arrlen(g->nodes) > PROGRESS_NODES;
    for (int k = 0; passes[k].name; k++) {
        if (o->reference && passes[k].packs)
            continue; /* the reference kernels read plain weights */
        progress(o, "pass %s (%d of %d) on %d nodes", passes[k].name, k + 1, n_passes(),
                 (int)arrlen(g->nodes));
        passes[k].run(g);
        ir_verify_after(g, NULL, passes[k].name);
        if (o->dump_after && !strcmp(o->dump_after, passes[k].name))
            graph_print(g, stdout);
    }
    progress(o, "planning memory for %d kernels", (int)arrlen(g->nodes));
    plan_memory(g, plan);
    ir_verify_after(g, plan, "plan");
    progress(o, NULL);
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

/* Writes data to path, which exists and is not a regular file or a directory (/dev/null,
 * a pipe, a terminal): as it is, in place. Renaming a staged file over it would replace
 * the device or pipe with a regular file (as root, /dev/null itself). */
static void write_special(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        die("%s: cannot open: %s", path, strerror(errno));
    if (fwrite(data, 1, len, f) != len) {
        int e = errno;
        fclose(f);
        die("%s: cannot write: %s", path, strerror(e));
    }
    if (fclose(f) != 0)
        die("%s: cannot write: %s", path, strerror(errno));
}

/* Stages path, unless it already holds exactly these bytes (then it is left alone,
 * timestamp and all, so build systems see no change); a path that is a device or a pipe
 * is written as it is (write_special). */
static void write_output(const char *path, const void *data, size_t len)
{
    uint8_t *old;
    size_t oldlen;
    char err[512];
    struct stat st;
    for (ptrdiff_t i = 0; i < arrlen(staged); i++)
        if (!strcmp(staged[i].path, path))
            die("%s: two outputs of this command have the same path", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        write_special(path, data, len);
        return;
    }
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

/* --max-workspace, --max-constants: exit 3 when the model needs more. */
static void check_budgets(const Options *o, const Graph *g, const Plan *plan, int64_t constants)
{
    if (o->max_workspace >= 0 && plan->workspace > o->max_workspace) {
        Buf b = { 0 };
        live_at_peak(g, plan, &b);
        die_with(EXIT_BUDGET, "%s: the workspace needs %lld bytes, over --max-workspace %lld; live at "
                 "the peak: %s", o->load.model_path, (long long)plan->workspace,
                 (long long)o->max_workspace, buf_cstr(&b));
    }
    if (o->max_constants >= 0 && constants > o->max_constants)
        die_with(EXIT_BUDGET, "%s: the constants need %lld bytes, over --max-constants %lld",
                 o->load.model_path, (long long)constants, (long long)o->max_constants);
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
    const char *base = strrchr(o->load.model_path, '/');
    EmitOptions eo = { name, o->constants, false, base ? base + 1 : o->load.model_path, o->options };
    Emitted em;
    emit_library(&g, &plan, &eo, &em);
    check_budgets(o, &g, &plan, em.constants_size);
    if (!o->outdir)
        o->outdir = ".";
    make_dirs(o->outdir);
    char *ph = xasprintf("%s/%s.h", o->outdir, name);
    char *pc = xasprintf("%s/%s.c", o->outdir, name);
    char *pk = o->constants == CONST_BIN ? xasprintf("%s/%s.bin", o->outdir, name)
                                         : xasprintf("%s/%s_constants.c", o->outdir, name);
    write_output(pk, em.constants.data, buf_len(&em.constants));
    write_output(pc, em.source.data, buf_len(&em.source));
    write_output(ph, em.header.data, buf_len(&em.header));
    bool report_out = o->report && !strcmp(o->report, "-");
    bool svg_out = o->report_svg && !strcmp(o->report_svg, "-");
    if (!o->quiet && !report_out && !svg_out)
        printf("%s: workspace %lld bytes (peak of live intermediates %lld), constants %lld bytes, "
               "inputs and outputs %lld bytes\n",
               name, (long long)plan.workspace, (long long)plan.peak, (long long)em.constants_size,
               (long long)em.io_bytes);
    Buf rj = { 0 }, rs = { 0 };
    if (o->report) {
        report_json(&g, &plan, &eo, &em, &rj);
        if (!report_out)
            write_output(o->report, rj.data, buf_len(&rj));
        if (!o->quiet && !report_out && !svg_out) {
            Buf r = { 0 };
            report_text(&g, &plan, &eo, &em, &r);
            fputs(buf_cstr(&r), stdout);
            buf_free(&r);
        }
    }
    if (o->report_svg) {
        report_svg(&g, &plan, &eo, &em, &rs);
        if (!svg_out)
            write_output(o->report_svg, rs.data, buf_len(&rs));
    }
    if (o->depfile) {
        const char *targets[] = { ph, pc, pk, report_out ? NULL : o->report,
                                  svg_out ? NULL : o->report_svg };
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
    if (report_out)
        fwrite(rj.data, 1, buf_len(&rj), stdout);
    if (svg_out)
        fwrite(rs.data, 1, buf_len(&rs), stdout);
    buf_free(&rj);
    buf_free(&rs);
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

/* ---- .npz: np.savez's zip archive of .npy files, stored uncompressed ---- */

typedef struct {
    char *name;                 /* the array's name: the member's, less ".npy" */
    const uint8_t *data;
    size_t len;
} NpzEntry;

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

static bool is_zip(const uint8_t *p, size_t n) { return n >= 4 && le32(p) == 0x04034b50; }

/* The members of the .npz in p[0..n), from its central directory; false with a reason
 * in err when it is not one relayc reads. */
static bool npz_entries(const uint8_t *p, size_t n, NpzEntry **out, char *err, size_t errlen)
{
    *out = NULL;
    size_t eocd = SIZE_MAX;
    for (size_t back = 22; back <= n && back <= 22 + 65535 && eocd == SIZE_MAX; back++)
        if (le32(p + n - back) == 0x06054b50)
            eocd = n - back;
    if (eocd == SIZE_MAX) {
        snprintf(err, errlen, "not a .npz: no zip directory at its end (truncated?)");
        return false;
    }
    uint32_t count = le16(p + eocd + 10), cd = le32(p + eocd + 16);
    if (cd == 0xffffffffu || count == 0xffffu) {
        snprintf(err, errlen, ".npz: zip64 archives (over 4 GiB) are not supported");
        return false;
    }
    size_t at = cd;
    for (uint32_t k = 0; k < count; k++) {
        if (at + 46 > eocd || le32(p + at) != 0x02014b50) {
            snprintf(err, errlen, ".npz: zip directory entry %u is damaged", k);
            goto fail;
        }
        uint32_t method = le16(p + at + 10), csize = le32(p + at + 20);
        uint32_t nlen = le16(p + at + 28), xlen = le16(p + at + 30), clen = le16(p + at + 32);
        uint32_t lho = le32(p + at + 42);
        const char *name = (const char *)p + at + 46;
        if (at + 46 + nlen > eocd || (uint64_t)lho + 30 > n || le32(p + lho) != 0x04034b50) {
            snprintf(err, errlen, ".npz: zip entry %u is damaged", k);
            goto fail;
        }
        size_t data = (size_t)lho + 30 + le16(p + lho + 26) + le16(p + lho + 28);
        if (nlen < 5 || memcmp(name + nlen - 4, ".npy", 4)) {
            snprintf(err, errlen, ".npz: member '%.*s' is not a .npy", (int)(nlen > 200 ? 200 : nlen), name);
            goto fail;
        }
        if (method != 0) {
            snprintf(err, errlen, ".npz: member '%.*s' is compressed (np.savez_compressed); save "
                     "with np.savez", (int)(nlen > 200 ? 200 : nlen), name);
            goto fail;
        }
        if (data > n || csize > n - data) {
            snprintf(err, errlen, ".npz: member '%.*s' runs past the end of the file (truncated?)",
                     (int)(nlen > 200 ? 200 : nlen), name);
            goto fail;
        }
        NpzEntry e = { xstrndup(name, nlen - 4), p + data, csize };
        arrput(*out, e);
        at += 46 + nlen + xlen + clen;
    }
    return true;
fail:
    for (int i = 0; i < (int)arrlen(*out); i++)
        free((*out)[i].name);
    arrfree(*out);
    return false;
}

static void npz_free(NpzEntry *e)
{
    for (int i = 0; i < (int)arrlen(e); i++)
        free(e[i].name);
    arrfree(e);
}

/* Decodes the .npy in raw[0..len) as input which; what names it in messages. */
static void set_input(const Graph *g, Tensor *tensors, void **ptrs, int which, const char *what,
                      const uint8_t *raw, size_t len)
{
    const Value *v = &g->values[g->inputs[which]];
    char err[512], a[128], b[128];
    if (ptrs[which])
        die("%s: input '%s' given twice", what, v->name ? v->name : "");
    Tensor *t = &tensors[which];
    if (!npy_decode(raw, len, t, err, sizeof err))
        die("%s: %s", what, err);
    if (t->dtype != v->dtype || !shape_eq(&t->shape, &v->shape))
        die("%s: input '%s' must be %s %s, but the file holds %s %s", what, v->name ? v->name : "",
            dtype_name(v->dtype), shape_str(&v->shape, a, sizeof a), dtype_name(t->dtype),
            shape_str(&t->shape, b, sizeof b));
    ptrs[which] = aligned_alloc64(t->nbytes);
    if (t->nbytes)
        memcpy(ptrs[which], t->data, t->nbytes);
}

static int input_index(const Graph *g, const char *name)
{
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        if (g->values[g->inputs[i]].name && !strcmp(g->values[g->inputs[i]].name, name))
            return i;
    return -1;
}

static void input_names(const Graph *g, Buf *b)
{
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "%s'%s'", i ? ", " : "", g->values[g->inputs[i]].name);
    if (!arrlen(g->inputs))
        buf_puts(b, "none");
}

/* Reads every --input (NAME=FILE.npy, NAME=FILE.npz, FILE.npz), matched to the graph's
 * inputs by name, then DIR/input_NAME.npy for the others when the model is a DIR. */
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
        const char *file = eq ? eq + 1 : spec;
        bool whole_npz = !eq && strlen(spec) > 4 && !strcmp(spec + strlen(spec) - 4, ".npz");
        if (!eq && !whole_npz) {
            eq = strchr(spec, '=');
            if (!eq)
                die("--input %s: expected NAME=FILE.npy, NAME=FILE.npz or FILE.npz", spec);
            Buf b = { 0 };
            input_names(g, &b);
            die("--input %s: the model has no input named '%.*s' (inputs: %s)", spec,
                (int)(eq - spec), spec, buf_cstr(&b));
        }
        uint8_t *raw;
        size_t len;
        char err[512];
        if (!read_file(file, &raw, &len, err, sizeof err))
            die("%s: %s", file, err);
        if (!is_zip(raw, len)) {
            if (whole_npz)
                die("%s: not a .npz (a zip archive of .npy files)", file);
            set_input(g, tensors, ptrs, which, file, raw, len);
            free(raw);
            continue;
        }
        NpzEntry *es;
        if (!npz_entries(raw, len, &es, err, sizeof err))
            die("%s: %s", file, err);
        for (int i = 0; i < (int)arrlen(es); i++) {
            char *what = xasprintf("%s: array '%s'", file, es[i].name);
            int w = input_index(g, es[i].name);
            if (whole_npz && w < 0) {
                Buf b = { 0 };
                input_names(g, &b);
                die("%s: the model has no input of this name (inputs: %s)", what, buf_cstr(&b));
            }
            const char *want = g->values[g->inputs[which < 0 ? 0 : which]].name;
            if (whole_npz)
                set_input(g, tensors, ptrs, w, what, es[i].data, es[i].len);
            else if (!strcmp(es[i].name, want) || (arrlen(es) == 1 && !strcmp(es[i].name, "arr_0")))
                set_input(g, tensors, ptrs, which, what, es[i].data, es[i].len);
            free(what);
        }
        if (!whole_npz && !ptrs[which]) {
            Buf b = { 0 };
            for (int i = 0; i < (int)arrlen(es); i++)
                buf_printf(&b, "%s'%s'", i ? ", " : "", es[i].name);
            die("%s: no array named '%s' (arrays: %s)", file, g->values[g->inputs[which]].name,
                arrlen(es) ? buf_cstr(&b) : "none");
        }
        npz_free(es);
        free(raw);
    }
    for (int i = 0; i < n && o->dir; i++) {
        if (ptrs[i])
            continue;
        char *path = xasprintf("%s/input_%s.npy", o->dir, g->values[g->inputs[i]].name);
        uint8_t *raw;
        size_t len;
        char err[512];
        if (is_file(path)) {
            if (!read_file(path, &raw, &len, err, sizeof err))
                die("%s: %s", path, err);
            set_input(g, tensors, ptrs, i, path, raw, len);
            free(raw);
        }
        free(path);
    }
    for (int i = 0; i < n; i++) {
        const Value *v = &g->values[g->inputs[i]];
        if (!ptrs[i] && o->dir)
            die("missing --input %s=FILE.npy (input %d, %s), and no %s/input_%s.npy", v->name, i,
                dtype_name(v->dtype), o->dir, v->name);
        if (!ptrs[i])
            die("missing --input %s=FILE.npy (input %d, %s)", v->name, i, dtype_name(v->dtype));
    }
    return ptrs;
}

typedef int (*RunGeneric)(const void *const *, void *const *, void *, const void *);

/* ---- --profile: the time of each kernel call ----
 * The model is built with MODEL_PROFILE defined, and model_run_generic_profiled calls
 * profile_hook before and after each kernel call (NAME.h documents the hook). */

/* The emitted model_profile_call, field for field. */
typedef struct {
    int index, node;
    const char *kernel, *relay, *output;
} ProfileCall;

typedef void (*ProfileHook)(void *, const ProfileCall *, int);
typedef int (*RunProfiled)(const void *const *, void *const *, void *, const void *, ProfileHook,
                           void *);

typedef struct {
    ProfileCall *calls;         /* stb_ds: the calls, as the first timed run made them (the
                                 * strings copied once the runs are done: they live in the
                                 * compiled code) */
    double *us;                 /* stb_ds: microseconds of call k of run r at [r * ncalls + k] */
    double *run_us;             /* stb_ds: microseconds of each run, the whole model_run */
    int run;                    /* the run being timed; -1: the untimed one */
    bool bad;                   /* calls came out of order (or not the same in every run) */
    struct timespec start;      /* of the call in progress */
} Profile;

static double us_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e6 + (double)(t.tv_nsec - t0->tv_nsec) / 1e3;
}

static void profile_hook(void *ctx, const ProfileCall *call, int end)
{
    Profile *p = ctx;
    if (!end) {
        clock_gettime(CLOCK_MONOTONIC, &p->start);
        return;
    }
    double us = us_since(&p->start);
    if (p->run < 0)
        return;
    if (p->run == 0)
        arrput(p->calls, *call);
    int n = (int)arrlen(p->calls);
    if (call->index != (int)arrlen(p->us) - p->run * n || call->index >= n)
        p->bad = true;
    else
        arrput(p->us, us);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0], v[stride], ... (n values). */
static double median(const double *v, int n, int stride)
{
    double *t = xcalloc((size_t)n + 1, sizeof(double));
    for (int i = 0; i < n; i++)
        t[i] = v[(size_t)i * (size_t)stride];
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    free(t);
    return m;
}

/* The Relay operator a profiled call is counted under: its first Relay call's. */
static void first_op(const ProfileCall *c, char *buf, size_t len)
{
    const char *sp = strchr(c->relay, ' ');
    snprintf(buf, len, "%.*s", sp ? (int)strcspn(sp + 1, " ") : 0, sp ? sp + 1 : "");
}

/* Per call its median over the runs (med, allocated), and their sum. */
static double profile_medians(const Profile *p, double **med)
{
    int n = (int)arrlen(p->calls), runs = (int)arrlen(p->run_us);
    double sum = 0;
    *med = xcalloc((size_t)n + 1, sizeof(double));
    for (int k = 0; k < n; k++)
        sum += (*med)[k] = median(p->us + k, runs, n);
    return sum;
}

/* The table --profile prints: the calls in run order, then the totals by operator. */
static void profile_text(const Options *o, const Profile *p, Buf *b)
{
    int n = (int)arrlen(p->calls), runs = (int)arrlen(p->run_us);
    double *med;
    double sum = profile_medians(p, &med);
    double pct = sum > 0 ? 100 / sum : 0;
    buf_printf(b, "profile: %d kernel calls, %s, %s%d run%s: %.1f us a run, %.1f us in the kernels\n",
               n, o->cc ? o->cc : "libtcc", runs > 1 ? "median of " : "", runs, runs > 1 ? "s" : "",
               median(p->run_us, runs, 1), sum);
    buf_printf(b, "%5s %5s %11s %6s  %-20s %-26s %s\n", "call", "node", "us", "%", "kernel", "output",
               "relay");
    for (int k = 0; k < n; k++) {
        const ProfileCall *c = &p->calls[k];
        buf_printf(b, "%5d %5d %11.1f %6.2f  %-20s %-26s %s\n", c->index, c->node, med[k],
                   med[k] * pct, c->kernel, c->output, c->relay);
    }
    /* by operator, the largest first (ties in name order) */
    char (*ops)[64] = xcalloc((size_t)n + 1, sizeof *ops);
    double *t = xcalloc((size_t)n + 1, sizeof(double));
    int *cnt = xcalloc((size_t)n + 1, sizeof(int));
    int nops = 0;
    for (int k = 0; k < n; k++) {
        char op[64];
        first_op(&p->calls[k], op, sizeof op);
        int j = 0;
        while (j < nops && strcmp(ops[j], op))
            j++;
        if (j == nops)
            snprintf(ops[nops++], sizeof ops[0], "%s", op);
        t[j] += med[k];
        cnt[j]++;
    }
    for (int i = 0; i < nops; i++)
        for (int j = i + 1; j < nops; j++)
            if (t[j] > t[i] || (t[j] == t[i] && strcmp(ops[j], ops[i]) < 0)) {
                char x[64];
                memcpy(x, ops[i], sizeof x), memcpy(ops[i], ops[j], sizeof x), memcpy(ops[j], x, sizeof x);
                double d = t[i];
                t[i] = t[j], t[j] = d;
                int c = cnt[i];
                cnt[i] = cnt[j], cnt[j] = c;
            }
    buf_puts(b, "by operator (each call under its first Relay call):\n");
    for (int i = 0; i < nops; i++)
        buf_printf(b, "  %-24s %5d call%s %11.1f us %6.2f%%\n", ops[i], cnt[i], cnt[i] > 1 ? "s" : " ",
                   t[i], t[i] * pct);
    free(ops);
    free(t);
    free(cnt);
    free(med);
}

static cJSON *profile_json(const Options *o, const Profile *p)
{
    int n = (int)arrlen(p->calls), runs = (int)arrlen(p->run_us);
    double *med;
    double sum = profile_medians(p, &med);
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "compiler", o->cc ? o->cc : "libtcc");
    cJSON_AddNumberToObject(x, "runs", runs);
    cJSON_AddNumberToObject(x, "run_us", median(p->run_us, runs, 1));
    cJSON_AddNumberToObject(x, "kernels_us", sum);
    cJSON *cs = cJSON_AddArrayToObject(x, "calls");
    for (int k = 0; k < n; k++) {
        const ProfileCall *c = &p->calls[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", c->index);
        cJSON_AddNumberToObject(e, "node", c->node);
        cJSON_AddStringToObject(e, "kernel", c->kernel);
        cJSON_AddStringToObject(e, "output", c->output);
        cJSON_AddStringToObject(e, "relay", c->relay);
        cJSON_AddNumberToObject(e, "us", med[k]);
        cJSON_AddNumberToObject(e, "percent", sum > 0 ? med[k] * 100 / sum : 0);
        cJSON_AddItemToArray(cs, e);
    }
    free(med);
    return x;
}

static void profile_free(Profile *p)
{
    for (int k = 0; k < (int)arrlen(p->calls); k++) {
        free((char *)p->calls[k].kernel);
        free((char *)p->calls[k].relay);
        free((char *)p->calls[k].output);
    }
    arrfree(p->calls);
    arrfree(p->us);
    arrfree(p->run_us);
}

/* Runs the model on the inputs; fills outs (allocated here) in result order. With prof,
 * runs it as --profile and --repeat ask, timing each kernel call. */
static void execute(Options *o, const Graph *g, const Plan *plan, void **ins, void **outs,
                    Profile *prof)
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
    if (prof) {
        /* the same code, with the profiling marks compiled in; the blob's checksum (over
         * all the constants) checked once, not in every timed run */
        Buf src = { 0 };
        buf_puts(&src, "#define MODEL_PROFILE 1\n#define MODEL_CONSTANTS_CHECKED 1\n");
        buf_write(&src, em.source.data, buf_len(&em.source));
        buf_free(&em.source);
        em.source = src;
    }
    char err[1024];
    if (isatty(2) && buf_len(&em.source) > PROGRESS_SOURCE) {
        o->progress = true;
        progress(o, "building %.1f MB of C (%d kernels) with %s", buf_len(&em.source) / 1048576.0,
                 (int)arrlen(g->nodes), o->cc ? o->cc : "libtcc");
    }
    Jit *j = jit_compile(buf_cstr(&em.source), o->cc, err, sizeof err);
    progress(o, NULL);
    if (!j)
        die("%s: %s", o->load.model_path, err);
    if (o->target_asked && !o->quiet && !(o->json_out && !strcmp(o->json_out, "-")))
        printf("target: %s (what '%s' compiles for; --target to choose)\n",
               target_name[o->target], o->cc);
    const char *entry = prof ? "model_run_generic_profiled" : "model_run_generic";
    void *sym = jit_symbol(j, entry);
    if (!sym)
        die("%s: %s not found in the generated code", o->load.model_path, entry);
    void *ws = aligned_alloc64((size_t)plan->workspace);
    void *cb = aligned_alloc64(buf_len(&em.constants));
    memcpy(cb, em.constants.data, buf_len(&em.constants));
    int rc;
    if (!prof) {
        RunGeneric fn;
        memcpy(&fn, &sym, sizeof fn);
        rc = fn((const void *const *)ins, outs, ws, cb);
    } else {
        RunProfiled fn;
        memcpy(&fn, &sym, sizeof fn);
        int (*check_constants)(const void *);
        void *cs = jit_symbol(j, "model_check_constants");
        if (!cs)
            die("%s: model_check_constants not found in the generated code", o->load.model_path);
        memcpy(&check_constants, &cs, sizeof check_constants);
        int timed = o->repeat ? o->repeat : 1;
        rc = check_constants(cb);
        for (prof->run = o->repeat > 1 ? -1 : 0; prof->run < timed && !rc && !prof->bad; prof->run++) {
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = fn((const void *const *)ins, outs, ws, cb, profile_hook, prof);
            double us = us_since(&t0);
            if (prof->run >= 0)
                arrput(prof->run_us, us);
        }
        if (prof->bad || arrlen(prof->us) != arrlen(prof->calls) * arrlen(prof->run_us))
            die("%s: the profiled calls came out of order", o->load.model_path);
        for (int k = 0; k < (int)arrlen(prof->calls); k++) { /* before jit_free unmaps them */
            ProfileCall *c = &prof->calls[k];
            c->kernel = xstrdup(c->kernel), c->relay = xstrdup(c->relay), c->output = xstrdup(c->output);
        }
    }
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

/* ---- check: comparing an output with its expected values ---- */

enum { WORST_K = 5 };           /* the worst elements --json and --junit list */

typedef struct {
    int64_t at;                 /* flat index */
    double ratio;               /* |got - want| over the tolerance; inf for NaN, inf mismatches */
    bool bad;
} Worst;

typedef struct {
    int64_t n, bad;
    double max_abs, max_rel;
    Worst worst[WORST_K];       /* mismatches first, then by ratio, then by index */
    int nworst;
} Compare;

static bool worse(const Worst *a, const Worst *b)
{
    if (a->bad != b->bad)
        return a->bad;
    if (a->ratio != b->ratio)
        return a->ratio > b->ratio;
    return a->at < b->at;
}

static void compare(const Tensor *got, const Tensor *want, double rtol, double atol, Compare *c)
{
    memset(c, 0, sizeof *c);
    c->n = shape_numel(&got->shape);
    for (int64_t k = 0; k < c->n; k++) {
        double x = elem(got, k), y = elem(want, k);
        double diff, tol = atol + rtol * fabs(y);
        bool ok;
        if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) {
            ok = isnan(x) ? isnan(y) : x == y;
            diff = ok ? 0 : INFINITY;
        } else {
            diff = fabs(x - y);
            ok = diff <= tol;
        }
        Worst w = { k, diff == 0 ? 0 : !ok ? (tol > 0 ? diff / tol : INFINITY) : diff / tol, !ok };
        if (!ok && !(w.ratio > 1))
            w.ratio = INFINITY;         /* a mismatch ranks above every match */
        c->bad += !ok;
        if (diff > c->max_abs)
            c->max_abs = diff;
        if (!ok && isinf(diff))
            c->max_rel = INFINITY;
        else if (y != 0 && isfinite(y) && diff / fabs(y) > c->max_rel)
            c->max_rel = diff / fabs(y);
        if (c->nworst < WORST_K || worse(&w, &c->worst[WORST_K - 1])) {
            int i = c->nworst < WORST_K ? c->nworst++ : WORST_K - 1;
            for (; i > 0 && worse(&w, &c->worst[i - 1]); i--)
                c->worst[i] = c->worst[i - 1];
            c->worst[i] = w;
        }
    }
}

/* A number for JSON: finite ones as numbers, the others as "nan", "inf", "-inf". */
static cJSON *json_num(double v)
{
    if (isfinite(v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static cJSON *index_json(const Shape *s, int64_t flat)
{
    int64_t idx[RC_MAX_RANK];
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dim[d] ? flat % s->dim[d] : 0;
        flat = s->dim[d] ? flat / s->dim[d] : 0;
    }
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; d < s->rank; d++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)idx[d]));
    return a;
}

static cJSON *shape_json(const Shape *s);

static cJSON *compare_json(const Options *o, int k, const Tensor *got, const Tensor *want,
                           const Compare *c)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "output", k);
    cJSON_AddStringToObject(x, "expected_file", o->expects[k]);
    cJSON_AddItemToObject(x, "shape", shape_json(&got->shape));
    cJSON_AddStringToObject(x, "dtype", dtype_name(got->dtype));
    cJSON_AddNumberToObject(x, "rtol", o->rtol);
    cJSON_AddNumberToObject(x, "atol", o->atol);
    cJSON_AddNumberToObject(x, "elements", (double)c->n);
    cJSON_AddNumberToObject(x, "mismatches", (double)c->bad);
    cJSON_AddItemToObject(x, "max_abs_error", json_num(c->max_abs));
    cJSON_AddItemToObject(x, "max_rel_error", json_num(c->max_rel));
    cJSON_AddStringToObject(x, "status", c->bad ? "mismatch" : "ok");
    cJSON *ws = cJSON_AddArrayToObject(x, "worst");
    for (int i = 0; i < c->nworst; i++) {
        const Worst *w = &c->worst[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "index", index_json(&got->shape, w->at));
        cJSON_AddItemToObject(e, "got", json_num(elem(got, w->at)));
        cJSON_AddItemToObject(e, "expected", json_num(elem(want, w->at)));
        double d = elem(got, w->at) - elem(want, w->at);
        cJSON_AddItemToObject(e, "abs_error", json_num(w->bad && !isfinite(d) ? INFINITY : fabs(d)));
        cJSON_AddBoolToObject(e, "ok", !w->bad);
        cJSON_AddItemToArray(ws, e);
    }
    return x;
}

static void put_xml(Buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&' || ch == '<' || ch == '>' || ch == '"' || ch < 0x20 || ch >= 0x7f)
            buf_printf(b, "&#%d;", ch < 0x20 && ch != '\n' && ch != '\t' ? 0xfffd : ch);
        else
            buf_write(b, s, 1);
    }
}

/* The line check prints for output k (also the JUnit failure message). */
static void compare_line(const Options *o, int k, const Tensor *got, const Tensor *want,
                         const Compare *c, Buf *b)
{
    buf_printf(b, "output %d: %s: %lld of %lld elements differ; max abs error %.3g, max rel error %.3g",
               k, c->bad ? "MISMATCH" : "ok", (long long)c->bad, (long long)c->n, c->max_abs,
               c->max_rel);
    if (c->nworst) {
        char idx[160];
        index_text(&got->shape, c->worst[0].at, idx, sizeof idx);
        buf_printf(b, "; worst at %s: got %.9g, expected %.9g", idx, elem(got, c->worst[0].at),
                   elem(want, c->worst[0].at));
    }
    buf_printf(b, " (rtol %g, atol %g)", o->rtol, o->atol);
}

static void read_expected(Options *o, const Graph *g, Tensor *want)
{
    int nout = (int)arrlen(g->outputs);
    if (o->dir && arrlen(o->expects) == 0)
        for (int k = 0; k < nout; k++) {
            char *e = xasprintf("%s/expected_%d.npy", o->dir, k);
            arrput(o->expects, e);
            arrput(o->owned, e);
        }
    if ((int)arrlen(o->expects) != nout)
        die("check: the model has %d outputs but %d --expect files were given", nout,
            (int)arrlen(o->expects));
    for (int k = 0; k < nout; k++) {
        uint8_t *raw;
        size_t len;
        char err[512], a[128], b[128];
        if (!read_file(o->expects[k], &raw, &len, err, sizeof err))
            die("%s: %s", o->expects[k], err);
        bool ok = npy_decode(raw, len, &want[k], err, sizeof err);
        free(raw);
        if (!ok)
            die("%s: %s", o->expects[k], err);
        const Value *v = &g->values[g->outputs[k]];
        if (want[k].dtype != v->dtype || !shape_eq(&want[k].shape, &v->shape))
            die("%s: output %d is %s %s, but the file holds %s %s", o->expects[k], k,
                dtype_name(v->dtype), shape_str(&v->shape, a, sizeof a), dtype_name(want[k].dtype),
                shape_str(&want[k].shape, b, sizeof b));
    }
}

/* Stages DIR/output_K.npy for every output. */
static void write_outputs_npy(const Options *o, const Graph *g, void **outs, bool print)
{
    make_dirs(o->outdir);
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        Tensor t = output_tensor(g, i, outs[i]);
        uint8_t *bytes;
        size_t len;
        npy_encode(&t, &bytes, &len);
        char *path = xasprintf("%s/output_%d.npy", o->outdir, i);
        write_output(path, bytes, len);     /* staged; renamed together */
        if (print)
            printf("%s\n", path);
        free(path);
        free(bytes);
    }
}

static int cmd_run_or_check(Options *o, bool check)
{
    Graph g;
    ModelInfo info;
    Plan plan;
    if (check && arrlen(o->expects) == 0 && !o->dir)
        die("check: give the expected outputs with --expect FILE.npy (one per output, in order), "
            "or a directory holding expected_K.npy");
    build(o, &g, &info, &plan, true);
    int nout = (int)arrlen(g.outputs);
    Tensor *tin = xcalloc(arrlen(g.inputs) + 1, sizeof(Tensor));
    Tensor *want = xcalloc((size_t)nout + 1, sizeof(Tensor));
    /* read everything before running, so a bad file fails fast */
    if (check)
        read_expected(o, &g, want);
    void **ins = read_inputs(o, &g, tin);
    void **outs = xcalloc((size_t)nout + 1, sizeof(void *));
    Profile prof;
    memset(&prof, 0, sizeof prof);
    execute(o, &g, &plan, ins, outs, o->profile ? &prof : NULL);
    int status = EXIT_OK;
    bool text = !o->quiet && !(o->json_out && !strcmp(o->json_out, "-"));
    if (!check) {
        if (!o->outdir)
            o->outdir = ".";
        write_outputs_npy(o, &g, outs, !o->quiet);
        commit_outputs();
        fflush(stdout);
    } else {
        if (o->outdir)
            write_outputs_npy(o, &g, outs, false);
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "model", o->load.model_path);
        cJSON *jouts = cJSON_CreateArray();
        Buf junit = { 0 }, line = { 0 };
        int failures = 0;
        for (int i = 0; i < nout; i++) {
            Tensor t = output_tensor(&g, i, outs[i]);
            Compare c;
            compare(&t, &want[i], o->rtol, o->atol, &c);
            buf_free(&line);
            compare_line(o, i, &t, &want[i], &c, &line);
            if (text)
                printf("%s\n", buf_cstr(&line));
            cJSON_AddItemToArray(jouts, compare_json(o, i, &t, &want[i], &c));
            buf_printf(&junit, "    <testcase classname=\"relayc.check\" name=\"output_%d\">\n", i);
            if (c.bad) {
                status = EXIT_MISMATCH;
                failures++;
                buf_puts(&junit, "      <failure message=\"");
                put_xml(&junit, buf_cstr(&line));
                buf_puts(&junit, "\" type=\"mismatch\">");
                put_xml(&junit, o->expects[i]);
                buf_puts(&junit, "</failure>\n");
            }
            buf_puts(&junit, "    </testcase>\n");
        }
        cJSON_AddStringToObject(root, "status", status ? "mismatch" : "match");
        cJSON_AddItemToObject(root, "outputs", jouts);
        if (o->profile)
            cJSON_AddItemToObject(root, "profile", profile_json(o, &prof));
        if (o->junit) {
            Buf x = { 0 };
            buf_printf(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                           "<testsuites tests=\"%d\" failures=\"%d\">\n"
                           "  <testsuite name=\"", nout, failures);
            put_xml(&x, o->load.model_path);
            buf_printf(&x, "\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", nout, failures);
            buf_write(&x, junit.data, buf_len(&junit));
            buf_puts(&x, "  </testsuite>\n</testsuites>\n");
            write_output(o->junit, x.data, buf_len(&x));
            buf_free(&x);
        }
        char *js = cJSON_Print(root);
        if (o->json_out && strcmp(o->json_out, "-")) {
            Buf x = { 0 };
            buf_printf(&x, "%s\n", js);
            write_output(o->json_out, x.data, buf_len(&x));
            buf_free(&x);
        }
        commit_outputs();
        if (o->json_out && !strcmp(o->json_out, "-"))
            printf("%s\n", js);
        free(js);
        cJSON_Delete(root);
        buf_free(&junit);
        buf_free(&line);
    }
    if (o->profile && !(o->json_out && !strcmp(o->json_out, "-"))) { /* else in the JSON */
        Buf t = { 0 };
        profile_text(o, &prof, &t);
        fputs(buf_cstr(&t), stdout);
        buf_free(&t);
    }
    profile_free(&prof);
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
            if (o->suspect[i])
                cJSON_AddBoolToObject(x, "looks_like_weight", true);
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
            printf("input %d:   %s %s %s%s\n", i, v->name ? v->name : "", dtype_name(v->dtype),
                   shape_str(&v->shape, s, sizeof s),
                   o->suspect[i] ? "  (looks like an unbound weight: --params?)" : "");
        }
        for (int i = 0; i < (int)arrlen(g.outputs); i++) {
            const Value *v = &g.values[g.outputs[i]];
            printf("output %d:  %s %s\n", i, dtype_name(v->dtype), shape_str(&v->shape, s, sizeof s));
        }
        printf("operators:");
        for (int k = 0; k < (int)arrlen(names); k++)
            printf(" %s x%d%s", names[k], counts[k], k + 1 < (int)arrlen(names) ? "," : "");
        printf("\nconstants: %lld in the model and params files, %lld bytes as stored\n",
               (long long)info.const_count, (long long)info.const_bytes);
        if (supported)
            printf("memory:    workspace %lld bytes (peak of live intermediates %lld), constants %lld "
                   "bytes after folding and packing, inputs and outputs %lld bytes\n",
                   (long long)plan.workspace,
                   (long long)plan.peak, (long long)em.constants_size, (long long)em.io_bytes);
        for (int i = 0; i < (int)arrlen(info.unsupported); i++) {
            const OpUse *u = &info.unsupported[i];
            char takes[192];
            printf("unsupported: %s at nodes[%d]", u->op, u->json);
            if (u->takes)
                printf(" (%s)", op_takes(u, takes, sizeof takes));
            printf("\n");
        }
    }
    fflush(stdout);
    if (supported)
        check_budgets(o, &g, &plan, em.constants_size);
    arrfree(names);
    arrfree(counts);
    emitted_free(&em);
    plan_free(&plan);
    model_info_free(&info);
    graph_free(&g);
    return supported ? EXIT_OK : EXIT_MISMATCH;
}

/* ---- ops ---- */

static int cmd_ops(const Options *o)
{
    const char *name;
    unsigned dts;
    int width = 0;
    char list[128];
    for (int i = 0; relay_op_at(i, &name, &dts); i++)
        width = (int)strlen(name) > width ? (int)strlen(name) : width;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; relay_op_at(i, &name, &dts); i++) {
        if (!o->json) {
            printf("%-*s  %s\n", width, name, dtype_set_str(dts, " ", list, sizeof list));
            continue;
        }
        cJSON *op = cJSON_CreateObject(), *dl = cJSON_CreateArray();
        cJSON_AddStringToObject(op, "name", name);
        for (int t = 0; t < DT_COUNT; t++)
            if (dts & DTS(t))
                cJSON_AddItemToArray(dl, cJSON_CreateString(dtype_name((DType)t)));
        cJSON_AddItemToObject(op, "dtypes", dl);
        cJSON_AddItemToArray(arr, op);
    }
    if (o->json) {
        char *text = cJSON_Print(arr);
        printf("%s\n", text);
        free(text);
    }
    cJSON_Delete(arr);
    return EXIT_OK;
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
    if (o.cmd == CMD_COMPILE)
        rc = cmd_compile(&o);
    else if (o.cmd == CMD_INFO)
        rc = cmd_info(&o);
    else if (o.cmd == CMD_OPS)
        rc = cmd_ops(&o);
    else
        rc = cmd_run_or_check(&o, o.cmd == CMD_CHECK);
    arrfree(o.inputs);
    arrfree(o.expects);
    for (int i = 0; i < (int)arrlen(o.owned); i++)
        free(o.owned[i]);
    arrfree(o.owned);
    free(o.suspect);
    free(o.options);
    return rc;
}
