"""Readers of other libraries' config files, one package per library, each registered as a config format in
optreg.config.formats.BUILTIN (not named `formats`: `optreg.formats` is the public function listing them).

A reader that translates a file into optreg's own form reads it with `optreg.config.translate.read_translated`,
which keeps the map from optreg's paths to the file's: every error and note, reading or planning, is at the file's
path (optreg's `scheduler.x` is NeMo's `model.optim.sched.x`)."""
