"""The implementation files behind `ember.nn.functional` (one per family)."""
