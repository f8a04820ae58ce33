"""ember.distributed: ember has no process groups; this answers as a build without them."""


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def init_process_group(backend=None, init_method=None, *args, **kwargs) -> None:
    raise RuntimeError(
        "torch.distributed.init_process_group: ember has no distributed backend (no process "
        "groups, gloo or NCCL); run the program as a single process"
    )


def destroy_process_group(group=None) -> None:
    """Nothing to destroy: no process group can exist in ember."""


def get_rank(group=None) -> int:
    raise RuntimeError("Default process group has not been initialized, please make sure to "
                       "call init_process_group.")


def get_world_size(group=None) -> int:
    raise RuntimeError("Default process group has not been initialized, please make sure to "
                       "call init_process_group.")


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
