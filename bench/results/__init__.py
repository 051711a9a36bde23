"""Everything about a results folder, and the only code that knows its layout.

- :mod:`bench.results.layout`: where each file lives (the only module that spells the names).
- :mod:`bench.results.store`: writing a cell atomically, sealing and checking it, quarantine.
- :mod:`bench.results.record`: the typed cell record every reader uses, validated on read.
- :mod:`bench.results.locks`: one lock file per cell being computed.
- :mod:`bench.results.corpus`: the checksummed caches of privatized and rewritten corpora.
- :mod:`bench.results.provenance`: who computed a cell, where, when, on which numeric platform.
- :mod:`bench.results.mirror`: the MLflow mirror of the cell files.
"""
