"""Adapters for the assistants Cortex serves; the core knows none of them."""
