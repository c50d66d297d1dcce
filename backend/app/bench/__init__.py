"""Speed benchmarks (``rca bench``): alternatives side by side in one process, same inputs."""
