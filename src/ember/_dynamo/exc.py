"""`torch._dynamo.exc`: the exception a graph break raises under `fullgraph=True`."""

from ..graph.compiled import Unsupported

TorchDynamoException = RuntimeError

__all__ = ["TorchDynamoException", "Unsupported"]
