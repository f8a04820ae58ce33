"""Train the digits classifier (examples/digits.py) with DistributedDataParallel on 2 processes.

    .venv/bin/python examples/ddp.py          # trains on 1 process, then 2, prints the speed-up
    .venv/bin/python examples/ddp.py --cnn    # the small CNN (more compute per step)
    .venv/bin/python -m ember.distributed.run --nproc-per-node 2 examples/ddp.py --worker

Needs the `dist` extra (mpi4py and an MPI) besides `examples`. Run plainly, the script starts
itself through `ember.distributed.run` twice, on 1 and on 2 processes, with the same global
batch (each of the 2 ranks takes half of it), and compares their training times. On the
digits MLP a step is so small that the all-reduce and Python overhead weigh as much as the
arithmetic, so expect a modest speed-up at best; the CNN shows more of one.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def worker(args) -> None:
    from digits import CNN, MLP, accuracy, load_data

    import ember
    import ember.distributed as dist
    import ember.nn.functional as F
    from ember.nn.parallel import DistributedDataParallel as DDP
    from ember.utils.data import DataLoader, DistributedSampler, TensorDataset

    dist.init_process_group("gloo")  # runs on MPI; unmodified PyTorch scripts say "gloo"
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    data = TensorDataset(ember.from_numpy(x_train), ember.from_numpy(y_train))
    sampler = DistributedSampler(data, shuffle=True, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch_size // world, sampler=sampler)
    test = DataLoader(TensorDataset(ember.from_numpy(x_test), ember.from_numpy(y_test)),
                      batch_size=256)
    model = DDP(CNN() if args.cnn else MLP())
    opt = ember.optim.Adam(model.parameters(), lr=args.lr)
    dist.barrier()
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.barrier()
    elapsed = time.perf_counter() - start
    if rank == 0:
        acc = accuracy(model.module, test)
        print(f"world {world}: {args.epochs} epochs in {elapsed:.2f} s, "
              f"test accuracy {acc:.2%}", flush=True)
        if args.save:
            ember.save(model.module.state_dict(), args.save)
    dist.barrier()
    if args.save:  # saved on rank 0, loaded on every rank
        model.module.load_state_dict(ember.load(args.save))
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cnn", action="store_true")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64, help="global batch size")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="checkpoint path (written by rank 0)")
    parser.add_argument("--worker", action="store_true", help="run as one rank (launched)")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    times = {}
    for n in (1, 2):
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(n),
               os.path.abspath(__file__), "--worker", *sys.argv[1:]]
        out = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(out.stdout)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit(out.returncode)
        times[n] = float(re.search(r"in ([\d.]+) s", out.stdout).group(1))
    print(f"speed-up on 2 processes: {times[1] / times[2]:.2f}x "
          f"({times[1]:.2f} s -> {times[2]:.2f} s, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
