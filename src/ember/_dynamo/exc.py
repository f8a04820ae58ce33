"""`torch._dynamo.exc`: the exceptions a graph break raises under `fullgraph=True`, and the
one `torch.compile` raises for a backend name it does not know."""

from ..graph.compiled import TorchDynamoException, TorchRuntimeError, Unsupported, UserError


class InvalidBackend(TorchDynamoException):
    """`torch.compile(backend="...")` with a name no backend is registered under."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` "
                         "for available backends.")


__all__ = ["InvalidBackend", "TorchDynamoException", "TorchRuntimeError", "Unsupported",
           "UserError"]
