"""Optimizer tables awaiting their move into the dialect packages: every module here defines `ROWS`, a list of
`Entry` rows, read by the registry after the built-in dialects' rows."""
