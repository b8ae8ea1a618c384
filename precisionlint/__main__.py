"""`python -m precisionlint`: the console script's entry point (precisionlint.cli.entry.program), whose own import may
meet a memory limit (`ulimit -v`) too: one line and exit code 2, as anywhere later, not a traceback."""

try:
    from precisionlint.cli.entry import program
except MemoryError:
    import os

    try:
        os.write(2, b"precisionlint: error: out of memory: the process may not use enough memory to start (a "
                    b"memory limit such as `ulimit -v`?); allow more memory\n")
    finally:
        os._exit(2)

if __name__ == "__main__":
    program()
