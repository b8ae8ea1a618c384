"""Fixes: plan them (plan), check that each keeps the file parseable and its findings gone (verify), apply them
pass by pass (apply), write the result once and safely (write); setting edits and notebook cells have their own
modules."""
