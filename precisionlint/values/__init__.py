"""The value layer: which values an expression of a script may take, and where each one was written.

A rule that judges a value (a precision string, an autocast dtype) asks for the candidates of the expression a
framework reads (`Trainer(precision=args.precision)`) and gets each value with its provenance: the literal the
user wrote (an argparse default, one arm of a conditional, a helper's return, a dataclass field), the kind of
place it was written, the conditions under which it is the value, and whether it is the value on every path.
Findings are then reported where the value was written, with the framework's call as a related location.

    candidate.py   Candidate, Candidates and the kinds of provenance
    candidates.py  the Finder: expressions -> candidates (names, arms, tables, helpers, parameters, `self.x`)
    declared.py    what a script declares for its launch: argparse options, click options, dataclass fields
                   (the HfArgumentParser pattern), environment defaults
    launched.py    the values the project's launch lines pass to those options (`python train.py --precision
                   bf16` in a shell script): a default that every launch line overrides gives way to them
    settings.py    framework settings reached through values: a Setting per candidate, with its Origin

Unknown stays unknown: a candidate set says whether it is complete, and a rule that is unsure stays silent or
lowers its severity.

A candidate may also be a key of a config file the script loads: a reader of configs appends a function to
`Finder.config_readers` (document_finder(document) gives the file's Finder); it is asked about a subscript or
attribute the layer cannot resolve itself (`cfg["trainer"]["precision"]`, `cfg.trainer.precision`) and answers
Candidates of kind CONFIG_KEY with `path`, `key_path` and `span` set and `node` None. Such a value is reported at
the framework's keyword in the script, with the config file's key as the related location.
"""
