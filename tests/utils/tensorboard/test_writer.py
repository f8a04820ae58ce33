"""SummaryWriter: event files read back by TensorBoard's own readers, and compared with the
files PyTorch's writer makes for the same calls."""

import glob
import io
import os
import textwrap

import numpy as np
import pytest
import torch
import torch.utils.tensorboard as torch_tb
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.plugins.hparams import plugin_data_pb2

import ember
from ember.utils.tensorboard import SummaryWriter
from fresh_process import with_server


def read(log_dir):
    ea = EventAccumulator(str(log_dir), size_guidance={"scalars": 0, "histograms": 0,
                                                       "images": 0, "tensors": 0})
    ea.Reload()
    return ea


def events(log_dir):
    """Every event of the one event file in `log_dir`, wall times blanked (they differ)."""
    (path,) = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    out = []
    for e in EventFileLoader(path).Load():
        e.wall_time = 0
        out.append(e)
    return out


def test_scalars_and_steps(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_scalar("lr", ember.tensor(0.125), 7, walltime=1234.5)
        w.add_scalar("new", np.float64(2.5), 1, new_style=True)
    ea = read(tmp_path)
    assert [(e.step, e.value) for e in ea.Scalars("loss")] == \
        [(s, pytest.approx(1.0 / (s + 1), rel=1e-7)) for s in range(5)]  # (float32 stored)
    (lr,) = ea.Scalars("lr")
    assert (lr.step, lr.value, lr.wall_time) == (7, 0.125, 1234.5)
    assert "new" in ea.Tags()["tensors"]
    assert ea.Tensors("new")[0].tensor_proto.float_val == [2.5]


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    w = SummaryWriter(tmp_path)
    for step in range(3):
        w.add_scalars("loss/all", {"train": step * 1.0, "val": step * 2.0}, step)
    w.close()
    assert sorted(os.listdir(tmp_path))[-2:] == ["loss_all_train", "loss_all_val"]
    val = read(tmp_path / "loss_all_val").Scalars("loss/all")
    assert [(e.step, e.value) for e in val] == [(0, 0.0), (1, 2.0), (2, 4.0)]


def test_histogram_by_hand(tmp_path):
    values = np.array([0.5, 1.5, 1.5, 2.5, 3.0])
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", ember.tensor(values), 3, bins=[0, 1, 2, 3])
    (h,) = read(tmp_path).Histograms("h")
    hv = h.histogram_value
    assert h.step == 3 and (hv.min, hv.max, hv.num) == (0.5, 3.0, 5)
    assert hv.sum == 9.0 and hv.sum_squares == 0.25 + 2.25 + 2.25 + 6.25 + 9.0
    # counts over [0,1) [1,2) [2,3] are 1, 2, 2; TensorBoard keeps right edges, so an
    # empty bucket ending at 0 goes in front
    assert list(hv.bucket_limit) == [0, 1, 2, 3] and list(hv.bucket) == [0, 1, 2, 2]


def test_image_pixels_and_layouts(tmp_path):
    rng = np.random.default_rng(0)
    chw = rng.random((3, 4, 5)).astype(np.float32)
    grey = (rng.random((4, 5)) * 255).astype(np.uint8)
    batch = rng.random((3, 1, 2, 2)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", ember.tensor(chw), 0)
        w.add_image("hw", grey, 0, dataformats="HW")
        w.add_images("grid", ember.tensor(batch), 0)
    from PIL import Image

    ea = read(tmp_path)

    def pixels(tag):
        (img,) = ea.Images(tag)
        return img, np.asarray(Image.open(io.BytesIO(img.encoded_image_string)))

    img, px = pixels("chw")
    assert (img.height, img.width) == (4, 5)
    # floats are taken as 0..1 and scaled by 255, truncated to uint8
    assert np.array_equal(px, (chw.transpose(1, 2, 0) * 255).astype(np.uint8))
    _, px = pixels("hw")
    assert px.shape == (4, 5, 3) and all(np.array_equal(px[..., c], grey) for c in range(3))
    img, px = pixels("grid")  # three 2x2 grey images side by side
    assert (img.height, img.width) == (2, 6)
    assert np.array_equal(px[:, 2:4, 0], (batch[1, 0] * 255).astype(np.uint8))


def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**a=2**, b=3: dL/da = 1260", 2)
    (t,) = read(tmp_path).Tensors("notes/text_summary")
    assert t.step == 2 and t.tensor_proto.string_val == [b"**a=2**, b=3: dL/da = 1260"]


def test_hparams_are_what_the_hparams_plugin_reads(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "optimizer": "adam", "layers": 2},
                      {"hparam/accuracy": 0.75}, run_name="trial")
    run = tmp_path / "trial"
    content = {}
    for e in events(run):
        for v in e.summary.value:
            if v.metadata.plugin_data.plugin_name == "hparams":
                content[v.tag] = plugin_data_pb2.HParamsPluginData.FromString(
                    v.metadata.plugin_data.content)
    start = content["_hparams_/session_start_info"].session_start_info
    assert start.hparams["lr"].number_value == 0.1
    assert start.hparams["optimizer"].string_value == "adam"
    exp = content["_hparams_/experiment"].experiment
    assert [i.name for i in exp.hparam_infos] == ["lr", "optimizer", "layers"]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/accuracy"]
    assert read(run).Scalars("hparam/accuracy")[0].value == 0.75
    with pytest.raises(TypeError, match="should be dictionary"):
        SummaryWriter(tmp_path).add_hparams([("lr", 1)], {})


def _same_calls(writer_cls, mod, log_dir, data):
    """One sequence of add_* calls, with fixed wall times, on either framework's writer."""
    w = writer_cls(log_dir, purge_step=4)
    t = 1000.0
    w.add_scalar("loss", mod.tensor(0.25), 0, walltime=t)
    w.add_scalar("loss", 0.125, 1, walltime=t + 1, new_style=True)
    w.add_scalar("precise", 1 / 3, 1, walltime=t, new_style=True, double_precision=True)
    w.add_histogram("weights", data["weights"], 5, walltime=t)
    w.add_histogram("auto", mod.tensor(data["weights"]), 5, bins="auto", walltime=t)
    w.add_histogram("few", data["weights"], 5, bins=40, max_bins=7, walltime=t)
    w.add_histogram_raw("raw", 0, 3, 4, 6, 14, [1, 2, 3], [1, 2, 1], 2, walltime=t)
    w.add_image("img", mod.tensor(data["image"]), 6, walltime=t)
    w.add_image("u8", data["u8"], 6, walltime=t, dataformats="HWC")
    w.add_text("note", "hello *world*", 7, walltime=t)
    w.add_scalars("pair", {"a": 1.0, "b": mod.tensor(2.0)}, 8, walltime=t)
    w.add_hparams({"lr": 0.01, "name": "x", "flag": True, "t": mod.tensor([0.5])},
                  {"hp/m": 1.5}, hparam_domain_discrete={"name": ["x", "y"]},
                  run_name="hp", global_step=9)
    w.close()


def test_event_files_match_pytorchs_writer(tmp_path):
    rng = np.random.default_rng(1)
    data = {"weights": rng.standard_normal(200), "image": rng.random((3, 6, 7)),
            "u8": (rng.random((5, 4, 4)) * 255).astype(np.uint8)}
    _same_calls(SummaryWriter, ember, tmp_path / "ember", data)
    _same_calls(torch_tb.SummaryWriter, torch, tmp_path / "torch", data)
    for sub in ["", "pair_a", "pair_b"]:
        ours, theirs = events(tmp_path / "ember" / sub), events(tmp_path / "torch" / sub)
        assert len(ours) == len(theirs) > 1
        for a, b in zip(ours, theirs):
            assert a == b, (a, b)
    # the hparams run: same summaries (its scalar's wall time differs by design: now)
    ours, theirs = events(tmp_path / "ember" / "hp"), events(tmp_path / "torch" / "hp")
    assert ours == theirs


def test_purge_step_flush_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path, purge_step=3, filename_suffix=".x")
    w.add_scalar("a", 1.0, 3)
    w.flush()
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert path.endswith(".x")
    first = events(tmp_path)
    assert first[1].step == 3 and first[1].file_version == "brain.Event:2"
    assert first[2].session_log.status == first[2].session_log.START
    w.close()
    w.add_scalar("a", 2.0, 4)  # a closed writer opens a new file
    w.close()
    assert len(glob.glob(str(tmp_path / "events.out.tfevents.*"))) == 2


def test_default_log_dir(tmp_path, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_" + socket.gethostname() + "_lr0.1")
    assert w.get_logdir() == os.path.join("runs", run)


# --- add_graph ------------------------------------------------------------------------------

class Net(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = ember.nn.Linear(4, 8)
        self.act = ember.nn.ReLU()
        self.fc2 = ember.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * 2


def test_add_graph_writes_the_forward_graph(tmp_path, capsys):
    net = Net()
    net.train()
    with SummaryWriter(tmp_path) as w:
        w.add_graph(net, ember.randn(3, 4), verbose=True)
    assert net.training  # eval for the forward, then put back
    g = read(tmp_path).Graph()
    nodes = {n.name: (n.op, list(n.input)) for n in g.node}
    assert nodes == {
        "input/input.0": ("IO Node", []),
        "Net/Linear[fc1]/weight": ("Parameter", []),
        "Net/Linear[fc1]/bias": ("Parameter", []),
        "Net/Linear[fc2]/weight": ("Parameter", []),
        "Net/Linear[fc2]/bias": ("Parameter", []),
        "Net/Linear[fc1]/T": ("T", ["Net/Linear[fc1]/weight"]),
        "Net/Linear[fc1]/Addmm": ("Addmm", ["Net/Linear[fc1]/bias", "input/input.0",
                                            "Net/Linear[fc1]/T"]),
        "Net/ReLU[act]/Relu": ("Relu", ["Net/Linear[fc1]/Addmm"]),
        "Net/Linear[fc2]/T": ("T", ["Net/Linear[fc2]/weight"]),
        "Net/Linear[fc2]/Addmm": ("Addmm", ["Net/Linear[fc2]/bias", "Net/ReLU[act]/Relu",
                                            "Net/Linear[fc2]/T"]),
        "Net/Mul": ("Mul", ["Net/Linear[fc2]/Addmm"]),  # outside any submodule: the root's
        "output/output.0": ("IO Node", ["Net/Mul"]),
    }
    shapes = {n.name: [d.size for d in n.attr["_output_shapes"].list.shape[0].dim]
              for n in g.node}
    assert shapes["Net/ReLU[act]/Relu"] == [3, 8] and shapes["Net/Linear[fc1]/T"] == [4, 8]
    assert shapes["output/output.0"] == [3, 2]
    assert "Net/ReLU[act]/Relu = Relu(Net/Linear[fc1]/Addmm)" in capsys.readouterr().out
    assert read(tmp_path).RunMetadata("step1").step_stats.dev_stats[0].device == \
        "/device:CPU:0"


def test_add_graph_node_names_agree_with_torch_autograd():
    """Each op node is the forward op of a grad_fn torch records for the same model."""
    from ember.utils.tensorboard.graph import graph

    net = Net()
    g, _ = graph(net, ember.randn(3, 4))
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    y = tnet(torch.randn(3, 4, requires_grad=True)) * 2
    names, stack = [], [y.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None and type(fn).__name__ != "AccumulateGrad":
            names.append(type(fn).__name__.removesuffix("Backward0"))
            stack.extend(n for n, _ in fn.next_functions)
    ops = [n.op for n in g.node if n.op not in ("IO Node", "Parameter")]
    assert sorted(ops) == sorted(names)


def test_add_graph_needs_an_input(tmp_path):
    with SummaryWriter(tmp_path) as w, pytest.raises(TypeError, match="needs input_to_model"):
        w.add_graph(Net())


# --- the optional dependency ----------------------------------------------------------------

def test_missing_tensorboard_raises_what_pytorch_raises():
    script = textwrap.dedent("""\
        import importlib.abc, sys

        class NoTensorBoard(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "tensorboard" or name.startswith("tensorboard."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, NoTensorBoard())
        errors = []
        for module in ("torch.utils.tensorboard", "ember.utils.tensorboard"):
            try:
                __import__(module)
            except Exception as e:
                errors.append((type(e).__name__, str(e)))
        print(errors)
        assert errors[0] == errors[1] == ("ModuleNotFoundError", "No module named 'tensorboard'")
        """)
    # (in a fresh child of a server that imported torch alone: tests/fresh_process.py)
    out = with_server("torch").run_code(script, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
