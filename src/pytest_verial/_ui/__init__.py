"""The pages for a browser: a stored run's report with its trend, the index of stored runs,
two runs side by side (served by ``verial serve`` and ``verial view``, written by
``verial html``). HTML lives here, beside its callers; the store holds SQL only."""
