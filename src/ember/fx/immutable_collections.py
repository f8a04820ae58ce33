"""The list and dict types a Node's arguments are stored as: edits go through
`node.args = ...` (which keeps `users` right), so in-place changes are refused."""

from __future__ import annotations

__all__ = ["immutable_list", "immutable_dict"]


def _refuse(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. If you are "
                    "attempting to modify the kwargs or args of a torch.fx.Node object,\n"
                    "instead create a new copy of it and assign the copy to the node:\n\n"
                    "    new_args = ...  # copy and mutate args\n    node.args = new_args")


class immutable_list(list):  # noqa: N801 (torch's name)
    """A list that refuses in-place changes."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = reverse = sort = clear = _refuse

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):  # noqa: N801 (torch's name)
    """A dict that refuses in-place changes."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self) -> int:
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (list(self.items()),))
