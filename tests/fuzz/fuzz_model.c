/*
 * fuzz_model.c: libFuzzer target over the whole path from bytes to emitted C:
 * JSON text -> load_model (relay_json.c, load.c, ops.c) -> passes -> plan_memory ->
 * emit_library, with the constants as C arrays and as a NAME.bin sidecar. Nothing is
 * written to disk: the model is read from memory (LoadOptions.model_data).
 *
 * The input is a Relay JSON document. It may be followed by a params file: when the
 * bytes hold the separator "\n#PARAMS#\n", what follows it is the save_param_dict file
 * (so the fuzzer can also exercise binding by name).
 *
 * Built with -fsanitize=fuzzer (tests/fuzz/meson.build, -Dfuzz=true under clang), or
 * with tests/fuzz/replay_main.c as a plain program that replays files (the meson test
 * fuzz_replay, in every build).
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SEP[] = "\n#PARAMS#\n";

/* A few cheap invariants of the emitted text: no NUL bytes, no raw control bytes other
 * than newlines, no trigraphs, and every comment and literal closes on its own line
 * (block comments: before the end of the file). Names from the model end up in comments
 * and string literals; this is where a bad escape would show. */
static void check_text(const Buf *b)
{
    size_t n = buf_len(b);
    const char *s = b->data;
    enum { CODE, BLOCK, LINE, STR, CHR } st = CODE;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char next = i + 1 < n ? s[i + 1] : 0;
        if (c == 0 || (c < 0x20 && c != '\n') || c >= 0x7f)
            abort();
        if (c == '?' && next == '?')
            abort();                    /* a trigraph could start here */
        switch (st) {
        case CODE:
            if (c == '/' && next == '*')
                st = BLOCK, i++;
            else if (c == '/' && next == '/')
                st = LINE, i++;
            else if (c == '"')
                st = STR;
            else if (c == '\'')
                st = CHR;
            break;
        case BLOCK:
            if (c == '*' && next == '/')
                st = CODE, i++;
            else if (c == '\\' && next == '\n')
                abort();                /* a line splice inside a comment: a name leaked */
            break;
        case LINE:
            if (c == '\\' && next == '\n')
                abort();
            if (c == '\n')
                st = CODE;
            break;
        case STR:
        case CHR:
            if (c == '\n')
                abort();
            if (c == '\\')
                i++;
            else if (c == (st == STR ? '"' : '\''))
                st = CODE;
            break;
        }
    }
    if (st != CODE && st != LINE)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    LoadOptions o;
    memset(&o, 0, sizeof o);
    o.model_path = "fuzz.json";
    o.model_data = data;
    o.model_len = size;
    const uint8_t *sep = NULL;
    for (size_t i = 0; size >= sizeof SEP - 1 && i <= size - (sizeof SEP - 1); i++)
        if (data[i] == '\n' && memcmp(data + i, SEP, sizeof SEP - 1) == 0) {
            sep = data + i;
            break;
        }
    if (sep) {
        o.model_len = (size_t)(sep - data);
        o.params_path = "fuzz.params";
        o.params_data = sep + sizeof SEP - 1;
        o.params_len = size - o.model_len - (sizeof SEP - 1);
        if (o.params_len == 0)
            o.params_data = (const uint8_t *)""; /* an empty params file, not none */
    }
    Graph g;
    ModelInfo info;
    Diag d;
    memset(&d, 0, sizeof d);
    if (!load_model(&o, &g, &info, &d)) {
        /* the one-line error rule: "FILE: WHERE: WHAT", no newline */
        if (d.code != 2 || strchr(d.msg, '\n') || strncmp(d.msg, sep ? "fuzz." : "fuzz.json", sep ? 5 : 9))
            abort();
        return 0;
    }
    if (arrlen(info.unsupported) == 0) {
        for (int k = 0; passes[k].name; k++)
            passes[k].run(&g);
        Plan plan;
        plan_memory(&g, &plan);
        for (int mode = 0; mode < 2; mode++) {
            EmitOptions eo;
            memset(&eo, 0, sizeof eo);
            eo.name = "fuzz_model";
            eo.constants = mode ? CONST_BIN : CONST_C;
            eo.model_file = "fuzz.json";
            eo.options = "(defaults)";
            Emitted em;
            emit_library(&g, &plan, &eo, &em);
            check_text(&em.header);
            check_text(&em.source);
            if (mode == 0)
                check_text(&em.constants);
            if (mode == 1) {            /* the reports (--report, --report-svg) */
                Buf r = { 0 };
                report_json(&g, &plan, &eo, &em, &r);
                buf_free(&r);
                report_text(&g, &plan, &eo, &em, &r);
                buf_free(&r);
                report_svg(&g, &plan, &eo, &em, &r);
                for (size_t i = 0; i < buf_len(&r); i++)    /* ASCII, escaped names */
                    if ((unsigned char)r.data[i] >= 0x7f || r.data[i] == 0)
                        abort();
                buf_free(&r);
            }
            emitted_free(&em);
        }
        plan_free(&plan);
    }
    model_info_free(&info);
    graph_free(&g);
    return 0;
}
