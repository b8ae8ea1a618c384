# A tool kept beside the part with its own environment; nothing in new_part imports it.
import sys

print(sys.argv)
