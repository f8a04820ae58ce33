"""DistributedDataParallel on 2 local processes (the checks run inside the program)."""

import pytest

pytest.importorskip("mpi4py")


def test_ddp_digits_matches_single_process_training_and_overlaps_buckets(launch, tmp_path):
    out = launch("ddp_digits.py", 2, str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(out.stdout.split("\n"))[1:] == ["rank 0 ok", "rank 1 ok"]


def test_sync_batchnorm_over_two_ranks_is_batchnorm_over_the_whole_batch(launch):
    out = launch("sync_batchnorm.py", 2)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(out.stdout.split("\n"))[1:] == ["rank 0 ok", "rank 1 ok"]
