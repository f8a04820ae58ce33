"""ember.save / ember.load: PyTorch's checkpoint files both ways, and a loader that runs no code.

The golden files in tests/data/ were written by torch.save (tests/data/make_golden.py);
the tests that read them use no torch at all.
"""

import collections
import io
import os
import pickle
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember.serialization import CheckpointError, UnpicklingError

from helpers import to_numpy_t

DATA = os.path.join(os.path.dirname(__file__), "data")


def storage_of(t):
    return t._ensure_storage_obj()


def torch_bytes(obj, **kw) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def ember_bytes(obj) -> bytes:
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def torch_load_strict(raw: bytes, **kw):
    """torch.load with its defaults (weights_only=True) and every warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return torch.load(io.BytesIO(raw), **kw)


def assert_same_tensor(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride() and e.storage_offset() == t.storage_offset()
    assert e.dtype.name == str(t.dtype).split(".")[1]
    a, b = e.detach().numpy(), to_numpy_t(t)
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# --- golden files (no torch used) -------------------------------------------------------------

def golden(name):
    obj = ember.load(os.path.join(DATA, f"{name}.pt"))
    expected = np.load(os.path.join(DATA, f"{name}.npz"))
    return obj, expected


def check_golden(tensors: dict, expected) -> None:
    ptr_groups: dict[int, set] = {}
    for name, t in tensors.items():
        meta = expected[f"{name}.meta"].tolist()
        cut = meta.index(-1)
        shape, rest = meta[:cut], meta[cut + 1:]
        cut = rest.index(-1)
        stride, offset = rest[:cut], rest[cut + 1]
        assert list(t.shape) == shape and list(t.stride()) == stride, name
        assert t.storage_offset() == offset, name
        got = np.ascontiguousarray(t.detach().numpy()).reshape(-1).view(np.uint8)
        assert np.array_equal(got, expected[f"{name}.bits"]), name
        ptr_groups.setdefault(int(expected[f"{name}.ptr"][0]), set()).add(id(storage_of(t)))
    # Tensors that shared a storage in torch share one here, and only those.
    assert all(len(group) == 1 for group in ptr_groups.values())
    assert len({s for g in ptr_groups.values() for s in g}) == len(ptr_groups)


def test_golden_every_dtype():
    obj, expected = golden("dtypes")
    assert obj["float8_e4m3fn"].dtype.name == "float8_e4m3fn"
    assert obj["bfloat16"].dtype is ember.bfloat16 and obj["complex128"].dtype is ember.complex128
    check_golden(obj, expected)


def test_golden_views_share_storage():
    obj, expected = golden("views")
    check_golden(obj, expected)
    assert obj["w"] is obj["tied"]  # the same object twice stays one object
    obj["w"][0, 0] = 123.0
    assert obj["wt"][0, 0].item() == 123.0  # a write through one view shows in the other


def test_golden_state_dict_with_batchnorm_buffers():
    obj, expected = golden("state_dict")
    assert isinstance(obj, collections.OrderedDict)
    assert obj._metadata["1"] == {"version": 2}
    nbt = obj["1.num_batches_tracked"]
    assert nbt.dtype is ember.int64 and nbt.dim() == 0 and nbt.item() == 1
    check_golden(obj, expected)


def test_golden_optimizer_state():
    obj, expected = golden("adamw")
    group = obj["param_groups"][0]
    assert group["betas"] == (0.9, 0.999) and group["foreach"] is None
    assert group["params"] == list(range(6)) and set(obj["state"]) == set(range(6))
    check_golden({f"{i}.{k}": v for i, s in obj["state"].items() for k, v in s.items()},
                 expected)


def test_golden_legacy_format():
    obj, expected = golden("legacy")
    check_golden(dict(obj), expected)


# --- torch -> ember ------------------------------------------------------------------------------

def tied_state_dict():
    torch.manual_seed(0)
    emb = torch.randn(10, 4)
    bn = torch.nn.BatchNorm1d(4)
    bn(torch.randn(8, 4))
    sd = collections.OrderedDict(
        [("embed.weight", emb), ("head.weight", emb), ("head_t", emb.t()),
         ("half", torch.randn(3, 3).to(torch.bfloat16)), ("row", emb[2])])
    for k, v in bn.state_dict().items():
        sd[f"bn.{k}"] = v
    sd._metadata = collections.OrderedDict({"": {"version": 1}, "bn": {"version": 2}})
    return sd


def test_torch_checkpoint_loads_in_ember():
    sd = tied_state_dict()
    out = ember.load(io.BytesIO(torch_bytes(sd)))
    assert list(out) == list(sd) and out._metadata == sd._metadata
    for k in sd:
        assert_same_tensor(out[k], sd[k])
    s = storage_of(out["embed.weight"])
    assert storage_of(out["head_t"]) is s and storage_of(out["row"]) is s
    assert out["bn.num_batches_tracked"].dtype is ember.int64


def test_torch_parameters_become_ember_parameters():
    p = torch.nn.Parameter(torch.randn(2, 3))
    out = ember.load(io.BytesIO(torch_bytes({"p": p, "frozen": torch.nn.Parameter(
        torch.ones(1), requires_grad=False), "leaf": torch.ones(2, requires_grad=True)})))
    from ember.nn import Parameter

    assert isinstance(out["p"], Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], Parameter) and not out["frozen"].requires_grad
    assert out["leaf"].requires_grad and out["leaf"].is_leaf
    assert np.array_equal(out["p"].detach().numpy(), p.detach().numpy())


def test_nested_python_values_round_trip():
    obj = {1: [1, 2.5, -(2**70), "ünïcode", b"\x00\xff", b"", None, True],
           "t": (1, 2, 3, 4), "set": {1, 2}, "c": 1 - 2j, "C": collections.Counter(a=2),
           "size": torch.Size([2, 3]), "dev": torch.device("cpu"), "dt": torch.float16,
           "ba": bytearray(b"xy")}
    out = ember.load(io.BytesIO(torch_bytes(obj)))
    assert out[1] == obj[1] and out["t"] == obj["t"] and out["set"] == obj["set"]
    assert out["c"] == obj["c"] and out["C"] == obj["C"] and out["ba"] == obj["ba"]
    assert out["size"] == ember.Size([2, 3]) and out["dev"] == ember.device("cpu")
    assert out["dt"] is ember.float16
    back = torch_load_strict(ember_bytes(out))
    for k in obj:
        if k != 1:  # torch writes b"" in a way its own weights_only loader refuses
            assert back[k] == obj[k]


def test_legacy_and_protocol_4_files():
    sd = tied_state_dict()
    for raw in (torch_bytes(sd, _use_new_zipfile_serialization=False),
                torch_bytes(sd, pickle_protocol=4)):
        out = ember.load(io.BytesIO(raw))
        for k in sd:
            assert_same_tensor(out[k], sd[k])
        assert storage_of(out["head_t"]) is storage_of(out["embed.weight"])


def _rezip(raw: bytes, edit) -> bytes:
    """A copy of a checkpoint with `edit(name, payload) -> payload` applied to each record."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, edit(info.filename, src.read(info.filename)))
    return out.getvalue()


def test_big_endian_files_load_as_in_torch():
    sd = {"f": torch.arange(5.0), "i": torch.arange(3, dtype=torch.int16), "b": torch.ones(2)
          .to(torch.bfloat16)}
    dtypes = {"0": np.float32, "1": np.int16, "2": np.uint16}

    def to_big(name, payload):
        if name.endswith("byteorder"):
            return b"big"
        key = name.rsplit("/", 1)[-1]
        if "/data/" in name:
            return np.frombuffer(payload, dtypes[key]).byteswap().tobytes()
        return payload

    raw = _rezip(torch_bytes(sd), to_big)
    theirs, ours = torch.load(io.BytesIO(raw)), ember.load(io.BytesIO(raw))
    for k in sd:
        assert_same_tensor(ours[k], theirs[k])
        assert_same_tensor(ours[k], sd[k])


def test_mmap_is_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"a": torch.arange(1000.0), "b": torch.arange(1000.0)[10:20]}, path)
    before = path.read_bytes()
    out = ember.load(path, mmap=True)
    assert_same_tensor(out["a"], torch.arange(1000.0))
    out["a"][:5] = -1.0
    assert out["b"].storage_offset() == 10 and path.read_bytes() == before


def test_map_location_forms(tmp_path):
    raw = torch_bytes({"x": torch.arange(3.0)})
    for ml in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s):
        out = ember.load(io.BytesIO(raw), map_location=ml)
        assert out["x"].device == ember.device("cpu")
    meta = ember.load(io.BytesIO(raw), map_location="meta")["x"]
    assert meta.is_meta and meta.shape == (3,)


def test_cuda_checkpoint_without_cuda_names_the_fix():
    raw = _crafted(_FakeTensor(_StorageRef("0", 4, "cuda:0"), 0, (4,), (1,)))
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(io.BytesIO(raw))
    assert ember.load(io.BytesIO(raw), map_location="cpu")["x"].device.type == "cpu"


# --- ember -> torch ------------------------------------------------------------------------------

def test_ember_checkpoint_loads_in_torch_with_weights_only():
    ember.manual_seed(0)
    w = ember.randn(4, 6)
    bf = ember.randn(3, 5).to(ember.bfloat16)
    sd = collections.OrderedDict([("w", w), ("tied", w), ("wt", w.t()), ("slice", w[1:3, 2:]),
                                  ("bf", bf), ("bf_view", bf[:, ::2]),
                                  ("steps", ember.tensor(7)), ("empty", ember.zeros(0, 2))])
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    raw = ember_bytes(sd)
    out = torch_load_strict(raw)
    assert out._metadata == sd._metadata and list(out) == list(sd)
    for k in sd:
        assert_same_tensor(sd[k], out[k])
    ptr = out["w"].untyped_storage().data_ptr()
    assert all(out[k].untyped_storage().data_ptr() == ptr for k in ("tied", "wt", "slice"))
    assert out["w"] is out["tied"]
    assert torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == []


def test_every_dtype_both_ways():
    tensors = {d: torch.arange(6).to(getattr(torch, d)) for d in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
        "float64", "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn",
        "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")}
    mid = ember.load(io.BytesIO(torch_bytes(tensors)))
    back = torch_load_strict(ember_bytes(mid))
    for k, t in tensors.items():
        assert back[k].dtype == t.dtype
        assert back[k].view(torch.uint8).numpy().tobytes() == \
            t.view(torch.uint8).numpy().tobytes(), k


def test_ember_pickle_matches_torch_save_byte_for_byte():
    # The same content gives the same data.pkl as torch.save (memo numbering included),
    # and the same record layout (offsets, alignment, descriptors) in the zip.
    sd = tied_state_dict()
    raw_t = torch_bytes(sd)
    raw_e = ember_bytes(ember.load(io.BytesIO(raw_t)))
    zt, ze = zipfile.ZipFile(io.BytesIO(raw_t)), zipfile.ZipFile(io.BytesIO(raw_e))
    assert zt.read("archive/data.pkl") == ze.read("archive/data.pkl")
    for a, b in zip(zt.infolist(), ze.infolist()):
        assert (a.filename, a.header_offset, a.file_size, a.flag_bits) == \
            (b.filename, b.header_offset, b.file_size, b.flag_bits)
    assert len(raw_t) == len(raw_e)


def test_torch_mmap_and_offset_prediction_accept_ember_files(tmp_path):
    path = tmp_path / "e.pt"
    ember.save({"a": ember.arange(10.0), "b": ember.zeros(0), "c": ember.ones(3, 3)}, path)
    code = (
        "import torch, sys\n"
        "from torch.utils.serialization import config\n"
        "config.load.calculate_storage_offsets = True\n"
        f"x = torch.load({str(path)!r}, mmap=True)\n"
        "assert x['a'].tolist() == list(range(10)) and x['c'].sum() == 9\n"
    )
    env = dict(os.environ, TORCH_SERIALIZATION_DEBUG="1")
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_parameters_and_grad_flags_reach_torch():
    from ember.nn import Parameter

    p = Parameter(ember.ones(2, 2))
    out = torch_load_strict(ember_bytes({"p": p, "leaf": ember.zeros(2, requires_grad=True)}))
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert out["leaf"].requires_grad


def test_adamw_state_continues_training_in_torch():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    data = torch.randn(6, 3)

    def step(m, o):
        o.zero_grad()
        m(data).square().mean().backward()
        o.step()

    for _ in range(3):
        step(model, opt)
    via_ember = ember.load(io.BytesIO(torch_bytes(
        {"model": model.state_dict(), "opt": opt.state_dict()})))
    assert via_ember["opt"]["state"][0]["step"].dim() == 0
    restored = torch_load_strict(ember_bytes(via_ember))
    model2 = torch.nn.Linear(3, 2)
    model2.load_state_dict(restored["model"])
    opt2 = torch.optim.AdamW(model2.parameters(), lr=0.01)
    opt2.load_state_dict(restored["opt"])
    assert opt2.param_groups[0]["lr"] == 0.05
    for _ in range(3):
        step(model, opt)
        step(model2, opt2)
    assert torch.equal(model.weight, model2.weight) and torch.equal(model.bias, model2.bias)


def test_adamw_training_continues_in_the_other_framework():
    torch.manual_seed(0)
    data = torch.randn(6, 3)

    def build(lib):
        return lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 4), lib.nn.Tanh(),
                                 lib.nn.Linear(4, 2))

    def step(model, opt, x):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()

    def same_weights(tm, em):
        for (k, a), b in zip(tm.state_dict().items(), em.state_dict().values()):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=0, atol=1e-5, err_msg=k)

    tm = build(torch)
    topt = torch.optim.AdamW(tm.parameters(), lr=0.05)
    for _ in range(3):
        step(tm, topt, data)
    ck = ember.load(io.BytesIO(torch_bytes({"model": tm.state_dict(), "opt": topt.state_dict()})))
    em = build(ember)
    eopt = ember.optim.AdamW(em.parameters(), lr=0.01)
    em.load_state_dict(ck["model"])
    eopt.load_state_dict(ck["opt"])
    x = ember.tensor(data.numpy())
    for _ in range(3):  # torch -> ember: ember continues where torch left off
        step(tm, topt, data)
        step(em, eopt, x)
    same_weights(tm, em)
    back = torch_load_strict(ember_bytes({"model": em.state_dict(), "opt": eopt.state_dict()}))
    tm2 = build(torch)
    topt2 = torch.optim.AdamW(tm2.parameters())
    tm2.load_state_dict(back["model"])
    topt2.load_state_dict(back["opt"])
    for _ in range(3):  # ember -> torch
        step(tm2, topt2, data)
        step(em, eopt, x)
    same_weights(tm2, em)


def test_meta_tensors_round_trip():
    out = torch_load_strict(ember_bytes({"m": ember.empty(2, 3, device="meta")}))
    assert out["m"].is_meta and out["m"].shape == (2, 3)
    back = ember.load(io.BytesIO(torch_bytes({"m": torch.empty(4, device="meta")})))
    assert back["m"].is_meta and back["m"].shape == (4,)


def test_ember_tensors_pickle_with_shared_storage():
    w = ember.arange(6.0).reshape(2, 3).requires_grad_(True)
    obj = pickle.loads(pickle.dumps({"w": w, "wt": w.t(), "bf": ember.ones(2).bfloat16()}))
    assert storage_of(obj["w"]) is storage_of(obj["wt"]) and obj["w"].requires_grad
    assert obj["wt"].stride() == (1, 3) and obj["bf"].dtype is ember.bfloat16
    assert np.array_equal(obj["wt"].detach().numpy(), w.detach().numpy().T)


def test_save_to_a_path_names_the_archive_folder(tmp_path):
    path = tmp_path / "model.pt"
    ember.save({"x": ember.ones(1)}, path)
    assert zipfile.ZipFile(path).namelist()[0] == "model/data.pkl"
    assert ember.load(str(path))["x"].item() == 1.0


def test_save_refuses_mixed_dtype_views_of_one_storage():
    x = ember.zeros(4)
    with pytest.raises(RuntimeError, match="different types"):
        ember.save([x, x.view(ember.int32)], io.BytesIO())


# --- hostile and broken files ----------------------------------------------------------------

class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _zip_with(data_pkl: bytes, records=None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data_pkl)
        z.writestr("archive/version", b"3\n")
        for name, payload in (records or {}).items():
            z.writestr(f"archive/data/{name}", payload)
    return out.getvalue()


@pytest.mark.parametrize("protocol", [2, 4])
def test_os_system_payload_is_refused_and_never_runs(tmp_path, protocol):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"w": _Payload(marker)}, protocol=protocol)
    for raw in (_zip_with(payload), payload):
        with pytest.raises((UnpicklingError, CheckpointError)) as info:
            ember.load(io.BytesIO(raw))
        assert not marker.exists()
    assert "system" in str(info.value) or "checkpoint" in str(info.value)
    with pytest.raises(UnpicklingError, match="system"):
        ember.load(io.BytesIO(_zip_with(payload)))
    assert not marker.exists()


def test_payload_in_a_legacy_stream_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    raw = torch_bytes({"a": torch.ones(1)}, _use_new_zipfile_serialization=False)
    head = [pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2), pickle.dumps(1001, protocol=2),
            pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2)]
    evil = b"".join(head) + pickle.dumps(_Payload(marker), protocol=2) + raw[len(b"".join(
        head)):]
    with pytest.raises(UnpicklingError, match="system"):
        ember.load(io.BytesIO(evil))
    assert not marker.exists()


class _StorageRef:
    def __init__(self, key, numel, location="cpu"):
        self.key, self.numel, self.location = key, numel, location


class _FakeTensor:
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class _CheckpointPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", torch.FloatStorage, obj.key, obj.location, obj.numel)
        return None


def _crafted(tensor, numel_claimed=4, record=np.arange(4, dtype=np.float32).tobytes()):
    buf = io.BytesIO()
    _CheckpointPickler(buf, protocol=2).dump({"x": tensor})
    return _zip_with(buf.getvalue(), {"0": record})


def test_crafted_checkpoints_load_when_honest():
    ok = _crafted(_FakeTensor(_StorageRef("0", 4), 1, (3,), (1,)))
    assert ember.load(io.BytesIO(ok))["x"].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("tensor, match", [
    (_FakeTensor(_StorageRef("0", 4), 0, (2, 2), (2**40, 1)), "past the end"),
    (_FakeTensor(_StorageRef("0", 4), 3, (2,), (1,)), "past the end"),
    (_FakeTensor(_StorageRef("0", 4), -1, (2,), (1,)), "negative"),
    (_FakeTensor(_StorageRef("0", 4), 0, (2,), (-1,)), "negative"),
    (_FakeTensor(_StorageRef("0", 4), 0, (2, 2), (1,)), "different lengths"),
    (_FakeTensor(_StorageRef("0", 1000), 0, (1000,), (1,)), "claims 4000 bytes"),
    (_FakeTensor(_StorageRef("../../etc/passwd", 4), 0, (2,), (1,)), "bad storage key"),
])
def test_hostile_views_and_storage_sizes_are_refused(tensor, match):
    with pytest.raises(UnpicklingError, match=match):
        ember.load(io.BytesIO(_crafted(tensor)))


@pytest.mark.parametrize("raw, match", [
    (b"\x80\x02cbuiltins\neval\nX\x04\x00\x00\x001+1\x85R.", "eval"),
    (b"\x80\x02cbuiltins\ngetattr\n.", "getattr"),
    (b"\x80\x02cnumpy.core.multiarray\n_reconstruct\n.", "numpy"),
    (b"\x80\x02ccollections\nOrderedDict\n)\x81.", "NEWOBJ"),
    (b"\x80\x02}X\x01\x00\x00\x00a}b.", "BUILD"),
    (b"\x80\x02}X\x01\x00\x00\x00aa.", "APPEND"),
    (b"\x80\x02ctorch\nFloatStorage\n)R.", "storage class"),
    (b"\x80\x02X\xff\xff\xff\x7fabc.", "truncated"),
    (b"\x80\x02(I1\n.", "INT"),
    (b"\x80\x02h\x05.", "memo"),
])
def test_hostile_pickles_are_refused(raw, match):
    with pytest.raises(UnpicklingError, match=match):
        ember.load(io.BytesIO(_zip_with(raw)))


def test_truncated_and_corrupted_files_raise_clearly():
    raw = ember_bytes({"w": ember.arange(100.0)})
    for cut in (10, len(raw) // 2, len(raw) - 30):
        with pytest.raises(CheckpointError):
            ember.load(io.BytesIO(raw[:cut]))
    at = raw.index(ember.arange(100.0).numpy().tobytes()[:16])
    flipped = raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1:]
    with pytest.raises(CheckpointError, match="corrupt"):
        ember.load(io.BytesIO(flipped))
    with pytest.raises(CheckpointError):
        ember.load(io.BytesIO(b""))
    with pytest.raises(CheckpointError):
        ember.load(io.BytesIO(b"hello, not a checkpoint"))


def test_compressed_records_are_refused():
    # Checkpoints store records raw; a compressed one could be a zip bomb.
    raw = torch_bytes({"w": torch.zeros(1000)})
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename), zipfile.ZIP_DEFLATED
                         if "/data/" in info.filename else zipfile.ZIP_STORED)
    with pytest.raises(CheckpointError, match="compressed"):
        ember.load(io.BytesIO(out.getvalue()))


def test_torchscript_archives_are_refused(tmp_path):
    path = tmp_path / "s.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path)
    with pytest.raises(CheckpointError, match="TorchScript"):
        ember.load(path)


def test_allowlisted_classes_load_and_others_name_themselves():
    raw = torch_bytes({"sched": torch.optim.lr_scheduler.StepLR})
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == [
        "torch.optim.lr_scheduler.StepLR"]
    with pytest.raises(UnpicklingError, match="torch.optim.lr_scheduler.StepLR"):
        ember.load(io.BytesIO(raw))

    class Marker:
        pass

    with ember.serialization.safe_globals([(Marker, "torch.optim.lr_scheduler.StepLR")]):
        assert ember.load(io.BytesIO(raw))["sched"] is Marker
    with pytest.raises(ValueError):
        ember.serialization.add_safe_globals([os.system])


def test_explicit_pickle_module_is_refused():
    with pytest.raises(RuntimeError, match="pickle_module"):
        ember.load(io.BytesIO(ember_bytes(1)), pickle_module=pickle)


def test_fuzzed_pickles_only_ever_raise_checkpoint_errors():
    raw = torch_bytes(tied_state_dict())
    z = zipfile.ZipFile(io.BytesIO(raw))
    pkl = bytearray(z.read("archive/data.pkl"))
    records = {n.split("/")[-1]: z.read(n) for n in z.namelist() if "/data/" in n}
    rng = np.random.default_rng(0)
    for _ in range(150):
        mutated = bytearray(pkl)
        for i in rng.integers(0, len(pkl), size=int(rng.integers(1, 4))):
            mutated[i] = int(rng.integers(0, 256))
        try:
            ember.load(io.BytesIO(_zip_with(bytes(mutated), records)))
        except (UnpicklingError, CheckpointError):
            pass



def test_tensor_attributes_load_but_never_reach_internals():
    t = torch.ones(2)
    t.note = "kept"
    assert ember.load(io.BytesIO(torch_bytes({"t": t})))["t"].note == "kept"
    bad = torch.ones(2)
    bad._storage = 5  # would overwrite an ember tensor's internals
    with pytest.raises(UnpicklingError, match="_storage"):
        ember.load(io.BytesIO(torch_bytes({"t": bad})))


# --- reliability: files that must be refused cleanly (more in tests/serialization/) ----------

def test_duplicate_record_names_are_refused():
    # torch reads the first of two same-named records, zipfile the last: a scanner and a
    # loader could see different pickles. Refuse the file.
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w") as z:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate it writes
        z.writestr("archive/data.pkl", pickle.dumps(1, protocol=2))
        z.writestr("archive/version", b"3\n")
        z.writestr("archive/data.pkl", pickle.dumps(2, protocol=2))
    with pytest.raises(CheckpointError, match="duplicate records named 'archive/data.pkl'"):
        ember.load(io.BytesIO(out.getvalue()))


def test_compressed_data_pkl_is_refused():
    # torch.save stores data.pkl raw; a deflated one could inflate to gigabytes.
    raw = torch_bytes({"w": torch.zeros(3)})
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename), zipfile.ZIP_DEFLATED
                         if info.filename.endswith("data.pkl") else zipfile.ZIP_STORED)
    with pytest.raises(CheckpointError, match="data.pkl is compressed"):
        ember.load(io.BytesIO(out.getvalue()))


def test_mmap_of_a_file_that_is_not_a_zip_raises_like_torch(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used") as theirs:
        torch.load(path, mmap=True)
    with pytest.raises(CheckpointError, match="mmap can only be used") as ours:
        ember.load(path, mmap=True)
    assert isinstance(ours.value, type(theirs.value))


def test_refusals_are_pickle_unpickling_errors_like_torchs():
    raw = torch_bytes({"sched": torch.optim.lr_scheduler.StepLR})
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(io.BytesIO(raw))
    with pytest.raises(UnpicklingError) as ours:
        ember.load(io.BytesIO(raw))
    assert isinstance(ours.value, type(theirs.value))
    assert UnpicklingError.__module__ == "ember.serialization"


def test_module_constructors_never_run_from_a_file():
    # Pickle rebuilds a module as NEWOBJ + BUILD; a file calling the class instead would
    # run its constructor with sizes of its choosing (Linear(20000, 20000) is 1.5 GiB).
    evil = (b"\x80\x02cember.nn.modules.linear\nLinear\nK\x03K\x05\x86R.")
    with pytest.raises(UnpicklingError, match="constructor of ember.nn.modules.linear.Linear"):
        ember.load(io.BytesIO(_zip_with(evil)), weights_only=False)


def test_whole_model_is_rebuilt_through_setstate_not_init(tmp_path):
    class Counted(ember.nn.Module):
        inits = 0

        def __init__(self):
            super().__init__()
            type(self).inits += 1
            self.fc = ember.nn.Linear(2, 3)

        def __setstate__(self, state):
            super().__setstate__(state)
            self.restored = True

    model = Counted()
    ember.save(model, tmp_path / "m.pt")
    with ember.serialization.safe_globals([Counted]):
        back = ember.load(tmp_path / "m.pt", weights_only=False)
    assert Counted.inits == 1 and back.restored is True
    assert ember.equal(back.fc.weight, model.fc.weight) and back.fc.weight.shape == (3, 2)


def test_error_messages_name_hostile_values_briefly():
    key = "k" * 100_000
    buf = io.BytesIO()
    _CheckpointPickler(buf, protocol=2).dump({"x": _FakeTensor(_StorageRef(key, 4), 0, (4,),
                                                               (1,))})
    with pytest.raises(UnpicklingError, match="bad storage key 'kkk") as info:
        ember.load(io.BytesIO(_zip_with(buf.getvalue())))
    assert len(str(info.value)) < 200


def test_neg_and_conj_views_still_load_as_in_torch():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    saved = {"conj": z.conj(), "neg": z.clone().conj().imag, "plain": z}
    assert saved["conj"].is_conj() and saved["neg"].is_neg()
    back = ember.load(io.BytesIO(torch_bytes(saved)))
    for name, t in saved.items():
        assert np.array_equal(back[name].numpy(), t.resolve_conj().resolve_neg().numpy())
