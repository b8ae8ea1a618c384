# The part's model imports its vendored package: that package's requirements (Lightning 1.8) are installed
# to run the part, and the part itself declares no Lightning.
from oldvision.encoder import Encoder

__all__ = ["Encoder"]
