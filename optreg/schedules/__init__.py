"""Schedules as pure closed forms value(step): the engine and the torch adapter; each dialect's vocabulary lives in
`optreg.dialects.<name>.schedules`.

Nothing is imported here: `optreg.schedules.engine` is plain Python, `adapter` needs torch.
"""
