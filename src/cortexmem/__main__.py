"""`python -m cortexmem` is the same as `cortex`."""

from cortexmem.cli import main

main()
