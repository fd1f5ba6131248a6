"""The seat consoles: their flows as declared prompts, their state, and staff access.

:mod:`tablectl.console.prompts` declares every prompt (the keys it takes, the phases it
may stand in, the phase triggers it may fire), :mod:`tablectl.console.model` the data a
console holds, :mod:`tablectl.console.staff` the staff PIN. :class:`tablectl.table.Table`
is the glue that runs them against the rules core and the link.
"""
