"""The command line: the console script (entry), check's option table and its click-free parser (check_options),
the rules and GPUs of each configuration (rule_selection), check's body (check_command), the click commands
(commands) and advise's (advise_command)."""
