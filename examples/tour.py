"""A short printed tour of the ember Tensor: one flat block of memory, read through metadata.

Run it with `.venv/bin/python examples/tour.py` (after `make demo` has made `.venv`). Every
line it prints is what PyTorch would print for the same code, with `ember` in place of `torch`.
"""

import ember


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * (70 - len(title)))


def main() -> None:
    section("a tensor is shape + dtype + device over flat storage")
    x = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    print(x)
    print("shape:", x.shape, " dtype:", x.dtype, " device:", x.device)
    print("stride:", x.stride(), " (elements to step along each dim)")
    print("storage holds", x.untyped_storage().nbytes(), "bytes")

    section("views share that storage: no copy")
    col = x[:, 1]
    t = x.t()
    print("x[:, 1]   ->", col, " stride", col.stride(), " offset", col.storage_offset())
    print("x.t()     -> shape", tuple(t.shape), " stride", t.stride())
    x[0, 1] = 100.0
    print("after x[0, 1] = 100:  x[:, 1] =", col.tolist(), " x.t()[1, 0] =", t[1, 0].item())
    same = col.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    print("same storage:", same)

    section("view needs compatible strides; reshape copies instead")
    print("x.t().is_contiguous():", t.is_contiguous())
    try:
        t.view(12)
    except RuntimeError as err:
        print("x.t().view(12) raised RuntimeError:\n   ", err)
    flat = t.reshape(12)
    copied = flat.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    print("x.t().reshape(12) =", flat.tolist())
    print("reshape copied:", copied, "| x.reshape(12) copied:",
          x.reshape(12).untyped_storage().data_ptr() != x.untyped_storage().data_ptr())

    section("bytes = numel x element_size, for each dtype")
    dtypes = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
              ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64,
              ember.complex128]
    for dtype in dtypes:
        y = ember.zeros(3, 4, dtype=dtype)
        print(f"{str(dtype):18} {y.numel()} x {y.element_size():2} = {y.nbytes:3} bytes")

    section("the meta device: shapes and sizes, no memory")
    big = ember.empty(100_000, 100_000, device="meta")
    print(big)
    print(f"{big.nbytes / 1e9:.0f} GB described, 0 bytes allocated")


if __name__ == "__main__":
    main()
