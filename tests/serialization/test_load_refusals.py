"""What `ember.load` raises for bytes that are no checkpoint, against torch.load: the same
exception types (EOFError for an empty file, UnpicklingError for bytes that are no pickle,
RuntimeError for a whole pickle of something else or a broken ZIP), so the `except`
clauses written for torch catch ember's refusals too. ember's messages are its own (they
say what the file is); each refusal is also an `ember.serialization.CheckpointError`."""

import io
import os
import pickle

import pytest
import torch

import ember
from ember.serialization import CheckpointError


def _zip_half() -> bytes:
    buf = io.BytesIO()
    torch.save({"a": torch.ones(2)}, buf)
    return buf.getvalue()[: len(buf.getvalue()) // 2]


CASES = {
    "empty": b"",
    "text": b"hello world\n",
    "zeros": b"\0" * 64,
    "truncated pickle": b"\x80\x04garbage",
    "pickle of a list": pickle.dumps([1, 2], protocol=2),
    "pickle of an int": pickle.dumps(3),
    "half a zip": _zip_half(),
}


def _raised(load, data: bytes, **kwargs) -> BaseException:
    with pytest.raises(Exception) as info:  # noqa: PT011 (the type is what is compared)
        load(io.BytesIO(data), **kwargs)
    return info.value


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", list(CASES))
def test_refusal_is_an_instance_of_what_torch_raises(name, weights_only):
    theirs = type(_raised(torch.load, CASES[name], weights_only=weights_only))
    ours = _raised(ember.load, CASES[name], weights_only=weights_only)
    if not issubclass(theirs, (EOFError, RuntimeError, pickle.UnpicklingError)):
        # torch's weights-only reader fails inside itself on some bytes (KeyError on the
        # text, IndexError on a lone protocol byte); its full reader names the class
        theirs = type(_raised(torch.load, CASES[name], weights_only=False))
    assert isinstance(ours, theirs), (name, theirs, type(ours))
    assert isinstance(ours, CheckpointError)


def test_an_empty_file_is_an_eof_error_caught_as_torch_users_catch_it(tmp_path):
    path = tmp_path / "half_written.pt"
    path.write_bytes(b"")
    for load in (torch.load, ember.load):
        try:
            load(os.fspath(path))
        except EOFError:
            caught = True
        else:
            caught = False
        assert caught, load


def test_the_messages_say_what_the_bytes_are():
    assert "empty" in str(_raised(ember.load, CASES["empty"]))
    assert "neither a ZIP header" in str(_raised(ember.load, CASES["text"]))
    assert "invalid magic number" in str(_raised(ember.load, CASES["pickle of a list"]))
