"""An entry point whose module fails to import: optreg must warn and keep every other component."""

raise ImportError("optreg_testplugin.broken is broken on purpose")
