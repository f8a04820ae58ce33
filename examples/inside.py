"""Seeing inside ember: a graph drawn, a view explained, memory per dtype, a profile, a log.

1. The course's graph (a=2, b=3; c=a*b; d=a+b; e=c*d; L=e**2) drawn with each node's
   value and gradient: dL/da = 1260, dL/db = 960 (a PNG, through Graphviz or matplotlib).
2. A transposed matrix explained: its strides, which storage elements it reads, and why
   `.view(-1)` fails on it.
3. What a model costs in memory per dtype, counted on the meta device: a 7B-parameter
   stand-in (28 GB in float32, 14 GB in bf16, 7 GB in int8, 3.5 GB in 4 bits) and a small
   MLP with its optimizer and activations.
4. One training step under the profiler: its table and a Chrome trace.
5. A short training run logged for TensorBoard (`tensorboard --logdir <out>/runs`).
"""

import argparse
import os

import ember
from ember import nn
from ember.utils import explain_tensor
from ember.utils.memory import summary
from ember.utils.viz import make_dot


def draw_the_course_graph(out: str) -> None:
    a = ember.tensor(2.0, requires_grad=True)
    b = ember.tensor(3.0, requires_grad=True)
    c = a * b
    d = a + b
    e = c * d
    loss = e**2
    for t in (c, d, e, loss):
        t.retain_grad()  # keep the intermediate gradients, to print them on the nodes
    loss.backward()
    dot = make_dot(loss, params={"a": a, "b": b, "c": c, "d": d, "e": e, "L": loss},
                   show_values=True)
    path = dot.render(os.path.join(out, "course_graph"), format="png")
    print(f"a.grad = {a.grad.item():g}, b.grad = {b.grad.item():g}")
    print(f"the graph ({len(dot.nodes)} nodes, {len(dot.edges)} edges) is drawn in {path}")


def explain_a_view() -> None:
    x = ember.arange(6.0).view(2, 3)
    print(explain_tensor(x.t()))


def memory_per_dtype() -> None:
    # 70,000 x 100,000 weights: 7e9 parameters, on meta, so nothing is allocated
    seven_b = nn.Linear(70_000, 100_000, bias=False, device="meta")
    summary(seven_b, optimizer=ember.optim.Adam)
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    summary(mlp, input_size=(64, 784), optimizer=ember.optim.Adam, depth=1)


def a_model_and_data():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    x = ember.randn(256, 20)
    y = (x[:, :3] * ember.tensor([1.0, -1.0, 0.5])).argmax(1)  # a rule to learn
    return model, x, y


def profile_a_step(out: str) -> None:
    from ember.profiler import ProfilerActivity, profile, record_function

    model, x, y = a_model_and_data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("train_step"):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    path = os.path.join(out, "train_step_trace.json")
    prof.export_chrome_trace(path)
    print(f"Chrome trace (open in chrome://tracing or ui.perfetto.dev): {path}")


def log_for_tensorboard(out: str, steps: int) -> None:
    try:
        from ember.utils.tensorboard import SummaryWriter
    except ModuleNotFoundError:
        print('(no tensorboard package: pip install -e ".[tensorboard]" to write a log)')
        return
    model, x, y = a_model_and_data()
    opt = ember.optim.SGD(model.parameters(), lr=0.5)
    log_dir = os.path.join(out, "runs", "inside")
    with SummaryWriter(log_dir) as writer:
        writer.add_graph(model, x)
        writer.add_text("about", "a small MLP learning `argmax(x[:3] * [1, -1, 0.5])`")
        for step in range(steps):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            accuracy = (logits.argmax(1) == y).float().mean()
            writer.add_scalar("loss", loss.item(), step)
            writer.add_scalars("train", {"loss": loss.item(), "accuracy": accuracy.item()},
                               step)
            if step % 10 == 0:
                writer.add_histogram("first_layer/weight", model[0].weight, step)
        writer.add_hparams({"lr": 0.5, "hidden": 64}, {"final/loss": loss.item()},
                           run_name="hparams")
    print(f"final loss {loss.item():.4f}, accuracy {accuracy.item():.2f}; "
          f"logged to {log_dir} (tensorboard --logdir {os.path.join(out, 'runs')})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    p.add_argument("--steps", type=int, default=50, help="training steps logged")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for title, run in [("1. the course graph", lambda: draw_the_course_graph(args.out)),
                       ("2. a view explained", explain_a_view),
                       ("3. memory per dtype", memory_per_dtype),
                       ("4. a profiled training step", lambda: profile_a_step(args.out)),
                       ("5. a TensorBoard log", lambda: log_for_tensorboard(args.out,
                                                                           args.steps))]:
        print(f"\n== {title} ==")
        run()


if __name__ == "__main__":
    main()
