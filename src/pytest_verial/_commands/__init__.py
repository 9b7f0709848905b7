"""Every ``verial`` subcommand, one module each, registered in :data:`COMMANDS`.

A command module has ``configure(parser)``, which adds its arguments, and ``run(args)``, which
returns the exit status; :mod:`pytest_verial.cli` builds the parser from the table, in its
order (the order ``verial --help`` lists them). The modules sit above
:mod:`pytest_verial.reporting`, :mod:`pytest_verial.store` and :mod:`pytest_verial.service`,
which never import them; heavy parts (SQLAlchemy, the service, the judge client) are imported
inside ``run``.
"""

from __future__ import annotations

#: name -> (module in this package, the one-line help ``verial --help`` shows)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "check benchmark files and list every problem"),
    "schema": ("schema", "print a JSON Schema"),
    "report": ("report", "print the summary of a JSON report"),
    "feedback": ("feedback", "print a failed or partial task's retry feedback"),
    "init": (
        "init",
        "write a working benchmark, a sample run folder and the pytest configuration, so "
        "that the next pytest scores them (never overwrites a file)",
    ),
    "hl7-capture": (
        "hl7_capture",
        "listen for HL7 v2 over MLLP, ACK and record each message (events.jsonl)",
    ),
    "show": (
        "show",
        "print the benchmark runs, one task run, or one criterion run of a JSON report or a "
        "stored session or run",
    ),
    "html": (
        "html",
        "write the self-contained HTML report of a JSON report or a stored session or run "
        "(with BASE: the compare view), or --index: a page of the stored runs with trend plots",
    ),
    "compare": (
        "compare",
        "compare two reports, stored sessions (latest~1 latest) or stored runs: score and "
        "verdict changes; exit 1 on a regression",
    ),
    "merge": (
        "merge",
        "merge the JSON reports of --verial-shard K/N runs into one (refuses gaps and overlaps)",
    ),
    "import": (
        "import_reports",
        "store JSON reports in the results store (CI artifacts, shards, merged, recovered)",
    ),
    "export": ("export", "write a stored session's (or one run's) JSON report"),
    "runs": (
        "runs",
        "list the stored benchmark runs (--sessions: the sessions), newest first, with their "
        "status (`runs delete REF...` deletes)",
    ),
    "prune": ("prune", "delete old stored runs: --keep N per benchmark, or --older-than DAYS"),
    "trend": (
        "trend",
        "a benchmark's score per stored run over time, per axis and per task (a sparkline)",
    ),
    "judge": (
        "judge",
        "judge calibrate LABELS: the judge's agreement, kappa and macro F1 on human labels",
    ),
    "convert": (
        "convert",
        "convert HealthBench-style examples (JSONL) into a benchmark file scored by points",
    ),
    "serve": (
        "serve",
        "serve verification over HTTP (POST /v1/verify-task; needs the [serve] extra)",
    ),
    "keys": ("keys", "create, list or revoke the service's API keys"),
    "view": (
        "view",
        "the stored runs' pages in a browser, read-only on 127.0.0.1, no keys (needs the "
        "[serve] extra)",
    ),
}
