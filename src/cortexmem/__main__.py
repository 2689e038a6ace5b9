"""`python -m cortexmem` is the same as `cortex`."""

from cortexmem.cli.app import main

main()
