"""`wheeldoc doctor` and `wheeldoc image`: every family composed over one environment or image
through its public functions, a verdict with its root cause, the two verbs and their view.
"""
