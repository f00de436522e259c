"""seq_models.py: the sequence, transformer and audio models of the benchmark.

Each is a torch.nn module (random weights from a fixed seed) and the same module written
as Relay the way TVM 0.18's PyTorch frontend (relay.frontend.from_pytorch) writes it,
with tests/relaywriter.py: a 3-d nn.Linear as nn.batch_matmul of the input and
broadcast_to(transpose(weight)), then nn.bias_add; nn.MultiheadAttention in sequence-first
order (transpose, in_proj, split, reshape/transpose per head, divide by sqrt(head_dim),
batch_matmul, nn.softmax, batch_matmul, out_proj as nn.dense); nn.LayerNorm as
nn.layer_norm; nn.LSTM unrolled step by step (split of the sequence, squeeze, concatenate
of x_t and h, one nn.dense on the concatenated weights, two bias adds, split into the four
gates, sigmoid / tanh, stack of the outputs); nn.Conv1d as nn.conv1d + nn.bias_add;
nn.ConvTranspose2d as nn.conv2d_transpose (IOHW) + nn.bias_add.

bench/gen.py writes the Relay models and PyTorch's output on the harness's input
(x[k] = ((k * 7919) % 1000) / 1000 - 0.5) as the reference the harness checks relayc
against; bench/torch_models.py times the modules.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import relaywriter as rw  # noqa: E402


class Encoder(nn.Module):
    """One transformer encoder layer, batch first, post-norm, ReLU, no dropout."""
    D, H, F, S = 128, 4, 256, 32

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(self.D, self.H, self.F, dropout=0.0,
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)


class LSTMNet(nn.Module):
    """An LSTM over a short sequence, then a linear layer on its last output."""
    I, HID, S, O = 32, 64, 16, 10

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(self.I, self.HID, batch_first=True)
        self.fc = nn.Linear(self.HID, self.O)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class Conv1dLayer(nn.Module):
    """An audio CNN layer: 1-D convolution (same padding) and ReLU."""
    CI, CO, K, L = 32, 64, 9, 512

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(self.CI, self.CO, self.K, padding=self.K // 2)

    def forward(self, x):
        return torch.relu(self.conv(x))


class DeconvLayer(nn.Module):
    """A decoder (U-Net, DCGAN) layer: 4x4 transposed convolution, stride 2, and ReLU."""
    CI, CO, K, H = 64, 32, 4, 16

    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(self.CI, self.CO, self.K, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.deconv(x))


def harness_input(shape):
    """The input bench/harness.c feeds every model."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((k * 7919) % 1000).astype(np.float32) / np.float32(1000) -
            np.float32(0.5)).reshape(shape)


def _c(t):
    return rw.Const(t.detach().numpy().astype(np.float32))


def _linear3d(x, shape, w, b):
    """TVM's frontend on a Linear of a 3-d input: batch_matmul with the transposed weight
    broadcast to the batch, then bias_add on the last axis."""
    bsz, m, k = shape
    n = w.shape[0]
    xb = rw.Call("reshape", [rw.Call("broadcast_to", [x], {"shape": [bsz, m, k]})],
                 {"newshape": [-1, m, k]})
    wt = rw.Call("transpose", [_c(w)], {"axes": [1, 0]})
    wb = rw.Call("reshape", [rw.Call("broadcast_to", [wt], {"shape": [bsz, k, n]})],
                 {"newshape": [-1, k, n]})
    y = rw.Call("nn.batch_matmul", [xb, wb], {"transpose_a": False, "transpose_b": False})
    y = rw.Call("reshape", [y], {"newshape": [bsz, m, n]})
    return rw.Call("nn.bias_add", [y, _c(b)], {"axis": -1})


def _layer_norm(x, ln):
    return rw.Call("nn.layer_norm", [x, _c(ln.weight), _c(ln.bias)],
                   {"axis": -1, "epsilon": ln.eps, "center": True, "scale": True})


def relay_encoder(net):
    L, D, H, S = net.layer, Encoder.D, Encoder.H, Encoder.S
    hd = D // H
    x = rw.Var("input0", (1, S, D))
    a = L.self_attn
    # multi-head attention, sequence first
    t = rw.Call("transpose", [x], {"axes": [1, 0, 2]})                  # [S, 1, D]
    qkv = _linear3d(t, (S, 1, D), a.in_proj_weight, a.in_proj_bias)      # [S, 1, 3D]
    parts = rw.Call("split", [qkv], {"indices_or_sections": 3, "axis": -1})

    def heads(i):
        p = rw.Call("reshape", [rw.TupleGetItem(parts, i)], {"newshape": [S, H, hd]})
        return rw.Call("transpose", [p], {"axes": [1, 0, 2]})             # [H, S, hd]
    q = rw.Call("divide", [heads(0), rw.Const(np.float32(math.sqrt(hd)))])
    kt = rw.Call("transpose", [heads(1)], {"axes": [0, 2, 1]})           # [H, hd, S]
    s = rw.Call("nn.batch_matmul", [q, kt], {"transpose_a": False, "transpose_b": False})
    p = rw.Call("nn.softmax", [s], {"axis": -1})
    o = rw.Call("nn.batch_matmul", [p, heads(2)], {"transpose_a": False, "transpose_b": False})
    o = rw.Call("reshape", [rw.Call("transpose", [o], {"axes": [1, 0, 2]})], {"newshape": [S, D]})
    o = rw.Call("nn.bias_add", [rw.Call("nn.dense", [o, _c(a.out_proj.weight)], {"units": D}),
                                _c(a.out_proj.bias)], {"axis": -1})
    o = rw.Call("transpose", [rw.Call("reshape", [o], {"newshape": [S, 1, D]})], {"axes": [1, 0, 2]})
    y = _layer_norm(rw.Call("add", [x, o]), L.norm1)
    # feed-forward
    f = rw.Call("nn.relu", [_linear3d(y, (1, S, D), L.linear1.weight, L.linear1.bias)])
    f = _linear3d(f, (1, S, Encoder.F), L.linear2.weight, L.linear2.bias)
    return rw.Function([x], _layer_norm(rw.Call("add", [y, f]), L.norm2))


def relay_lstm(net):
    I, HID, S = LSTMNet.I, LSTMNet.HID, LSTMNet.S
    lstm = net.lstm
    x = rw.Var("input0", (1, S, I))
    steps = rw.Call("split", [rw.Call("transpose", [x], {"axes": [1, 0, 2]})],
                    {"indices_or_sections": S, "axis": 0})

    def zeros():
        z = rw.Call("full", [rw.Const(np.float32(0))], {"shape": [1, 1, HID], "dtype": "float32"})
        z = rw.Call("split", [z], {"indices_or_sections": 1, "axis": 0})
        return rw.Call("squeeze", [rw.TupleGetItem(z, 0)], {"axis": [0]})
    h, c = zeros(), zeros()
    w = rw.Call("concatenate", [rw.Tuple([_c(lstm.weight_ih_l0), _c(lstm.weight_hh_l0)])],
                {"axis": 1})
    outs = []
    for t in range(S):
        xt = rw.Call("squeeze", [rw.TupleGetItem(steps, t)], {"axis": [0]})
        g = rw.Call("nn.dense", [rw.Call("concatenate", [rw.Tuple([xt, h])], {"axis": 1}), w],
                    {"units": 4 * HID})
        g = rw.Call("add", [rw.Call("add", [g, _c(lstm.bias_ih_l0)]), _c(lstm.bias_hh_l0)])
        gs = rw.Call("split", [g], {"indices_or_sections": 4, "axis": -1})
        i_g = rw.Call("sigmoid", [rw.TupleGetItem(gs, 0)])
        f_g = rw.Call("sigmoid", [rw.TupleGetItem(gs, 1)])
        c_g = rw.Call("tanh", [rw.TupleGetItem(gs, 2)])
        o_g = rw.Call("sigmoid", [rw.TupleGetItem(gs, 3)])
        c = rw.Call("add", [rw.Call("multiply", [f_g, c]), rw.Call("multiply", [i_g, c_g])])
        h = rw.Call("multiply", [o_g, rw.Call("tanh", [c])])
        outs.append(h)
    y = rw.Call("transpose", [rw.Call("stack", [rw.Tuple(outs)], {"axis": 0})], {"axes": [1, 0, 2]})
    last = rw.Call("take", [y, rw.Const(np.int64(-1))], {"axis": 1, "mode": "wrap"})
    out = rw.Call("nn.bias_add", [rw.Call("nn.dense", [last, _c(net.fc.weight)], {"units": LSTMNet.O}),
                                  _c(net.fc.bias)], {"axis": -1})
    return rw.Function([x], out)


def relay_conv1d(net):
    m = Conv1dLayer
    x = rw.Var("input0", (1, m.CI, m.L))
    y = rw.Call("nn.conv1d", [x, _c(net.conv.weight)], {
        "strides": [1], "padding": [m.K // 2, m.K // 2], "dilation": [1], "groups": 1,
        "channels": m.CO, "kernel_size": [m.K]})
    y = rw.Call("nn.bias_add", [y, _c(net.conv.bias)], {"axis": 1})
    return rw.Function([x], rw.Call("nn.relu", [y]))


def relay_deconv(net):
    m = DeconvLayer
    x = rw.Var("input0", (1, m.CI, m.H, m.H))
    y = rw.Call("nn.conv2d_transpose", [x, _c(net.deconv.weight)], {
        "channels": m.CO, "kernel_size": [m.K, m.K], "strides": [2, 2],
        "padding": [1, 1, 1, 1], "output_padding": [0, 0], "dilation": [1, 1], "groups": 1,
        "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "", "out_dtype": ""})
    y = rw.Call("nn.bias_add", [y, _c(net.deconv.bias)], {"axis": 1})
    return rw.Function([x], rw.Call("nn.relu", [y]))


# name: (module, its input shape, the Relay writer)
MODELS = {
    "encoder": (Encoder, (1, Encoder.S, Encoder.D), relay_encoder),
    "lstm": (LSTMNet, (1, LSTMNet.S, LSTMNet.I), relay_lstm),
    "conv1d": (Conv1dLayer, (1, Conv1dLayer.CI, Conv1dLayer.L), relay_conv1d),
    "deconv": (DeconvLayer, (1, DeconvLayer.CI, DeconvLayer.H, DeconvLayer.H), relay_deconv),
}


def build(name, seed=0):
    """The module (eval mode, weights from seed), its Relay function, its input and
    PyTorch's output on it."""
    cls, shape, writer = MODELS[name]
    torch.manual_seed(seed)
    net = cls().eval()
    x = harness_input(shape)
    with torch.inference_mode():
        y = net(torch.from_numpy(x)).numpy().astype(np.float32)
    return net, writer(net), x, y
