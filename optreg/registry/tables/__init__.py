"""Registry tables: every module here defines `ROWS`, a list of `Entry` rows, read on first lookup."""
