"""Numbered schema migrations, ``NNNN_name.sql``; ``loader`` reads and orders them."""
