"""advise: the decision tree for a GPU and a model (advisor) and the measurements behind it (probe)."""
