"""Validated domain tables (GPUs, CUDA and PTX, drivers, torch, the ABI analyzer's system tables,
tool environment variables), each rebuilt by a script in scripts/ with its provenance.
"""
