"""Graph nodes, one per file; the file name is the node name."""
