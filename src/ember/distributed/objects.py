"""Collectives on picklable Python objects (mpi4py pickles them for MPI)."""

from __future__ import annotations

from .group import resolve, watchdog


def _guarded(name: str, g, fn):
    with watchdog().guard(name, g.timeout):
        return fn()


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fill `object_list` (one slot per rank) with every rank's `obj`."""
    g = resolve(group)
    if len(object_list) != g.size():
        raise ValueError(f"all_gather_object: object_list must have {g.size()} slots (the "
                         f"group size), got {len(object_list)}")
    object_list[:] = _guarded("all_gather_object", g, lambda: g.comm.allgather(obj))


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None,
                          group_src=None) -> None:
    """Replace every rank's `object_list` items with rank `src`'s, in place."""
    g = resolve(group)
    root = group_src if group_src is not None else g.group_rank(src, "src")
    got = _guarded("broadcast_object_list", g,
                   lambda: g.comm.bcast(list(object_list) if g.rank() == root else None, root))
    if len(got) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {g.ranks[root]} sent {len(got)} "
                         f"objects into a list of {len(object_list)}")
    object_list[:] = got


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None,
                  group_dst=None) -> None:
    """Rank `dst` receives every rank's `obj` into `object_gather_list`."""
    g = resolve(group)
    root = group_dst if group_dst is not None else g.group_rank(dst, "dst")
    got = _guarded("gather_object", g, lambda: g.comm.gather(obj, root))
    if g.rank() == root:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int = 0, group=None, group_src=None) -> None:
    """Rank i receives rank `src`'s `scatter_object_input_list[i]` as output list item 0."""
    g = resolve(group)
    root = group_src if group_src is not None else g.group_rank(src, "src")
    items = list(scatter_object_input_list) if g.rank() == root else None
    scatter_object_output_list[0] = _guarded("scatter_object_list", g,
                                             lambda: g.comm.scatter(items, root))
