"""(to be filled)"""

TENSOR_METHODS: dict = {}

__all__: list = []
