"""The command line: the console script (entry), its fast path for a plain check (check_command), the click
commands (commands) and advise's (advise_command)."""
