"""index_checks.py: the checks of index_add / index_copy against torch's words (the rest of
their checks are exercised through the ops' own tests)."""



from helpers import same_messages


def test_operands_on_different_devices_are_refused_in_the_kernels_words():
    # After the shape and dtype checks, before the index values are read; a meta operand
    # beside CPU ones stands for a second device.
    def calls(L):
        m = lambda *s: L.empty(*s, device="meta")  # noqa: E731
        o, i = L.ones, L.tensor([0])
        yield "index_add self", lambda: m(3, 3).index_add(0, i, o(1, 3))
        yield "index_add index", lambda: o(3, 3).index_add(0, m(1).long(), o(1, 3))
        yield "index_add source", lambda: o(3, 3).index_add(0, i, m(1, 3))
        yield "index_add_ 1-d", lambda: o(3).index_add_(0, i, m(1))
        yield "index_copy source", lambda: o(3, 3).index_copy(0, i, m(1, 3))
        yield "index_copy index", lambda: o(3, 3).index_copy(0, m(1).long(), o(1, 3))
        yield "index_copy self", lambda: m(3, 3).index_copy(0, i, o(1, 3))

    same_messages(calls)
