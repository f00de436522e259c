"""tv_models.py: whole torchvision models in the benchmark, written as TVM 0.18 writes them.

ResNet-18, MobileNetV3-small, EfficientNet-B0, ShuffleNetV2 x0.5 and SqueezeNet 1.1 from
Debian's torchvision (random weights from a fixed seed, random batch-norm statistics, eval
mode) on a 1x3x64x64 input. Each is traced with torch.fx and written with
tests/relaywriter.py the way relay.frontend.from_pytorch (TVM 0.18) converts the traced
operators:

  Conv2d              nn.conv2d (OIHW; a depthwise weight reshaped to [C, 1, kh, kw]
                      first), then nn.bias_add when it has a bias
  BatchNorm2d         nn.batch_norm (axis 1, center, scale), its element 0 (TupleGetItem)
  ReLU, ReLU6         nn.relu; clip(0, 6)
  Hardsigmoid         divide(clip(add(x, 3), 0, 6), 6)
  Hardswish           multiply(x, hardsigmoid(x))
  Sigmoid, SiLU       sigmoid; multiply(x, sigmoid(x))
  + and *             add, multiply
  AdaptiveAvgPool2d   nn.adaptive_avg_pool2d (NCHW)
  MaxPool2d, AvgPool2d  nn.max_pool2d, nn.avg_pool2d (with ceil_mode)
  torch.cat           concatenate of a tuple
  flatten(x, 1)       reshape(x, [0, -1, 1, ...]) then squeeze of the axes after 1
  view, reshape       reshape to the literal shape; transpose(x, a, b): transpose with
                      those two axes swapped; contiguous: nothing
  chunk(n, dim)       split at the indices [d/n, 2d/n, ...], then TupleGetItem
  channel_shuffle     torchvision's function, as TorchScript traces it: reshape to
                      [N, g, C/g, H, W], transpose(1, 2), reshape to [N, -1, H, W]
  mean(dims)          mean (keepdims false)
  Linear              nn.dense (weight [out, in], units unset), nn.bias_add axis -1
  Dropout             nn.dropout, its element 0; StochasticDepth (eval): nothing

bench/gen.py writes the Relay models and PyTorch's output on the harness's input as the
reference the harness checks relayc against; bench/torch_models.py times the modules.
"""
import operator
import os
import sys

import numpy as np
import torch
import torch.fx as fx
import torch.nn as nn
import torchvision
from torch.fx.passes.shape_prop import ShapeProp
from torchvision.models import shufflenetv2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import relaywriter as rw  # noqa: E402

SHAPE = (1, 3, 64, 64)

# name: the torchvision constructor
MODELS = {
    "resnet18": torchvision.models.resnet18,
    "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
    "shufflenet_v2_x0_5": torchvision.models.shufflenet_v2_x0_5,
    "squeezenet1_1": torchvision.models.squeezenet1_1,
}


def _c(t):
    return rw.Const(t.detach().numpy().astype(np.float32))


def _f32(v):
    return rw.Const(np.float32(v))


def _pair(v):
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def _hardsigmoid(x):
    return rw.Call("divide", [rw.Call("clip", [rw.Call("add", [x, _f32(3.0)])],
                                      {"a_min": 0.0, "a_max": 6.0}), _f32(6.0)])


def _conv2d(m, x):
    w = _c(m.weight)
    co, cig, kh, kw = m.weight.shape
    if m.groups > 1 and cig == 1:  # depthwise: the frontend reshapes the weight
        w = rw.Call("reshape", [w], {"newshape": [m.groups, co // m.groups, kh, kw]})
    if isinstance(m.padding, str):
        raise NotImplementedError("Conv2d padding=%r" % m.padding)
    ph, pw = _pair(m.padding)
    y = rw.Call("nn.conv2d", [x, w], {
        "strides": _pair(m.stride), "padding": [ph, pw, ph, pw], "dilation": _pair(m.dilation),
        "groups": m.groups, "channels": co, "kernel_size": [kh, kw], "data_layout": "NCHW",
        "kernel_layout": "OIHW", "out_layout": "", "out_dtype": ""})
    return rw.Call("nn.bias_add", [y, _c(m.bias)], {"axis": 1}) if m.bias is not None else y


def _batch_norm(m, x):
    bn = rw.Call("nn.batch_norm", [x, _c(m.weight), _c(m.bias), _c(m.running_mean),
                                   _c(m.running_var)],
                 {"axis": 1, "epsilon": m.eps, "center": True, "scale": True})
    return rw.TupleGetItem(bn, 0)


def _pool(m, x, op):
    ph, pw = _pair(m.padding)
    a = {"pool_size": _pair(m.kernel_size), "strides": _pair(m.stride or m.kernel_size),
         "padding": [ph, pw, ph, pw], "layout": "NCHW", "ceil_mode": bool(m.ceil_mode)}
    if op == "nn.max_pool2d":
        a["dilation"] = _pair(m.dilation)
    else:
        a["dilation"] = [1, 1]
        a["count_include_pad"] = bool(m.count_include_pad)
    return rw.Call(op, [x], a)


def _linear(m, x):
    y = rw.Call("nn.dense", [x, _c(m.weight)], {"units": None})
    return rw.Call("nn.bias_add", [y, _c(m.bias)], {"axis": -1}) if m.bias is not None else y


def _adaptive_avg(x, size):
    return rw.Call("nn.adaptive_avg_pool2d", [x], {"output_size": _pair(size), "layout": "NCHW"})


def _flatten(x, rank, start=0, end=-1):
    start, end = start % rank, end % rank
    y = rw.Call("reshape", [x], {"newshape": [0] * start + [-1] + [1] * (end - start) +
                                 [0] * (rank - end - 1)})
    squeeze = list(range(start + 1, end + 1))
    return rw.Call("squeeze", [y], {"axis": squeeze}) if squeeze else y


def _transpose(x, rank, a, b):
    axes = list(range(rank))
    a, b = a % rank, b % rank
    axes[a], axes[b] = b, a
    return rw.Call("transpose", [x], {"axes": axes})


def _chunk(x, shape, n, dim):
    d = shape[dim]
    size = d // (n - 1) if d % n else d // n
    return rw.Call("split", [x], {"indices_or_sections": list(range(size, d, size)),
                                  "axis": dim % len(shape)})


def _channel_shuffle(x, shape, groups):
    b, c, h, w = shape
    y = rw.Call("reshape", [x], {"newshape": [b, groups, c // groups, h, w]})
    y = rw.Call("transpose", [y], {"axes": [0, 2, 1, 3, 4]})
    return rw.Call("reshape", [y], {"newshape": [b, -1, h, w]})


def _module(m, x, shape):
    """The Relay of module m on x (of shape)."""
    if isinstance(m, nn.Conv2d):
        return _conv2d(m, x)
    if isinstance(m, nn.BatchNorm2d):
        return _batch_norm(m, x)
    if isinstance(m, nn.ReLU):
        return rw.Call("nn.relu", [x])
    if isinstance(m, nn.ReLU6):
        return rw.Call("clip", [x], {"a_min": 0.0, "a_max": 6.0})
    if isinstance(m, nn.Hardsigmoid):
        return _hardsigmoid(x)
    if isinstance(m, nn.Hardswish):
        return rw.Call("multiply", [x, _hardsigmoid(x)])
    if isinstance(m, nn.Sigmoid):
        return rw.Call("sigmoid", [x])
    if isinstance(m, nn.SiLU):
        return rw.Call("multiply", [x, rw.Call("sigmoid", [x])])
    if isinstance(m, nn.AdaptiveAvgPool2d):
        return _adaptive_avg(x, m.output_size)
    if isinstance(m, nn.MaxPool2d):
        return _pool(m, x, "nn.max_pool2d")
    if isinstance(m, nn.AvgPool2d):
        return _pool(m, x, "nn.avg_pool2d")
    if isinstance(m, nn.Linear):
        return _linear(m, x)
    if isinstance(m, nn.Dropout):
        return rw.TupleGetItem(rw.Call("nn.dropout", [x], {"rate": m.p}), 0)
    if isinstance(m, nn.Flatten):
        return _flatten(x, len(shape), m.start_dim, m.end_dim)
    if isinstance(m, nn.Identity):
        return x
    raise NotImplementedError("module %s" % type(m).__name__)


def _arg(env, a):
    return env[a] if isinstance(a, fx.Node) else a


def _function(n, env, shape_of):
    """The Relay of call_function / call_method node n."""
    t, args = n.target, n.args
    x = _arg(env, args[0]) if args else None
    shape = shape_of(args[0]) if args and isinstance(args[0], fx.Node) else None
    if t in (operator.add, torch.add, "add"):
        return rw.Call("add", [_operand(env, args[0]), _operand(env, args[1])])
    if t in (operator.mul, torch.mul, "mul"):
        return rw.Call("multiply", [_operand(env, args[0]), _operand(env, args[1])])
    if t is torch.cat:
        return rw.Call("concatenate", [rw.Tuple([env[a] for a in args[0]])],
                       {"axis": n.kwargs.get("dim", args[1] if len(args) > 1 else 0)})
    if t in (torch.flatten, "flatten"):
        start = args[1] if len(args) > 1 else n.kwargs.get("start_dim", 0)
        return _flatten(x, len(shape), start, args[2] if len(args) > 2 else -1)
    if t is shufflenetv2.channel_shuffle:
        return _channel_shuffle(x, shape, args[1])
    if t is torchvision.ops.stochastic_depth:  # eval: the identity
        assert not n.kwargs.get("training", args[3] if len(args) > 3 else True)
        return x
    if t in ("view", "reshape"):
        dims = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
        return rw.Call("reshape", [x], {"newshape": list(dims)})
    if t in (torch.transpose, "transpose"):
        return _transpose(x, len(shape), args[1], args[2])
    if t == "contiguous":
        return x
    if t in (torch.chunk, "chunk"):
        return _chunk(x, shape, args[1], n.kwargs.get("dim", args[2] if len(args) > 2 else 0))
    if t is operator.getitem:
        return rw.TupleGetItem(x, args[1])
    if t == "mean":
        dims = args[1] if len(args) > 1 else n.kwargs["dim"]
        return rw.Call("mean", [x], {"axis": list(dims), "keepdims": bool(n.kwargs.get("keepdim", False)),
                                     "exclude": False})
    if t in (torch.sigmoid, "sigmoid"):
        return rw.Call("sigmoid", [x])
    if t in (torch.relu, nn.functional.relu, "relu"):
        return rw.Call("nn.relu", [x])
    if t is nn.functional.adaptive_avg_pool2d:
        return _adaptive_avg(x, args[1])
    raise NotImplementedError("function %s" % getattr(t, "__name__", t))


def _operand(env, a):
    return env[a] if isinstance(a, fx.Node) else _f32(a)


class _Tracer(fx.Tracer):
    """torch.fx's tracer, with channel_shuffle kept whole (it unpacks x.size()) and the
    result of x.chunk(n) iterable as n parts (fx finds the unpacking from the bytecode,
    which it fails to on Python 3.11)."""

    def __init__(self):
        super().__init__(autowrap_functions=(shufflenetv2.channel_shuffle,))

    def iter(self, obj):
        n = obj.node
        if n.op == "call_method" and n.target == "chunk":
            return iter([obj[i] for i in range(n.args[1])])
        return super().iter(obj)


def to_relay(net, shape=SHAPE):
    """net (eval mode) as a Relay function of one input, input0 of shape."""
    tracer = _Tracer()
    gm = fx.GraphModule(net, tracer.trace(net))
    ShapeProp(gm).propagate(torch.zeros(shape))

    def shape_of(node):  # None for a tuple (chunk's parts)
        meta = node.meta["tensor_meta"]
        return tuple(meta.shape) if hasattr(meta, "shape") else None
    env = {}
    out = None
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            env[n] = rw.Var("input0", shape)
        elif n.op == "call_module":
            env[n] = _module(gm.get_submodule(n.target), env[n.args[0]], shape_of(n.args[0]))
        elif n.op in ("call_function", "call_method"):
            env[n] = _function(n, env, shape_of)
        elif n.op == "output":
            out = env[n.args[0]]
        else:
            raise NotImplementedError("fx node %s" % n.op)
    return rw.Function([env[next(iter(gm.graph.nodes))]], out)


def make(name, seed=0):
    """The module, eval mode: weights from seed, and batch-norm statistics drawn too (the
    defaults, mean 0 and variance 1, would make every batch norm nearly the identity)."""
    torch.manual_seed(seed)
    net = MODELS[name](weights=None)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return net.eval()


def build(name, x, seed=0):
    """The module, its Relay function and PyTorch's output on x."""
    net = make(name, seed)
    with torch.inference_mode():
        y = net(torch.from_numpy(x)).numpy().astype(np.float32)
    return net, to_relay(net, x.shape), y
