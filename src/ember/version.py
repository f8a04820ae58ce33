"""ember.version: build facts programs print (`torch.version.cuda` is None on a CPU build)."""

__version__ = "0.1.0"
cuda = None
hip = None
git_version = "unknown"
debug = False
