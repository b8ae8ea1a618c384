# A keyword of a framework call followed by a banner of comment characters, and no `=`: found at once, not in
# minutes (the banner once made the search for the keyword's `=` exponential).
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    print(accelerator)
    ############################################################################################################
    # SETUP precision                                                                                           #
    ############################################################################################################
    return accelerator
