from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", precision="bf16-true")
