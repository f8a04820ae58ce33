"""Speed and memory of ember next to PyTorch, measured in one run (`make bench`)."""
