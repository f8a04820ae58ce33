"""The course's first graph, by hand and by ember: a=2, b=3; c=a*b; d=a+b; e=c*d; L=e**2.

Prints each node's value, then each gradient as the chain rule produces it, and
checks the result against what `backward()` deposits on the leaves.
"""

import ember


def main() -> None:
    a = ember.tensor(2.0, requires_grad=True)
    b = ember.tensor(3.0, requires_grad=True)
    c = a * b
    d = a + b
    e = c * d
    loss = e**2
    print("forward")
    for name, t in [("a", a), ("b", b), ("c = a*b", c), ("d = a+b", d), ("e = c*d", e),
                    ("L = e**2", loss)]:
        print(f"  {name:<9} = {t.item():g}")

    print("backward, one chain-rule step at a time")
    dL_de = 2 * e.item()
    dL_dc = dL_de * d.item()
    dL_dd = dL_de * c.item()
    dL_da = dL_dc * b.item() + dL_dd * 1.0  # a reaches L through c and through d
    dL_db = dL_dc * a.item() + dL_dd * 1.0
    for name, v in [("dL/de = 2e", dL_de), ("dL/dc = dL/de * d", dL_dc),
                    ("dL/dd = dL/de * c", dL_dd), ("dL/da = dL/dc*b + dL/dd", dL_da),
                    ("dL/db = dL/dc*a + dL/dd", dL_db)]:
        print(f"  {name:<24} = {v:g}")

    loss.backward()
    print(f"ember: a.grad = {a.grad.item():g}, b.grad = {b.grad.item():g}")
    print("the graph ember recorded:", loss.grad_fn.name(), "<-",
          [fn.name() for fn, _ in loss.grad_fn.next_functions if fn is not None])
    assert (a.grad.item(), b.grad.item()) == (dL_da, dL_db) == (1260.0, 960.0)


if __name__ == "__main__":
    main()
