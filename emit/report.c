/*
 * report.c: what a compiled model costs, for `relayc compile --report FILE.json`
 * (and its summary on stdout) and `--report-svg FILE.svg`.
 *
 * The report gives the workspace, constants and input/output bytes, the memory plan
 * (every workspace buffer: offset, size, live range in node steps, and the tensors it
 * holds with the JSON node each came from) and each kernel's multiply-accumulate count.
 * The SVG draws the plan over time: one box per buffer, node steps to the right, byte
 * offsets upwards, the workspace's top and the step of the peak marked. Everything is
 * derived from the graph and the plan only, so the files are reproducible.
 */
#include "../compiler/relayc.h"

#include <cJSON.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* By the op's name, so that every convolution and matrix product counts, whatever its
 * element type (conv2d, qconv2d; matmul, qmatmul). */
static int64_t value_bytes(const Value *v)
{
    return shape_numel(&v->shape) * (int64_t)dtype_size(v->dtype);
}

/* The workspace buffers in the order the report lists them: by first use, then offset. */
static int *buffer_order(const Plan *p)
{
    int n = (int)arrlen(p->bufs);
    int *ord = xmalloc(((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        ord[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort: stable and deterministic */
        for (int j = i; j > 0; j--) {
            const PlanBuf *a = &p->bufs[ord[j - 1]], *b = &p->bufs[ord[j]];
            if (a->first < b->first || (a->first == b->first && a->offset <= b->offset))
                break;
            int t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
    return ord;
}

/* Does value v live in workspace buffer b, at its start or, a slice (Storage.alias),
 * inside it? (Buffers at one offset never overlap in time, and every value of a buffer
 * is produced inside its live range.) */
static bool value_in_buf(const Graph *g, const Plan *p, int v, const PlanBuf *b)
{
    const Value *x = &g->values[v];
    return p->st[v].kind == ST_WORKSPACE && p->st[v].offset >= b->offset &&
           p->st[v].offset < b->offset + (b->size > 0 ? b->size : 1) && x->kind == VAL_TEMP &&
           x->producer >= b->first && x->producer <= b->last;
}

static const char *node_op_text(const Graph *g, int step, char *buf, size_t len)
{
    return ir_node_name(&g->nodes[step], buf, len);
}

/* What a kernel computes: its Relay op (or IR op), and the ops fused into it ("nn.conv2d
 * + bias + relu"), so a label names every op of the kernel the JSON node stands for. */
static const char *kernel_text(const Graph *g, int step, char *buf, size_t len)
{
    const Node *n = &g->nodes[step];
    char t[64];
    size_t at = (size_t)snprintf(buf, len, "%s", n->relay_op ? n->relay_op : node_op_text(g, step, t, sizeof t));
    if (n->op != IR_CONV2D && n->op != IR_MATMUL)
        return buf;
    if (n->a.bias && at < len)
        at += (size_t)snprintf(buf + at, len - at, " + bias");
    for (int k = 0; k < n->a.ep.n && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, " + %s", ew_table[n->a.ep.step[k].ew].name);
    return buf;
}

/* A tensor as the report names it: "float32 [1, 8, 16, 16] from nodes[54] (nn.conv2d +
 * bias + relu, kernel nodes[58])": its JSON node, and the kernel that computes it. */
static const char *value_text(const Graph *g, int v, char *buf, size_t len)
{
    const Value *x = &g->values[v];
    const Node *pn = &g->nodes[x->producer];
    char s[160], k[160], j[32] = "";
    if (pn->json != x->json)
        snprintf(j, sizeof j, ", kernel nodes[%d]", pn->json);
    snprintf(buf, len, "%s %s from nodes[%d] (%s%s)", dtype_name(x->dtype),
             shape_str(&x->shape, s, sizeof s), x->json, kernel_text(g, x->producer, k, sizeof k), j);
    return buf;
}

/* The op whose kernel uses scratch buffer b. */
static const char *scratch_owner(const Graph *g, const PlanBuf *b, char *buf, size_t len)
{
    const Node *n = &g->nodes[b->node];
    return n->relay_op ? n->relay_op : node_op_text(g, b->node, buf, len);
}

static const char *storage_text(const Plan *p, int v, char *buf, size_t len)
{
    const Storage *s = &p->st[v];
    switch (s->kind) {
    case ST_INPUT:
    case ST_OUTPUT: /* "+BYTES": a slice of it */
        snprintf(buf, len, s->offset ? "%s %d +%lld" : "%s %d", s->kind == ST_INPUT ? "input" : "output",
                 s->index, (long long)s->offset);
        break;
    case ST_CONST: snprintf(buf, len, "constant"); break;
    case ST_WORKSPACE: snprintf(buf, len, "workspace +%lld", (long long)s->offset); break;
    default: snprintf(buf, len, "none"); break;
    }
    return buf;
}

/* Bytes of workspace buffers live at each step; steps 0..nn (nn: after the last node). */
static int64_t *live_bytes(const Graph *g, const Plan *p)
{
    int nn = (int)arrlen(g->nodes);
    int64_t *live = xcalloc((size_t)nn + 2, sizeof(int64_t));
    for (int k = 0; k < (int)arrlen(p->bufs); k++)
        for (int t = p->bufs[k].first; t <= p->bufs[k].last && t <= nn; t++)
            if (t >= 0)
                live[t] += p->bufs[k].size;
    return live;
}

static cJSON *shape_array(const Shape *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; d < s->rank; d++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->dim[d]));
    return a;
}

static cJSON *tensor_json(const Graph *g, int v)
{
    const Value *x = &g->values[v];
    cJSON *o = cJSON_CreateObject();
    if (x->name)
        cJSON_AddStringToObject(o, "name", x->name);
    cJSON_AddStringToObject(o, "dtype", dtype_name(x->dtype));
    cJSON_AddItemToObject(o, "shape", shape_array(&x->shape));
    cJSON_AddNumberToObject(o, "bytes", (double)value_bytes(x));
    return o;
}

void report_json(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out)
{
    int nn = (int)arrlen(g->nodes);
    char s[160];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "relayc_version", RELAYC_VERSION);
    cJSON_AddStringToObject(root, "name", o->name);
    cJSON_AddStringToObject(root, "model", o->model_file ? o->model_file : "");
    cJSON_AddStringToObject(root, "tvm_version", g->version);
    cJSON_AddStringToObject(root, "function", g->function ? g->function : "");
    cJSON_AddStringToObject(root, "options", o->options ? o->options : "");
    cJSON_AddStringToObject(root, "constants_mode", o->constants == CONST_BIN ? "bin" : "c");

    cJSON *m = cJSON_AddObjectToObject(root, "memory");
    cJSON_AddNumberToObject(m, "workspace_bytes", (double)p->workspace);
    cJSON_AddNumberToObject(m, "workspace_align", RC_WORKSPACE_ALIGN);
    cJSON_AddNumberToObject(m, "peak_live_bytes", (double)p->peak);
    cJSON_AddNumberToObject(m, "peak_step", p->peak_step);
    cJSON_AddNumberToObject(m, "constants_bytes", (double)em->constants_size);
    if (o->constants == CONST_BIN)
        cJSON_AddNumberToObject(m, "constants_blob_bytes", (double)buf_len(&em->constants));
    cJSON_AddNumberToObject(m, "io_bytes", (double)em->io_bytes);
    int64_t in_bytes = 0, out_bytes = 0;
    cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
    for (int i = 0; i < (int)arrlen(g->inputs); i++) {
        cJSON_AddItemToArray(ins, tensor_json(g, g->inputs[i]));
        in_bytes += value_bytes(&g->values[g->inputs[i]]);
    }
    cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        cJSON_AddItemToArray(outs, tensor_json(g, g->outputs[i]));
        out_bytes += value_bytes(&g->values[g->outputs[i]]);
    }
    cJSON_AddNumberToObject(m, "input_bytes", (double)in_bytes);
    cJSON_AddNumberToObject(m, "output_bytes", (double)out_bytes);

    /* the plan */
    cJSON *plan = cJSON_AddObjectToObject(root, "plan");
    cJSON_AddNumberToObject(plan, "steps", nn);
    cJSON *bufs = cJSON_AddArrayToObject(plan, "buffers");
    int *ord = buffer_order(p);
    for (int k = 0; k < (int)arrlen(p->bufs); k++) {
        const PlanBuf *b = &p->bufs[ord[k]];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "id", k);
        cJSON_AddNumberToObject(x, "offset", (double)b->offset);
        cJSON_AddNumberToObject(x, "size", (double)b->size);
        cJSON_AddNumberToObject(x, "first", b->first);
        cJSON_AddNumberToObject(x, "last", b->last);
        if (b->node >= 0) { /* a kernel's scratch */
            cJSON_AddNumberToObject(x, "scratch_of_json_node", g->nodes[b->node].json);
            cJSON_AddStringToObject(x, "scratch_of_op", scratch_owner(g, b, s, sizeof s));
        }
        cJSON *vals = cJSON_AddArrayToObject(x, "values");
        for (int v = 0; v < (int)arrlen(g->values); v++) {
            if (!value_in_buf(g, p, v, b))
                continue;
            const Value *val = &g->values[v];
            cJSON *t = tensor_json(g, v);
            cJSON_AddNumberToObject(t, "value", v);
            cJSON_AddNumberToObject(t, "json_node", val->json);
            cJSON_AddNumberToObject(t, "step", val->producer);
            const Node *pn = &g->nodes[val->producer];
            cJSON_AddStringToObject(t, "op", node_op_text(g, val->producer, s, sizeof s));
            cJSON_AddStringToObject(t, "relay_op", pn->relay_op ? pn->relay_op : "");
            cJSON_AddNumberToObject(t, "at", (double)(p->st[v].offset - b->offset));
            if (p->st[v].alias >= 0) /* a view or slice of that value, or written in its place */
                cJSON_AddNumberToObject(t, "inside_value", p->st[v].alias);
            cJSON_AddItemToArray(vals, t);
        }
        cJSON_AddItemToArray(bufs, x);
    }
    free(ord);
    int64_t *live = live_bytes(g, p);
    cJSON *lv = cJSON_AddArrayToObject(plan, "live_bytes");
    for (int t = 0; t < nn; t++)
        cJSON_AddItemToArray(lv, cJSON_CreateNumber((double)live[t]));
    free(live);

    /* the kernels */
    int64_t total = 0;
    cJSON *ks = cJSON_AddArrayToObject(root, "kernels");
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        const Value *y = &g->values[n->out];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "step", i);
        cJSON_AddStringToObject(x, "op", node_op_text(g, i, s, sizeof s));
        cJSON_AddStringToObject(x, "relay_op", n->relay_op ? n->relay_op : "");
        cJSON_AddNumberToObject(x, "json_node", n->json);
        cJSON_AddStringToObject(x, "dtype", dtype_name(y->dtype));
        cJSON_AddItemToObject(x, "shape", shape_array(&y->shape));
        cJSON_AddStringToObject(x, "output", storage_text(p, n->out, s, sizeof s));
        /* no code: a view, a slice viewed in place, a concatenate of operands written in place */
        cJSON_AddBoolToObject(x, "elided", plan_elided(g, p, i));
        int64_t macs = ir_macs(g, n);
        cJSON_AddNumberToObject(x, "macs", (double)macs);
        total += macs;
        cJSON *src = cJSON_AddArrayToObject(x, "sources"); /* every Relay call it computes */
        for (int k = 0; k < (int)arrlen(n->src); k++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddNumberToObject(c, "json_node", n->src[k].json);
            cJSON_AddStringToObject(c, "op", n->src[k].op ? n->src[k].op : "");
            cJSON_AddItemToArray(src, c);
        }
        cJSON_AddItemToArray(ks, x);
    }
    /* the constants the kernels read, with the parameter each came from (bound, or folded
     * or packed from one) */
    cJSON *cs = cJSON_AddArrayToObject(root, "constants");
    bool *seen = xcalloc(arrlen(g->consts) + 1, sizeof(bool));
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++) {
            int v = g->nodes[i].in[k];
            const Value *c = &g->values[v];
            if (c->kind != VAL_CONST || seen[c->constant])
                continue;
            seen[c->constant] = true;
            cJSON *t = tensor_json(g, v);
            cJSON_AddNumberToObject(t, "first_step", i);
            cJSON_AddItemToArray(cs, t);
        }
    free(seen);
    cJSON_AddNumberToObject(root, "total_macs", (double)total);

    char *text = cJSON_Print(root);
    buf_puts(out, text);
    buf_puts(out, "\n");
    free(text);
    cJSON_Delete(root);
}

/* The summary: a few lines whatever the model's size (the detail is in the JSON report).
 * The largest buffers and the heaviest kernels, at most REPORT_TOP of each; the text that
 * can be long (what a buffer holds, op names) is the last column, cut to REPORT_COL. */
enum { REPORT_TOP = 5, REPORT_COL = 96 };

/* The indices 0..n-1 with the REPORT_TOP largest keys, largest first (then by index). */
static int top_indices(const int64_t *key, int n, int *top)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m == REPORT_TOP && key[i] <= key[top[m - 1]])
            continue;
        int j = m < REPORT_TOP ? m++ : m - 1;
        for (; j > 0 && key[i] > key[top[j - 1]]; j--)
            top[j] = top[j - 1];
        top[j] = i;
    }
    return m;
}

static void put_cut(Buf *out, const char *s)
{
    size_t n = strlen(s);
    if (n <= REPORT_COL)
        buf_puts(out, s);
    else
        buf_printf(out, "%.*s...", REPORT_COL - 3, s);
}

void report_text(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out)
{
    int nn = (int)arrlen(g->nodes), nb = (int)arrlen(p->bufs);
    char s[160], t[160];
    buf_printf(out, "memory (bytes): workspace %lld (align %d), peak of live intermediates %lld at step %d, "
                    "constants %lld", (long long)p->workspace, RC_WORKSPACE_ALIGN, (long long)p->peak,
               p->peak_step, (long long)em->constants_size);
    if (o->constants == CONST_BIN)
        buf_printf(out, " (%s.bin %lld)", o->name, (long long)buf_len(&em->constants));
    buf_printf(out, ", inputs and outputs %lld\n", (long long)em->io_bytes);
    int top[REPORT_TOP];
    int64_t *key = xcalloc((size_t)(nb > nn ? nb : nn) + 1, sizeof(int64_t));
    for (int k = 0; k < nb; k++)
        key[k] = p->bufs[k].size;
    int m = top_indices(key, nb, top);
    buf_printf(out, "memory plan: %d workspace buffers over %d steps%s\n", nb, nn,
               m ? "; the largest:" : "");
    if (m)
        buf_printf(out, "  %10s %10s  %-13s  %s\n", "offset", "size", "live steps", "holds");
    for (int k = 0; k < m; k++) {
        const PlanBuf *b = &p->bufs[top[k]];
        Buf h = { 0 };
        if (b->node >= 0)
            buf_printf(&h, "row buffer of nodes[%d] (%s)", g->nodes[b->node].json,
                       scratch_owner(g, b, t, sizeof t));
        int shown = 0;
        for (int v = 0; v < (int)arrlen(g->values) && buf_len(&h) <= REPORT_COL; v++) {
            if (!value_in_buf(g, p, v, b))
                continue;
            char vt[400];
            buf_printf(&h, "%s%s", shown++ ? "; " : "", value_text(g, v, vt, sizeof vt));
        }
        snprintf(s, sizeof s, "%d-%d", b->first, b->last);
        buf_printf(out, "  %10lld %10lld  %-13s  ", (long long)b->offset, (long long)b->size, s);
        put_cut(out, buf_cstr(&h));
        buf_puts(out, "\n");
        buf_free(&h);
    }
    int elided = 0, cats = 0;
    for (int i = 0; i < nn; i++)
        if (!ir_ops[g->nodes[i].op].view && plan_elided(g, p, i)) {
            elided++;
            cats += g->nodes[i].op == IR_CONCAT;
        }
    if (elided)
        buf_printf(out, "in place: %d data movement kernels need no code (%d concatenates whose "
                        "operands are written in place, %d slices viewed in place)\n",
                   elided, cats, elided - cats);
    int64_t total = 0;
    for (int i = 0; i < nn; i++)
        total += key[i] = ir_macs(g, &g->nodes[i]);
    m = top_indices(key, nn, top);
    while (m > 0 && key[top[m - 1]] == 0)
        m--;
    buf_printf(out, "kernels: %d, %lld MACs in all%s\n", nn, (long long)total,
               m ? "; the heaviest:" : "");
    if (m)
        buf_printf(out, "  %6s %14s  %-26s  %s\n", "step", "MACs", "output", "op (relay ops, node)");
    for (int k = 0; k < m; k++) {
        const Node *n = &g->nodes[top[k]];
        const Value *y = &g->values[n->out];
        char shp[200], op[200];
        snprintf(shp, sizeof shp, "%s %s", dtype_name(y->dtype), shape_str(&y->shape, s, sizeof s));
        char kt[160];
        snprintf(op, sizeof op, "%s (%s, nodes[%d])", node_op_text(g, top[k], t, sizeof t),
                 kernel_text(g, top[k], kt, sizeof kt), n->json);
        buf_printf(out, "  %6d %14lld  %-26s  ", top[k], (long long)key[top[k]], shp);
        put_cut(out, op);
        buf_puts(out, "\n");
    }
    free(key);
}

/* ---- the SVG ---- */

static void put_xml_text(Buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        case '\'': buf_puts(b, "&apos;"); break;
        default:
            if (c < 0x20 || c >= 0x7f) /* keep the file ASCII and well-formed */
                buf_printf(b, "&#x%x;", c < 0x20 ? 0xfffd : c);
            else
                buf_write(b, s, 1);
        }
    }
}

/* Text of n characters fits in w pixels (11 px sans-serif: about 6.2 px a character). */
static bool text_fits(const char *t, double w) { return strlen(t) * 6.2 + 6 <= w; }

void report_svg(const Graph *g, const Plan *p, const EmitOptions *o, const Emitted *em, Buf *out)
{
    (void)em;
    int nn = (int)arrlen(g->nodes);
    int steps = nn > 0 ? nn : 1;
    bool named_steps = nn > 0 && nn <= 40;    /* each step named by its kernel, below the axis */
    const double left = 90, right = 20, top = 50, pw = 800, ph = 400;
    const double bottom = named_steps ? 180 : 60, legend = 70;
    const double W = left + pw + right, H = top + ph + bottom + legend;
    double ws = p->workspace > 0 ? (double)p->workspace : 1.0;
    double dx = pw / steps;
    char s[160], t[400];
#define XS(step) (left + (step) * dx)
#define YS(off) (top + ph - (double)(off) / ws * ph)
    buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                    "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
               W, H, W, H);
    buf_puts(out, "<title>");
    put_xml_text(out, o->name);
    buf_printf(out, ": memory plan, workspace %lld bytes</title>\n", (long long)p->workspace);
    buf_printf(out, "<defs><pattern id=\"rowbuf\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                    "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#d9d9d9\"/>"
                    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#808080\" stroke-width=\"2\"/>"
                    "</pattern></defs>\n");
    buf_printf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    buf_puts(out, "<text x=\"10\" y=\"20\" font-size=\"14\">");
    put_xml_text(out, o->name);
    buf_printf(out, ": workspace %lld bytes, peak of live intermediates %lld bytes at step %d, "
                    "%d buffers</text>\n", (long long)p->workspace, (long long)p->peak, p->peak_step,
               (int)arrlen(p->bufs));
    /* axes */
    buf_printf(out, "<g stroke=\"black\" fill=\"none\">\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n",
               left, top + ph, left + pw, top + ph, left, top, left, top + ph);
    buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (node step%s)</text>\n",
               left + pw / 2, top + ph + bottom - 15, named_steps ? ", named by its kernel" : "");
    buf_printf(out, "<text x=\"15\" y=\"%.1f\" transform=\"rotate(-90 15 %.1f)\" "
                    "text-anchor=\"middle\">workspace offset (bytes)</text>\n",
               top + ph / 2, top + ph / 2);
    if (named_steps) {
        /* each step at its middle, its kernel's ops below, turned to read upwards */
        for (int k = 0; k < nn; k++) {
            double x = XS(k + 0.5), y = top + ph + 12;
            snprintf(t, sizeof t, "%d %s", k, kernel_text(g, k, s, sizeof s));
            if (strlen(t) > 26)
                snprintf(t + 23, sizeof t - 23, "...");
            buf_printf(out, "<text class=\"step\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                            "transform=\"rotate(-60 %.1f %.1f)\">", x, y, x, y);
            put_xml_text(out, t);
            buf_puts(out, "</text>\n");
        }
    } else {
        int tick = (steps + 19) / 20;
        for (int k = 0; k <= steps; k += tick)
            buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", XS(k),
                       top + ph + 15, k);
    }
    for (int k = 0; k <= 4; k++)
        buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%lld</text>\n", left - 5,
                   YS(ws * k / 4) + 4, (long long)(p->workspace * k / 4));
    /* buffers: a box each, with a tooltip of everything it holds and, where it fits, a
     * label: the first tensor's op and shape, or "row buffer" and its kernel */
    static const char *colors[] = { "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                    "#edc948", "#ff9da7", "#9c755f", "#e15759", "#bab0ac" };
    int *ord = buffer_order(p);
    buf_puts(out, "<g stroke=\"black\" stroke-width=\"0.5\">\n");
    for (int k = 0; k < (int)arrlen(p->bufs); k++) {
        const PlanBuf *b = &p->bufs[ord[k]];
        int last = b->last < nn ? b->last : nn - 1;
        double x0 = XS(b->first), x1 = XS(last + 1);
        double y0 = YS(b->offset + b->size), y1 = YS(b->offset);
        buf_printf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                        "fill-opacity=\"0.8\"><title>buffer %d: offset %lld, %lld bytes, steps %d-%d",
                   x0, y0, x1 - x0, y1 - y0 > 1.5 ? y1 - y0 : 1.5,
                   b->node >= 0 ? "url(#rowbuf)" : colors[k % 10], k, (long long)b->offset,
                   (long long)b->size, b->first, b->last);
        char label[200] = "", shortl[200] = "";
        if (b->node >= 0) {
            snprintf(t, sizeof t, "; row buffer of nodes[%d] ", g->nodes[b->node].json);
            put_xml_text(out, t);
            put_xml_text(out, scratch_owner(g, b, s, sizeof s));
            snprintf(label, sizeof label, "row buffer: %s", scratch_owner(g, b, s, sizeof s));
            snprintf(shortl, sizeof shortl, "row buffer");
        }
        for (int v = 0; v < (int)arrlen(g->values); v++) {
            if (!value_in_buf(g, p, v, b))
                continue;
            buf_puts(out, "; ");
            put_xml_text(out, value_text(g, v, t, sizeof t));
            if (!label[0]) {
                const Value *x = &g->values[v];
                const Node *pn = &g->nodes[x->producer];
                snprintf(label, sizeof label, "%s %s", pn->relay_op ? pn->relay_op : ir_ops[pn->op].name,
                         shape_str(&x->shape, s, sizeof s));
                snprintf(shortl, sizeof shortl, "%s", shape_str(&x->shape, s, sizeof s));
            }
        }
        buf_puts(out, "</title></rect>\n");
        const char *l = text_fits(label, x1 - x0) ? label : text_fits(shortl, x1 - x0) ? shortl : NULL;
        if (y1 - y0 > 14 && l) {
            buf_printf(out, "<text class=\"buffer\" x=\"%.2f\" y=\"%.2f\" stroke=\"none\" fill=\"black\">",
                       x0 + 3, y0 + 12);
            put_xml_text(out, l);
            buf_puts(out, "</text>\n");
        } else if (x1 - x0 > 20 && y1 - y0 > 14) {
            buf_printf(out, "<text class=\"buffer\" x=\"%.2f\" y=\"%.2f\" stroke=\"none\" fill=\"black\">%d</text>\n",
                       x0 + 3, y0 + 12, k);
        }
    }
    buf_puts(out, "</g>\n");
    free(ord);
    /* the peak: the workspace's top, and the step where the most bytes are live */
    buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"red\" "
                    "stroke-dasharray=\"6 3\"/>\n", left, YS(p->workspace), left + pw, YS(p->workspace));
    buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"red\" text-anchor=\"end\">workspace %lld bytes</text>\n",
               left + pw, YS(p->workspace) - 4, (long long)p->workspace);
    if (nn > 0) {
        double px = XS(p->peak_step + 0.5);
        const char *anchor = px < left + 180 ? "start" : px > left + pw - 180 ? "end" : "middle";
        buf_printf(out, "<line id=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"red\" "
                        "stroke-width=\"2\"/>\n", px, top - 5, px, top + ph);
        buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"red\" text-anchor=\"%s\">peak: %lld bytes live "
                        "at step %d (", px, top - 10, anchor, (long long)p->peak, p->peak_step);
        put_xml_text(out, kernel_text(g, p->peak_step, s, sizeof s));
        buf_puts(out, ")</text>\n");
    }
    /* the legend */
    double ly = top + ph + bottom + 10;
    buf_printf(out, "<g id=\"legend\">\n"
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\" fill-opacity=\"0.8\" "
                    "stroke=\"black\" stroke-width=\"0.5\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\">a tensor's buffer: its op and shape (hover: every tensor "
                    "it holds, with its JSON node)</text>\n", left, ly, colors[0], left + 20, ly + 9);
    buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"url(#rowbuf)\" "
                    "stroke=\"black\" stroke-width=\"0.5\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\">row buffer: a kernel's scratch, live for its step</text>\n",
               left, ly + 18, left + 20, ly + 27);
    buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"red\" "
                    "stroke-dasharray=\"6 3\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\">workspace size; the solid red line marks the step of "
                    "the peak</text>\n</g>\n", left, ly + 41, left + 14, ly + 41, left + 20, ly + 45);
    buf_puts(out, "</svg>\n");
#undef XS
#undef YS
}
