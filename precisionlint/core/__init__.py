"""The lowest layer: the types every other layer speaks (findings, documents, settings, records), reading a file
within limits, and writing to the standard streams. It imports nothing else of precisionlint."""
