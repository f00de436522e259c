/*
 * relay_json.c: reads the text tvm.ir.save_json writes (TVM 0.6 to 0.19) into a table of
 * raw nodes. No Relay meaning is given here: this file checks the document's structure
 * (top-level keys, node objects, index ranges, repr bytes) and offers typed accessors for
 * node fields, which lower.c uses. Every index taken from the file is range-checked here,
 * so later stages can trust them.
 */
#include "relayc.h"

#include <cJSON.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

static const char *type_desc(const RelayDoc *doc, int idx);

RC_NORETURN void doc_fail(const RelayDoc *doc, int idx, const char *fmt, ...)
{
    char where[256], what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    diag_fail(doc->d, "%s: %s", doc_where(doc, idx, where, sizeof where), what);
}

const char *doc_where(const RelayDoc *doc, int idx, char *buf, size_t len)
{
    snprintf(buf, len, "nodes[%d] (%s)", idx, type_desc(doc, idx));
    return buf;
}

/* "Call nn.conv2d", "Var 'x'", "Constant", ... for messages. */
static const char *type_desc(const RelayDoc *doc, int idx)
{
    static _Thread_local char buf[200];
    if (idx < 0 || idx >= (int)arrlen(doc->nodes))
        return "out of range";
    const JNode *n = &doc->nodes[idx];
    const char *tk = n->type_key;
    const char *shortk = strncmp(tk, "relay.", 6) == 0 ? tk + 6 : tk;
    if (!*tk)
        return "null";
    if (strcmp(shortk, "Call") == 0 && n->attrs) {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(n->attrs, "op");
        if (cJSON_IsString(op)) {
            long o = strtol(op->valuestring, NULL, 10);
            if (o > 0 && o < (long)arrlen(doc->nodes) && doc->nodes[o].repr) {
                snprintf(buf, sizeof buf, "Call %.100s", doc->nodes[o].repr);
                return buf;
            }
        }
    }
    if (strcmp(shortk, "Var") == 0 && n->attrs) {
        const cJSON *vid = cJSON_GetObjectItemCaseSensitive(n->attrs, "vid");
        if (cJSON_IsString(vid)) {
            long v = strtol(vid->valuestring, NULL, 10);
            if (v > 0 && v < (long)arrlen(doc->nodes)) {
                const char *nm = doc_field(doc, (int)v, "name_hint");
                if (nm && !doc_is_v06(doc)) {
                    long s = strtol(nm, NULL, 10);
                    nm = (s > 0 && s < (long)arrlen(doc->nodes) && doc->nodes[s].repr)
                             ? doc->nodes[s].repr : NULL;
                }
                if (nm) {
                    snprintf(buf, sizeof buf, "Var '%.100s'", nm);
                    return buf;
                }
            }
        }
    }
    snprintf(buf, sizeof buf, "%.100s", shortk);
    return buf;
}

bool doc_is_v06(const RelayDoc *doc)
{
    return doc->major == 0 && doc->minor > 0 && doc->minor < 7;
}

static void parse_version(RelayDoc *doc)
{
    const char *v = doc->version;
    char *end;
    long major = strtol(v, &end, 10);
    long minor = 0;
    if (end != v && *end == '.')
        minor = strtol(end + 1, NULL, 10);
    if (major < 0 || major > 100 || minor < 0 || minor > 1000)
        major = minor = 0;
    doc->major = (int)major;
    doc->minor = (int)minor;
}

/* Decodes a repr_b64 value: base64 of [u64 LE length][bytes]. */
static void decode_repr_b64(RelayDoc *doc, int idx, JNode *n, const char *s)
{
    uint8_t *raw;
    size_t rawlen;
    if (!base64_decode(s, strlen(s), &raw, &rawlen))
        doc_fail(doc, idx, "repr_b64: invalid base64");
    if (rawlen < 8) {
        free(raw);
        doc_fail(doc, idx, "repr_b64: %zu bytes, too short for its length prefix", rawlen);
    }
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--)
        len = len << 8 | raw[i];
    if (len != rawlen - 8) {
        free(raw);
        doc_fail(doc, idx, "repr_b64: length prefix says %llu bytes but %zu follow",
                 (unsigned long long)len, rawlen - 8);
    }
    char *str = xmalloc(rawlen - 8 + 1);
    memcpy(str, raw + 8, rawlen - 8);
    str[rawlen - 8] = 0;
    free(raw);
    n->repr = str;
    n->repr_len = rawlen - 8;
    n->repr_owned = true;
}

static bool json_index(const cJSON *v, int limit, int *out)
{
    if (!cJSON_IsNumber(v))
        return false;
    double d = v->valuedouble;
    if (!(d >= 0 && d < limit) || d != (double)(int)d)
        return false;
    *out = (int)d;
    return true;
}

/* The number of JSON values in text, roughly as a parser would see them (each object,
 * array, string and scalar), stopping early past limit. No allocation. */
static int64_t count_json_values(const char *text, size_t len, int64_t limit)
{
    int64_t n = 0;
    bool in_scalar = false;
    for (size_t i = 0; i < len && n <= limit; i++) {
        char c = text[i];
        if (c == '"') {
            n++;
            in_scalar = false;
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
        } else if (c == '{' || c == '[') {
            n++;
            in_scalar = false;
        } else if (c == ',' || c == ':' || c == '}' || c == ']' || c == ' ' || c == '\n' ||
                   c == '\r' || c == '\t') {
            in_scalar = false;
        } else if (!in_scalar) {
            n++;                /* a number or literal starts */
            in_scalar = true;
        }
    }
    return n;
}

/* Line and column of byte off, and up to 16 printable characters from there. */
static void json_place(const char *text, size_t len, size_t off, size_t *line, size_t *col,
                       char near[24])
{
    *line = 1, *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
    size_t k = 0;
    for (size_t i = off; i < len && k < 16; i++)
        near[k++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    near[k] = 0;
}

/* Brackets left open by text[0..upto) (strings skipped), the deepest nesting met, and
 * whether it ends inside a string. */
static size_t json_open(const char *text, size_t upto, size_t *deepest, bool *in_str)
{
    size_t depth = 0;
    *deepest = 0;
    *in_str = false;
    for (size_t i = 0; i < upto; i++) {
        char c = text[i];
        if (*in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                *in_str = false;
        } else if (c == '"') {
            *in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > *deepest)
                *deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return depth;
}

void relay_doc_load(RelayDoc *doc, const char *text, size_t len, Diag *d)
{
    memset(doc, 0, sizeof *doc);
    doc->d = d;
    doc->file = d->file;
    if (count_json_values(text, len, RC_MAX_JSON_VALUES) > RC_MAX_JSON_VALUES)
        diag_fail(d, "top level: more than %lld JSON values (the limit)", RC_MAX_JSON_VALUES);
    const char *end = NULL;
    doc->json = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc->json) {
        size_t off = end ? (size_t)(end - text) : 0;
        if (off > len)
            off = len;
        size_t line, col, deepest;
        char near[24];
        json_place(text, len, off, &line, &col, near);
        /* cJSON refuses nesting deeper than CJSON_NESTING_LIMIT: name that limit when it
         * is what stopped the parser */
        bool open_str;
        json_open(text, off + 1 < len ? off + 1 : len, &deepest, &open_str);
        if (deepest > CJSON_NESTING_LIMIT)
            diag_fail(d, "%zu:%zu (byte %zu): JSON nested deeper than %d levels (the limit)", line,
                      col, off, CJSON_NESTING_LIMIT);
        /* a document cut short: the whole text leaves a string or a bracket open, and the
         * error is on its last line */
        size_t open = json_open(text, len, &deepest, &open_str);
        if (off >= len || ((open > 0 || open_str) && !memchr(text + off, '\n', len - off)))
            diag_fail(d, "%zu:%zu (byte %zu): invalid JSON: unexpected end of file (truncated?)", line,
                      col, off);
        diag_fail(d, "%zu:%zu (byte %zu): invalid JSON near '%s'", line, col, off, near);
    }
    /* one document: after it only blanks (and NULs, as some writers pad) */
    size_t tail = end ? (size_t)(end - text) : len;
    while (tail < len && (text[tail] == ' ' || text[tail] == '\n' || text[tail] == '\r' ||
                          text[tail] == '\t' || text[tail] == 0))
        tail++;
    if (tail < len) {
        size_t line, col;
        char near[24];
        json_place(text, len, tail, &line, &col, near);
        diag_fail(d, "%zu:%zu (byte %zu): invalid JSON: other characters after the document: '%s'",
                  line, col, tail, near);
    }
    cJSON *j = doc->json;
    if (!cJSON_IsObject(j))
        diag_fail(d, "top level: expected a JSON object (a tvm.ir.save_json document)");
    if (cJSON_GetObjectItemCaseSensitive(j, "root_index") ||
        cJSON_GetObjectItemCaseSensitive(j, "metadata"))
        diag_fail(d, "top level: unsupported format: the tvm-ffi JSON of TVM 0.22 or later (root_index/metadata), "
                     "which holds Relax/TIR, not Relay; relayc reads Relay JSON from TVM 0.6 to 0.19");
    if (cJSON_GetObjectItemCaseSensitive(j, "heads") &&
        cJSON_GetObjectItemCaseSensitive(j, "arg_nodes"))
        diag_fail(d, "top level: this is a graph-executor or BYOC codegen JSON (arg_nodes/heads), "
                     "not tvm.ir.save_json output; export the Relay module with tvm.ir.save_json");
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(j, "attrs");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(attrs, "tvm_version");
    if (cJSON_IsString(ver))
        snprintf(doc->version, sizeof doc->version, "%s", ver->valuestring);
    parse_version(doc);
    if (doc->major > 0 || doc->minor > 19)
        diag_fail(d, "top level: tvm_version %s: relayc reads Relay JSON from TVM 0.6 to 0.19 "
                     "(Relay was removed in 0.20)", doc->version);

    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "nodes");
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(j, "root");
    if (!cJSON_IsArray(nodes))
        diag_fail(d, "top level: missing \"nodes\" array: not a tvm.ir.save_json document");
    int count = cJSON_GetArraySize(nodes);
    if (count < 1)
        diag_fail(d, "top level: \"nodes\" is empty");
    if (count > RC_MAX_NODES)
        diag_fail(d, "top level: %d nodes, over the limit of %d", count, RC_MAX_NODES);
    if (!json_index(root, count, &doc->root))
        diag_fail(d, "top level: \"root\" must be an index into nodes (0 to %d)", count - 1);

    arrsetlen(doc->nodes, count);
    memset(doc->nodes, 0, sizeof(JNode) * (size_t)count);
    int idx = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, nodes) {
        JNode *n = &doc->nodes[idx];
        n->type_key = "";
        if (!cJSON_IsObject(it))
            diag_fail(d, "nodes[%d]: expected an object", idx);
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(it, "type_key");
        if (tk && !cJSON_IsString(tk))
            diag_fail(d, "nodes[%d]: type_key must be a string", idx);
        if (tk)
            n->type_key = tk->valuestring;
        else if (idx > 0)
            diag_fail(d, "nodes[%d]: the node has no \"type_key\" (only nodes[0], the null node, "
                      "may lack it)", idx);
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(it, "repr_str");
        const cJSON *rb = cJSON_GetObjectItemCaseSensitive(it, "repr_b64");
        const cJSON *gk = cJSON_GetObjectItemCaseSensitive(it, "global_key");
        if (rs) {
            if (!cJSON_IsString(rs))
                diag_fail(d, "nodes[%d]: repr_str must be a string", idx);
            n->repr = rs->valuestring;
            n->repr_len = strlen(rs->valuestring);
        } else if (rb) {
            if (!cJSON_IsString(rb))
                diag_fail(d, "nodes[%d]: repr_b64 must be a string", idx);
            decode_repr_b64(doc, idx, n, rb->valuestring);
        } else if (gk) {
            if (!cJSON_IsString(gk))
                diag_fail(d, "nodes[%d]: global_key must be a string", idx);
            n->repr = gk->valuestring;
            n->repr_len = strlen(gk->valuestring);
        }
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, "attrs");
        if (a) {
            if (!cJSON_IsObject(a))
                diag_fail(d, "nodes[%d]: attrs must be an object", idx);
            const cJSON *f;
            int nf = 0;
            cJSON_ArrayForEach(f, a) {
                if (!cJSON_IsString(f))
                    diag_fail(d, "nodes[%d]: attrs.%.100s must be a string", idx,
                              f->string ? f->string : "?");
                if (++nf > RC_MAX_FIELDS)
                    diag_fail(d, "nodes[%d]: attrs has more than %d fields (the limit)", idx,
                              RC_MAX_FIELDS);
            }
            n->attrs = (cJSON *)a;
        }
        const cJSON *keys = cJSON_GetObjectItemCaseSensitive(it, "keys");
        if (keys) {
            if (!cJSON_IsArray(keys))
                diag_fail(d, "nodes[%d]: keys must be an array", idx);
            const cJSON *k;
            cJSON_ArrayForEach(k, keys) {
                if (!cJSON_IsString(k))
                    diag_fail(d, "nodes[%d]: keys must hold strings", idx);
            }
            n->keys = (cJSON *)keys;
        }
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(it, "data");
        if (data) {
            if (!cJSON_IsArray(data))
                diag_fail(d, "nodes[%d]: data must be an array", idx);
            const cJSON *e;
            int k = 0;
            cJSON_ArrayForEach(e, data) {
                int v;
                if (!json_index(e, count, &v))
                    diag_fail(d, "nodes[%d]: data[%d] is not a node index or is out of range (0 to %d)", idx, k,
                              count - 1);
                arrput(n->data, v);
                k++;
            }
        }
        /* a map's keys pair with its data entries (also when "data" is missing) */
        if (n->keys && cJSON_GetArraySize(n->keys) != (int)arrlen(n->data))
            diag_fail(d, "nodes[%d]: %d keys but %d data entries", idx,
                      cJSON_GetArraySize(n->keys), (int)arrlen(n->data));
        idx++;
    }
    if (doc->nodes[0].type_key[0])
        diag_fail(d, "nodes[0]: expected the null node, found type_key '%s'",
                  doc->nodes[0].type_key);

    const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(j, "b64ndarrays");
    if (b64) {
        if (!cJSON_IsArray(b64))
            diag_fail(d, "top level: b64ndarrays must be an array of strings");
        const cJSON *s;
        int k = 0;
        cJSON_ArrayForEach(s, b64) {
            if (!cJSON_IsString(s))
                diag_fail(d, "b64ndarrays[%d]: expected a base64 string", k);
            arrput(doc->b64s, s->valuestring);
            k++;
        }
    }
}

void relay_doc_free(RelayDoc *doc)
{
    for (int i = 0; i < (int)arrlen(doc->nodes); i++) {
        arrfree(doc->nodes[i].data);
        if (doc->nodes[i].repr_owned)
            free((void *)doc->nodes[i].repr);
    }
    arrfree(doc->nodes);
    arrfree(doc->b64s);
    cJSON_Delete(doc->json);
    memset(doc, 0, sizeof *doc);
}

const JNode *doc_node(const RelayDoc *doc, int idx)
{
    if (idx < 0 || idx >= (int)arrlen(doc->nodes))
        diag_fail(doc->d, "node index %d out of range (0 to %d)", idx,
                  (int)arrlen(doc->nodes) - 1);
    return &doc->nodes[idx];
}

bool doc_is(const RelayDoc *doc, int idx, const char *type_key)
{
    const char *tk = doc_node(doc, idx)->type_key;
    if (strcmp(tk, type_key) == 0)
        return true;
    if (strncmp(tk, "relay.", 6) == 0 && strcmp(tk + 6, type_key) == 0)
        return true; /* 0.6 spellings: relay.Op, relay.GlobalVar, relay.TupleType, ... */
    if (strcmp(type_key, "IRModule") == 0 && strcmp(tk, "relay.Module") == 0)
        return true;
    if (strcmp(type_key, "Map") == 0 && strcmp(tk, "StrMap") == 0)
        return true;
    if (strcmp(type_key, "tir.Var") == 0 && strcmp(tk, "Variable") == 0)
        return true;
    return false;
}

const char *doc_field(const RelayDoc *doc, int idx, const char *name)
{
    const JNode *n = doc_node(doc, idx);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(n->attrs, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s)
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

int doc_ref(const RelayDoc *doc, int idx, const char *name)
{
    const char *s = doc_field(doc, idx, name);
    int64_t v;
    if (!s)
        return 0;
    if (!parse_i64(s, &v) || v < 0 || v >= (int64_t)arrlen(doc->nodes))
        doc_fail(doc, idx, "field %s: '%.40s' is not a node index or is out of range (0 to %d)", name, s,
                 (int)arrlen(doc->nodes) - 1);
    return (int)v;
}

int64_t doc_int(const RelayDoc *doc, int idx, const char *name, int64_t dflt)
{
    const char *s = doc_field(doc, idx, name);
    int64_t v;
    if (!s)
        return dflt;
    if (!parse_i64(s, &v))
        doc_fail(doc, idx, "field %s: expected an integer, got '%.40s'", name, s);
    return v;
}

double doc_double(const RelayDoc *doc, int idx, const char *name, double dflt)
{
    const char *s = doc_field(doc, idx, name);
    if (!s)
        return dflt;
    char *end;
    double v = strtod(s, &end); /* also takes inf, -inf, nan as TVM writes them */
    if (end == s || *end)
        doc_fail(doc, idx, "field %s: expected a number, got '%.40s'", name, s);
    return v;
}

const char *doc_string_node(const RelayDoc *doc, int idx)
{
    if (idx == 0)
        return NULL;
    const JNode *n = doc_node(doc, idx);
    if (strcmp(n->type_key, "runtime.String") != 0 && strcmp(n->type_key, "String") != 0)
        doc_fail(doc, idx, "expected a runtime.String node");
    return n->repr ? n->repr : "";
}

const char *doc_str(const RelayDoc *doc, int idx, const char *name, const char *dflt)
{
    const char *s = doc_field(doc, idx, name);
    if (!s)
        return dflt;
    /* Inline std::string (0.6/0.7 layouts, rounding, ...) or a runtime.String ref: layout
     * and mode strings are never all digits, so digits mean a ref when one can exist. */
    int64_t v;
    if (parse_i64(s, &v) && !doc_is_v06(doc) && v >= 0 && v < (int64_t)arrlen(doc->nodes)) {
        if (v == 0)
            return dflt;
        const JNode *n = &doc->nodes[v];
        if (strcmp(n->type_key, "runtime.String") == 0)
            return n->repr ? n->repr : "";
    }
    return s;
}

const int *doc_array(const RelayDoc *doc, int idx, int *n)
{
    const JNode *j = doc_node(doc, idx);
    if (!doc_is(doc, idx, "Array"))
        doc_fail(doc, idx, "expected an Array");
    *n = (int)arrlen(j->data);
    return j->data;
}

int64_t doc_intimm(const RelayDoc *doc, int idx)
{
    const JNode *j = doc_node(doc, idx);
    if (strcmp(j->type_key, "IntImm") == 0)
        return doc_int(doc, idx, "value", 0);
    if (strcmp(j->type_key, "runtime.BoxInt") == 0 || strcmp(j->type_key, "runtime.BoxBool") == 0) {
        int64_t v;
        if (j->repr && strcmp(j->repr, "true") == 0)
            return 1;
        if (j->repr && strcmp(j->repr, "false") == 0)
            return 0;
        if (!parse_i64(j->repr, &v))
            doc_fail(doc, idx, "expected an integer in repr_str");
        return v;
    }
    if (strcmp(j->type_key, "tir.Any") == 0 || strcmp(j->type_key, "Any") == 0 ||
        strcmp(j->type_key, "tir.Var") == 0 || strcmp(j->type_key, "tir.SizeVar") == 0 ||
        strcmp(j->type_key, "Variable") == 0)
        doc_fail(doc, idx, "dynamic or symbolic dimension: relayc needs static shapes");
    doc_fail(doc, idx, "expected an integer (IntImm), found %s",
             j->type_key[0] ? j->type_key : "null");
}

int doc_map_get(const RelayDoc *doc, int idx, const char *key)
{
    if (idx == 0)
        return 0;
    const JNode *j = doc_node(doc, idx);
    if (!doc_is(doc, idx, "Map"))
        doc_fail(doc, idx, "expected a Map");
    if (j->keys) {
        int i = 0;
        const cJSON *k;
        cJSON_ArrayForEach(k, j->keys) {
            if (strcmp(k->valuestring, key) == 0)
                return j->data[i];
            i++;
        }
        return 0;
    }
    /* pair form: [k0, v0, k1, v1, ...] with String keys */
    for (int i = 0; i + 1 < (int)arrlen(j->data); i += 2) {
        const JNode *k = &doc->nodes[j->data[i]];
        if (k->repr && strcmp(k->type_key, "runtime.String") == 0 && strcmp(k->repr, key) == 0)
            return j->data[i + 1];
    }
    return 0;
}
