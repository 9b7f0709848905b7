"""``verial`` subcommands that read both reports and the results store (wired by
:mod:`pytest_verial.cli`). Above :mod:`pytest_verial.reporting` and :mod:`pytest_verial.store`,
which never import them.
"""
