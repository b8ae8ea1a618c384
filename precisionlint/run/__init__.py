"""A run over many files: which files (discover), with which settings (config), in how many processes
(parallel, fork_pool), with which results already known (cache), shown how (progress), narrowed to what
(baseline, changed_lines); runner ties them together for `check`."""
