"""Pure functions over plain records: no I/O, no clocks, no globals. Unit-tested in isolation."""
