"""The session's configuration, one module per part: what can be set (:mod:`.options`, every
``--verial-*`` option and ``verial_*`` ini key declared once), the run folders and their
``run.yaml`` (:mod:`.run_folder`), the sources a run folder may name (:mod:`.source_table`),
reading the options into one frozen object (:mod:`.reading` -> :mod:`.settings`), which task
runs this session scores (:mod:`.selection`), the session's state on ``config.stash``
(:mod:`.stash`) and the commands' ``--store`` option (:mod:`.store_option`). Nothing is imported
here: the low parts (the declarations, the run folder) are imported by sources and the store
without pulling in the session's reading of them.
"""
