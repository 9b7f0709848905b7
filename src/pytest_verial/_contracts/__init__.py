"""The contracts between the engine and what it runs: a check (:mod:`.check`) and the sandbox
its sources read (:mod:`.sandbox`). They sit below both the engine and the implementations
(checks, sources), so neither reaches up or sideways into the other."""
