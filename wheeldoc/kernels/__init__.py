"""`wheeldoc kernels`: fatbin and cubin readers, the CUDA driver's load model, the WD3xx rules,
the kernel facts and their report (records and tables the doctor reuses), and the verb.
"""
