"""Cortex: persistent, typed memory for AI coding assistants.

Import nothing heavy here: every hook and command imports this package first.
"""

__version__ = "0.1.0"
