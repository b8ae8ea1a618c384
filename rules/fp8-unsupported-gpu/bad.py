from accelerate import Accelerator
from lightning import Fabric

fabric = Fabric(precision="transformer-engine")
accelerator = Accelerator(mixed_precision="fp8")
