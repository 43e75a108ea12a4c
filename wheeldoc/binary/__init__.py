"""Readers several families share: ELF headers, symbols and versions, C++ demangling, and one
member view over wheels, directories, installed distributions and local indexes.
"""
