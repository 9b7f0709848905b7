"""I/O helpers shared by the sources and the libraries they use (:mod:`pytest_verial.fhir`,
the judge's file reads): reads confined to a task folder, JSON and text files read with one
error each, deadlines and read-ahead of live sources.

Below every package that reads a sandbox and importing none of them, so no two packages import
each other (issue 21).
"""
