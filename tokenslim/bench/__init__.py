"""Benchmark helpers: shared datasets, metrics, ablation runner, tables and plots."""
