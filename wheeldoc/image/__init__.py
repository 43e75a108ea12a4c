"""Container images read without running or extracting them: docker save and OCI layouts,
layer tar headers, and the merged filesystem the environment readers walk.
"""
