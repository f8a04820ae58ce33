"""The sparse invariants flag (`torch.sparse.check_sparse_tensor_invariants`) and the warning
torch gives once per process when a sparse constructor runs with it never set. Each case
runs in a fresh process (the warning is once per process), for ember and for torch: a child
forked from a server that imported the library and ran nothing (tests/fresh_process.py)."""

import textwrap

import pytest

import ember
from ember.ops import sparse_invariants
from fresh_process import with_server

COO = "L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1.0, 2.0]), (3,){})"
CSR = "L.sparse_csr_tensor(L.tensor([0, 1, 2]), L.tensor([0, 1]), L.tensor([1.0, 2.0]){})"

CASES = {
    "coo": COO.format(""),
    "coo_without_size": "L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1.0, 2.0]))",
    "coo_twice_warns_once": f"{COO.format('')}; {COO.format('')}",
    "coo_then_csr_warns_once": f"{COO.format('')}; {CSR.format('')}",
    "csr": CSR.format(", (2, 2)"),
    "csc": "L.sparse_csc_tensor(L.tensor([0, 1, 2]), L.tensor([0, 1]), L.tensor([1.0, 2.0]))",
    "compressed": "L.sparse_compressed_tensor(L.tensor([0, 1, 2]), L.tensor([0, 1]), "
                  "L.tensor([1.0, 2.0]), (2, 2), layout=L.sparse_csr)",
    "explicit_false": COO.format(", check_invariants=False"),
    "explicit_true": COO.format(", check_invariants=True"),
    "explicit_then_implicit": f"{COO.format(', check_invariants=False')}; {COO.format('')}",
    "to_sparse": "L.eye(2).to_sparse(); L.eye(2).to_sparse_csr(); L.eye(2).to_sparse_coo()",
    "internal_results": "L.smm(L.eye(2).to_sparse(), L.eye(2)); "
                        "L.sparse.spdiags(L.ones(1, 3), L.tensor([0]), (3, 3))",
    "sparse_embedding_grad": "e = L.nn.Embedding(3, 2, sparse=True); "
                             "e(L.tensor([0, 1])).sum().backward()",
    "adagrad_on_a_sparse_grad": "e = L.nn.Embedding(3, 2, sparse=True); "
                                "e(L.tensor([0, 1])).sum().backward(); "
                                "L.optim.Adagrad(e.parameters()).step()",
    "disabled_first": f"L.sparse.check_sparse_tensor_invariants.disable(); {COO.format('')}",
    "queried_first": f"L.sparse.check_sparse_tensor_invariants.is_enabled(); {COO.format('')}",
    "context_first": "with L.sparse.check_sparse_tensor_invariants(False): pass\n"
                     + COO.format(""),
    "warn_always": f"L.set_warn_always(True); {COO.format('')}; {COO.format('')}",
}

SCRIPT = """
import warnings
import {lib} as L
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
{body}
print([(w.category.__name__, str(w.message)) for w in seen if "nvariant" in str(w.message)])
"""


def warnings_of(lib: str, body: str) -> list:
    code = SCRIPT.format(lib=lib, body=textwrap.indent(body, "    "))
    proc = with_server(lib).run_code(code, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr


@pytest.mark.parametrize("name", CASES)
def test_implicit_checks_warning_as_torch(name):
    want = warnings_of("torch", CASES[name])
    # (torch's text ends in where its C++ source warned: ember names no such file)
    want = [(c, m.split("  (Triggered internally at")[0]) for c, m in want]
    assert warnings_of("ember", CASES[name]) == want


def test_the_warning_is_a_user_warning_at_the_callers_line():
    code = ("import warnings, ember\nwarnings.simplefilter('always')\n"
            "ember.sparse_coo_tensor(ember.tensor([[0]]), ember.tensor([1.0]))\n")
    proc = with_server("ember").run_code(code, timeout=120)
    assert f"<string>:3: UserWarning: {sparse_invariants.IMPLICIT_WARNING}" in proc.stderr


@pytest.fixture
def fresh_flag():
    saved = sparse_invariants._state[0]
    yield
    sparse_invariants._state[0] = saved


def test_enabled_flag_checks_every_constructor(fresh_flag):
    bad = dict(indices=ember.tensor([[0, 5]]), values=ember.ones(2), size=(3,))
    ember.sparse.check_sparse_tensor_invariants.enable()
    assert ember.sparse.check_sparse_tensor_invariants.is_enabled()
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ember.sparse_coo_tensor(**bad)
    ember.sparse_coo_tensor(**bad, check_invariants=False)  # (the argument overrides it)
    ember.sparse.check_sparse_tensor_invariants.disable()
    assert ember.sparse_coo_tensor(**bad)._nnz() == 2


def test_context_manager_and_decorator_restore_the_flag(fresh_flag):
    flag = ember.sparse.check_sparse_tensor_invariants
    flag.disable()
    with flag():
        assert flag.is_enabled()
        with pytest.raises(RuntimeError):
            ember.sparse_csr_tensor(ember.tensor([0, 1, 1]), ember.tensor([3]), ember.ones(1),
                                    (2, 2))
    assert not flag.is_enabled()

    @flag(True)
    def inside():
        return flag.is_enabled()

    assert inside() and not flag.is_enabled()
    manager = flag()
    with manager:
        with pytest.raises(RuntimeError, match="already activated"):
            manager.__enter__()
