"""Readers of other libraries' config files, one package per library, each registered as a config format in
optreg.config.formats.BUILTIN (not named `formats`: `optreg.formats` is the public function listing them)."""
