"""Fixes: the text edits (edits), plan them (plan), check that each keeps the file parseable and its findings gone
(verify), apply them pass by pass (apply), write the result once and safely (write); setting edits and --add-noqa's
directives (noqa) have their own modules."""
