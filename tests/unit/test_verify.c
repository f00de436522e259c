/*
 * test_verify.c: unit tests for the IR verifier (compiler/verify.c) and the operator
 * table (compiler/ir_ops.c). Each case builds a small graph by hand, checks that ir_verify
 * accepts it, breaks one invariant and checks that ir_verify names it. Output is TAP.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count, failed;

static void tap(bool ok, const char *name, const char *why)
{
    count++;
    if (ok) {
        printf("ok %d - %s\n", count, name);
    } else {
        failed++;
        printf("not ok %d - %s: %s\n", count, name, why);
    }
}

/* An empty graph with one input of shape s; returns it. *a is cleared, its ew relu. */
static int one_input(Graph *g, const Shape *s, Attrs *a)
{
    memset(g, 0, sizeof *g);
    int x = graph_add_value(g, VAL_INPUT, DT_F32, s, 1);
    g->values[x].input = 0;
    arrput(g->inputs, x);
    memset(a, 0, sizeof *a);
    a->ew = EW_RELU;
    return x;
}

/* x [1, 4] -> relu -> add(x) -> out: a valid two-node graph. */
static void chain(Graph *g)
{
    Shape s = { 2, { 1, 4 } };
    Attrs a;
    int x = one_input(g, &s, &a);
    int r = graph_add_node(g, IR_UNARY, &x, 1, &a, DT_F32, &s, 2, "nn.relu");
    a.ew = EW_ADD;
    int in[2] = { r, x };
    int y = graph_add_node(g, IR_BINARY, in, 2, &a, DT_F32, &s, 3, "add");
    arrput(g->outputs, y);
}

/* x [1, 2, 3] -> relu, exp -> concatenate along axis 1 -> negative -> out: the plan writes
 * relu and exp in place, inside the concatenate's result. */
static void concat_graph(Graph *g)
{
    Shape s = { 3, { 1, 2, 3 } }, c = { 3, { 1, 4, 3 } };
    Attrs a;
    int x = one_input(g, &s, &a);
    int in[2];
    in[0] = graph_add_node(g, IR_UNARY, &x, 1, &a, DT_F32, &s, 2, "nn.relu");
    a.ew = EW_EXP;
    in[1] = graph_add_node(g, IR_UNARY, &x, 1, &a, DT_F32, &s, 3, "exp");
    memset(&a, 0, sizeof a);
    a.axis = 1;
    int y = graph_add_node(g, IR_CONCAT, in, 2, &a, DT_F32, &c, 4, "concatenate");
    a.ew = EW_NEGATIVE;
    arrput(g->outputs, graph_add_node(g, IR_UNARY, &y, 1, &a, DT_F32, &c, 5, "negative"));
}

/* Expects ir_verify to fail on g (plan p or NULL) with a message containing want. */
static void expect_fail(Graph *g, const Plan *p, const char *name, const char *want)
{
    char err[512] = "";
    bool ok = ir_verify(g, p, err, sizeof err);
    char why[700];
    snprintf(why, sizeof why, "ir_verify %s (\"%s\"), want a failure naming \"%s\"",
             ok ? "passed" : "failed", err, want);
    tap(!ok && strstr(err, want) != NULL, name, why);
}

int main(void)
{
    Graph g;
    char err[512];

    ir_ops_check(); /* aborts when a row is missing */
    bool rows = true;
    for (int op = 0; op < IR_COUNT; op++)
        rows = rows && ir_ops[op].name && ir_ops[op].calls;
    tap(rows, "every IR op has a row with a name and its calls", "a row is incomplete");

    chain(&g);
    tap(ir_verify(&g, NULL, err, sizeof err), "a valid graph passes", err);
    Plan p;
    plan_memory(&g, &p);
    tap(ir_verify(&g, &p, err, sizeof err), "a valid graph and its plan pass", err);
    plan_free(&p);
    graph_free(&g);

    chain(&g);
    g.nodes[1].in[0] = 99;
    expect_fail(&g, NULL, "an input out of range", "out of range");
    graph_free(&g);

    chain(&g);
    { /* the add before the relu it reads */
        Node t = g.nodes[0];
        g.nodes[0] = g.nodes[1];
        g.nodes[1] = t;
        g.values[g.nodes[0].out].producer = 0;
        g.values[g.nodes[1].out].producer = 1;
    }
    expect_fail(&g, NULL, "nodes out of execution order", "not computed before it");
    graph_free(&g);

    chain(&g);
    g.nodes[1].out = g.nodes[0].out; /* two producers of one value */
    expect_fail(&g, NULL, "two producers of one value", "another producer");
    graph_free(&g);

    chain(&g);
    g.values[g.nodes[0].out].shape.dim[1] = 5; /* relu changes the shape */
    expect_fail(&g, NULL, "a unary node that changes the shape", "shapes differ");
    graph_free(&g);

    chain(&g);
    arrsetlen(g.nodes[1].src, 0);
    expect_fail(&g, NULL, "a node without provenance", "no source");
    graph_free(&g);

    chain(&g);
    plan_memory(&g, &p);
    { /* two buffers live at once, placed on each other */
        PlanBuf extra = p.bufs[0];
        extra.first = 0, extra.last = (int)arrlen(g.nodes) - 1;
        arrput(p.bufs, extra);
        PlanBuf other = extra;
        other.offset = extra.offset + 4;
        arrput(p.bufs, other);
        if (p.workspace < other.offset + other.size)
            p.workspace = other.offset + other.size;
    }
    expect_fail(&g, &p, "workspace buffers that overlap while live", "overlap while both live");
    plan_free(&p);
    graph_free(&g);

    concat_graph(&g);
    plan_memory(&g, &p);
    tap(p.st[g.nodes[0].out].alias == g.nodes[2].out && p.st[g.nodes[1].out].alias == g.nodes[2].out &&
        p.st[g.nodes[1].out].offset == p.st[g.nodes[2].out].offset + 24,
        "the plan writes a concatenate's operands in place", "an operand has storage of its own");
    tap(ir_verify(&g, &p, err, sizeof err) && plan_elided(&g, &p, 2),
        "a concatenate of operands written in place verifies and needs no code", err);
    p.st[g.nodes[1].out].offset -= 4; /* the second operand one element early */
    expect_fail(&g, &p, "a concatenate operand off its place", "not at its place");
    p.st[g.nodes[1].out].offset += 4;
    for (int k = 0; k < (int)arrlen(p.bufs); k++)
        if (p.bufs[k].value == g.nodes[2].out)
            p.bufs[k].first = 1; /* the buffer would start after the first operand is written */
    expect_fail(&g, &p, "a buffer not live when an operand is written into it", "outside its buffer");
    plan_free(&p);
    graph_free(&g);

    printf("1..%d\n", count);
    return failed ? 1 : 0;
}
