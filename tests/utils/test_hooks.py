"""ember.utils.hooks.RemovableHandle: the one handle class, as torch.utils.hooks exposes it."""

import pickle
from collections import OrderedDict

import torch

import ember
from ember.utils.hooks import RemovableHandle


def test_every_register_returns_the_one_class():
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        t = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        handles = [m.register_forward_hook(print), t.register_hook(print),
                   opt.register_step_pre_hook(print)]
        cls = lib.utils.hooks.RemovableHandle
        assert all(isinstance(h, cls) for h in handles)
    assert RemovableHandle is ember.utils.hooks.RemovableHandle


def test_remove_takes_the_id_out_of_every_dict():
    for cls in (torch.utils.hooks.RemovableHandle, RemovableHandle):
        # OrderedDict: torch holds weak references, which plain dicts refuse
        hooks, extra_a, extra_b = OrderedDict(), OrderedDict(), OrderedDict()
        h = cls(hooks, extra_dict=[extra_a, extra_b])
        hooks[h.id] = extra_a[h.id] = extra_b[h.id] = 1
        single = cls(hooks, extra_dict=extra_a)
        assert single.id == h.id + 1
        hooks[single.id] = extra_a[single.id] = 2
        with h:
            pass
        assert h.id not in hooks and h.id not in extra_a and h.id not in extra_b
        single.remove()
        single.remove()  # a second remove is a no-op, as torch's
        assert hooks == {} and extra_a == {}


def test_pickle_keeps_the_id_and_moves_the_counter():
    hooks = {}
    h = RemovableHandle(hooks)
    hooks[h.id] = "hook"
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id and h2.hooks_dict == {h.id: "hook"}
    assert RemovableHandle.next_id > h.id


def test_forward_hook_removed_by_handle():
    m = ember.nn.Identity()
    seen = []
    h = m.register_forward_hook(lambda mod, i, o: seen.append(1))
    m(ember.ones(1))
    h.remove()
    m(ember.ones(1))
    assert seen == [1]


def test_handle_prints_as_torchs_under_the_alias(tmp_path):
    import subprocess
    import sys

    prog = tmp_path / "prog.py"
    prog.write_text("import torch\n"
                    "print(type(torch.zeros(1, requires_grad=True).register_hook(lambda g: g)))")
    out = subprocess.run([sys.executable, "-m", "ember.run", str(prog)], capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "<class 'torch.utils.hooks.RemovableHandle'>", out.stderr
