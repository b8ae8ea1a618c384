"""One file's bytes to its findings: read -> prefilter -> decode (precisionlint.sources.decoding) -> load -> rules
-> suppressions.

The engine never prints, and one file's failure becomes that file's finding. Its modules, by job:

  options     what it is given: SourceFile (a file to check), EngineOptions (rules, GPUs, limits), ContextKey
  reading     a file's bytes within the run's limits (regular files only, the size checked before reading)
  prefilter   whether the bytes can hold a finding at all, before they are decoded
  gate        which passes read a Python file: its tree at all, and the script rules' model
  check       check_source / check_bytes / run_rules: load, run the rules, apply suppressions; limits as findings
  guard       the CPU-time and recursion limits around one file's analysis
  results     FileResult, the findings the engine makes itself, release and relocate of a result
  identity    what one analysis depends on (digest, format, name, folder words): shared analyses, cache keys
  suppress    inline directives in comments, their own checks, --add-noqa

Many files at once (order, a pool of workers, the cache) are the run's: precisionlint.run.parallel.check_all.
"""
