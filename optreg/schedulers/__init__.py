"""Schedules as pure closed forms value(step): the engine, the torch adapter and each framework's vocabulary.

Nothing is imported here: `optreg.schedulers.engine` is plain Python, `adapter` needs torch.
"""
