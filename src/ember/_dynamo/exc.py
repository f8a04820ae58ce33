"""`torch._dynamo.exc`: the exceptions a graph break raises under `fullgraph=True`."""

from ..graph.compiled import TorchDynamoException, Unsupported, UserError

__all__ = ["TorchDynamoException", "Unsupported", "UserError"]
