"""ember.nn.functional."""
