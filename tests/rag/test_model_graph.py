"""The in-memory graph rewrite: what it removes from the pinned model, and what it leaves alone."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from app.rag.embedding import default_model_path
from app.rag.model_graph import prepare_graph, remove_softmax_nan_guards


def op_types(model: onnx.ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


def test_pinned_graph_loses_exactly_its_six_nan_guards() -> None:
    model = onnx.load(str(default_model_path()))
    before = op_types(model)
    assert remove_softmax_nan_guards(model) == 6
    after = op_types(model)
    assert "IsNaN" not in after
    assert after.count("Where") == before.count("Where") - 6
    assert len(before) - len(after) == 12
    onnx.checker.check_model(model)
    # Rewriting its own result finds nothing more to do.
    again = onnx.load_from_string(prepare_graph(model.SerializeToString()))
    assert op_types(again) == after


def guarded_softmax(fill: float = 0.0, *, extra_reader: bool = False) -> onnx.ModelProto:
    """x -> Softmax -> Where(IsNaN(p), fill, p) -> y, optionally with a second IsNaN reader."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "fill", "p"], ["guarded"]),
        helper.make_node("Identity", ["guarded"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]
    if extra_reader:
        nodes.append(helper.make_node("Not", ["nan"], ["finite"]))
        outputs.append(helper.make_tensor_value_info("finite", TensorProto.BOOL, [2, 3]))
    graph = helper.make_graph(
        nodes,
        "guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        outputs,
        [helper.make_tensor("fill", TensorProto.FLOAT, [], [fill])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    result: np.ndarray = session.run(["y"], {"x": x})[0]
    return result


def test_guard_removal_keeps_the_output_for_finite_rows() -> None:
    x = np.array([[1.0, 2.0, -np.inf], [0.5, -1.0, 3.0]], dtype=np.float32)
    model = guarded_softmax()
    expected = run(model, x)
    assert remove_softmax_nan_guards(model) == 1
    assert op_types(model) == ["Softmax", "Identity"]
    np.testing.assert_array_equal(run(model, x), expected)


@pytest.mark.parametrize(
    "model",
    [guarded_softmax(fill=1.0), guarded_softmax(extra_reader=True)],
    ids=["fill-not-zero", "isnan-read-elsewhere"],
)
def test_guard_removal_leaves_other_patterns_alone(model: onnx.ModelProto) -> None:
    before = op_types(model)
    assert remove_softmax_nan_guards(model) == 0
    assert op_types(model) == before
