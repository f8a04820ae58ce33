"""Process-wide choices of algorithm that kernels read: whether deterministic algorithms
are required (`torch.use_deterministic_algorithms`; set through `ember._runtime`, kept here,
below the op layer, so that kernels may read it)."""

deterministic = {"on": False, "warn_only": False}


def deterministic_only() -> bool:
    """Whether kernels must run their reference algorithm (no Winograd products)."""
    return deterministic["on"]
